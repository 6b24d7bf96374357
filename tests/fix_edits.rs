//! The property of `pins fix --write`'s edit computation, shared by the proptest in `pins_fix.rs` and the
//! fuzz target `fuzz/fuzz_targets/fix_edits.rs` (which includes this file by path): changes planned on one
//! text and made in another either are refused or change only the planned literals, each where its whole
//! line still reads as planned; made in the text they were planned on, they are never refused.

use alsim::pins::fix::{Replacement, edit, locate};

/// Plans a change to `to` of each `(start, end, to)` of `original` that is a literal of it (others are
/// skipped), makes them in `now`, and panics if the property fails.
pub fn check(original: &str, spans: &[(usize, usize, String)], now: &str) {
    let changes: Vec<Replacement> = spans
        .iter()
        .filter_map(|(start, end, to)| Replacement::new("f".into(), original, (*start, *end), to.clone(), vec![]).ok())
        .collect();
    let changes: Vec<&Replacement> = changes.iter().collect();
    let placed = match locate(now, &changes) {
        Ok(placed) => placed,
        Err(_) => {
            assert!(edit(now, &changes).is_err());
            let mut planned: Vec<_> = changes.iter().map(|c| (c.span, c.to.as_str())).collect();
            planned.sort();
            planned.dedup();
            let disjoint = planned.windows(2).all(|w| w[0].0.1 <= w[1].0.0);
            assert!(now != original || !disjoint, "refused in the text it was planned on: {original:?} {planned:?}");
            return;
        }
    };
    let mut expected = String::new();
    let mut at = 0;
    for p in &placed {
        assert!(at <= p.span.0 && p.span.0 < p.span.1, "unsorted, empty or overlapping: {placed:?}");
        let change = changes
            .iter()
            .find(|c| {
                let line = now[..p.span.0].rfind('\n').map_or(0, |i| i + 1);
                let end = now[p.span.1..].find('\n').map_or(now.len(), |i| p.span.1 + i);
                c.to == p.to
                    && now[p.span.0..p.span.1] == c.from
                    && now[line..end] == c.context
                    && c.column == p.span.0 - line
            })
            .unwrap_or_else(|| panic!("{p:?} is not a planned literal on its planned line in {now:?}"));
        if now == original {
            assert_eq!(p.span, change.span, "moved in the text it was planned on");
        }
        expected.push_str(&now[at..p.span.0]);
        expected.push_str(p.to);
        at = p.span.1;
    }
    expected.push_str(&now[at..]);
    assert!(changes.iter().all(|c| placed.iter().any(|p| p.to == c.to && now[p.span.0..p.span.1] == c.from)));
    assert_eq!(edit(now, &changes).unwrap(), expected);
}
