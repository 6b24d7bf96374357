//! llama.cpp server log lines (docs/engines.md#llamacpp-llamacpp), as printed by ggml-org/llama.cpp at commit 001d906a
//! (`tools/server/server-context.cpp` `server_slot::print_timings`, `common/speculative.cpp`
//! `common_speculative_print_stats`):
//!
//! - per request, INFO: `draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance
//!   length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)` (PR #24536). Current builds
//!   print `…, mean len =  2.92` and move the rates to a TRACE line of their own, which alsim does not
//!   need: the statistics line carries them at the same verbosity. The counts are the request's own:
//!   A accepted, G draft tokens generated, and the mean 1 + A/D over its D verification steps, which the
//!   line does not print. D is recovered as the fewest steps that fit both the printed mean (2 decimals)
//!   and k drafts per step at most (D ≥ G/k): drafts are k tokens except near a request's end, so that is
//!   D itself whenever the mean pins D to within one step (it does for A/(AL−1)² < 100 accepted drafts
//!   per rounding step, i.e. requests of a few hundred steps).
//! - per drafter implementation, TRACE (`-lv 4`), cumulative since the server started and printed after
//!   each request: `statistics draft-mtp: #calls(b,g,a) = 1 200 200, #gen drafts = 200, #acc drafts =
//!   170, #gen tokens = 399, #acc tokens = 311, #mean acc len = 2.55, #acc rate/pos = (0.850, 0.705),
//!   dur(b,g,a) = …`. The third call count a (accept calls) is D: the printed mean is 1 + #acc tokens / a
//!   and the rates are P_i / a. #acc drafts (steps accepting at least one draft) is P_1 exactly.
//!
//! Rates are unconditional (P_i counts steps that accepted at least i drafts). Both lists are as long as
//! the most drafts any step accepted, so they end early when no step accepted all k: the missing
//! positions are zero, and the list does not state k. Per-position counts are therefore kept only where
//! k is known (`--k`, `--evidence-k`).

use super::{number, number_after, whole};
use crate::evidence::Window;

/// Marks the per-request line.
pub(super) const REQUEST: &str = "draft acceptance =";
/// Marks the statistics line (the fork-only `statistics concat: k1 = …` line has no call counts).
pub(super) const STATISTICS: &str = "#calls(b,g,a)";

/// A request line's counts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Request {
    accepted: f64,
    generated: f64,
    mean: f64,
    rates: Option<Vec<f64>>,
}

/// Reads a request line from its marker on.
pub(super) fn request(text: &str) -> Result<Request, String> {
    let ratio = number_after(text, REQUEST)?;
    let open = text.find('(').ok_or("'(A accepted / G generated)' is missing (truncated line?)")?;
    let accepted = whole(number_after(&text[open..], "(")?, "accepted")?;
    let generated = whole(number_after(text, "accepted /")?, "generated")?;
    if accepted > generated {
        return Err(format!("{accepted} accepted of {generated} generated draft tokens: impossible counts"));
    }
    if generated > 0.0 && (accepted / generated - ratio).abs() > 6e-6 {
        return Err(format!("draft acceptance {ratio} disagrees with {accepted} accepted / {generated} generated"));
    }
    let mean = match number_after(text, "mean acceptance length =") {
        Ok(mean) => mean,
        Err(_) => number_after(text, "mean len =")?,
    };
    if mean < 1.0 {
        return Err(format!("mean acceptance length {mean} is below 1"));
    }
    let rates = match text.find("acceptance rate per position =") {
        Some(at) => Some(rate_list(&text[at + "acceptance rate per position =".len()..])?),
        None => None,
    };
    Ok(Request { accepted, generated, mean, rates })
}

impl Request {
    /// The request as a window at draft length `k`.
    pub(super) fn window(&self, k: usize) -> Result<Window, String> {
        let steps = self.steps(k)?;
        let mut window = Window::new(steps, self.accepted);
        window.draft_tokens = Some(self.generated);
        if let Some(rates) = &self.rates {
            window.positions = Some(positions(rates, k, steps, None)?);
        }
        Ok(window)
    }

    /// The fewest verification steps D ≥ G/k for which 1 + A/D prints as the line's mean.
    fn steps(&self, k: usize) -> Result<f64, String> {
        let (a, g, mean) = (self.accepted, self.generated, self.mean);
        let fewest = (g / k as f64).ceil();
        if a == 0.0 {
            return if mean < 1.005 {
                Ok(fewest)
            } else {
                Err(format!("mean acceptance length {mean} with no accepted draft: it must print as 1.00"))
            };
        }
        // %.2f rounds to nearest: the exact mean lies within half a hundredth of the printed one.
        let slack = 0.005 + 1e-9;
        let low = a / (mean - 1.0 + slack);
        let high = if mean - 1.0 > slack { a / (mean - 1.0 - slack) } else { f64::INFINITY };
        let steps = low.ceil().max(fewest);
        if steps > high.min(g) {
            return Err(format!(
                "mean acceptance length {mean} with {a} accepted of {g} generated draft tokens needs {low:.1} to {} verification steps, but drafts of at most k = {k} tokens need {fewest} to {g}: the run's k is not {k}",
                if high.is_finite() { format!("{high:.1}") } else { "any number of".into() }
            ));
        }
        Ok(steps)
    }
}

/// A statistics line's counts: the drafter's name and its cumulative window (`None` before its first
/// accept call, when there is nothing to count).
pub(super) fn statistics(text: &str, k: Option<usize>) -> Result<Option<(String, Window)>, String> {
    let at = text.find("statistics").ok_or("'statistics <drafter>:' is missing before the call counts")?;
    let rest = &text[at + "statistics".len()..];
    let colon = rest.find(':').ok_or("'statistics <drafter>:' has no ':'")?;
    let drafter = rest[..colon].trim().to_string();
    let calls = &text[text.find(STATISTICS).unwrap_or(0) + STATISTICS.len()..];
    let calls = calls.trim_start().strip_prefix('=').ok_or("'#calls(b,g,a) =' is missing its '='")?;
    let counts: Vec<&str> = calls.split(',').next().unwrap_or("").split_whitespace().collect();
    let [_, _, accept_calls] = counts[..] else {
        return Err(format!("#calls(b,g,a) holds {} numbers, expected 3", counts.len()));
    };
    let steps = whole(number(accept_calls, "#calls(b,g,a)")?, "accept calls")?;
    let gen_drafts = whole(number_after(text, "#gen drafts =")?, "#gen drafts")?;
    let acc_drafts = whole(number_after(text, "#acc drafts =")?, "#acc drafts")?;
    let generated = whole(number_after(text, "#gen tokens =")?, "#gen tokens")?;
    let accepted = whole(number_after(text, "#acc tokens =")?, "#acc tokens")?;
    if acc_drafts > gen_drafts || accepted > generated || acc_drafts > accepted {
        return Err(format!(
            "#acc drafts = {acc_drafts}, #gen drafts = {gen_drafts}, #acc tokens = {accepted}, #gen tokens = {generated}: accepted counts above generated ones (or drafts above tokens) are impossible"
        ));
    }
    if steps == 0.0 {
        return Ok(None);
    }
    if acc_drafts > steps {
        return Err(format!("#acc drafts = {acc_drafts} in {steps} accept calls: more steps accepted than ran"));
    }
    if let Ok(mean) = number_after(text, "#mean acc len =")
        && (1.0 + accepted / steps - mean).abs() > 0.0051
    {
        return Err(format!(
            "#mean acc len {mean} disagrees with 1 + #acc tokens / accept calls = {:.4}",
            1.0 + accepted / steps
        ));
    }
    let mut window = Window::new(steps, accepted);
    window.draft_tokens = Some(generated);
    if let (Some(k), Some(at)) = (k, text.find("#acc rate/pos =")) {
        let rates = rate_list(&text[at + "#acc rate/pos =".len()..])?;
        window.positions = Some(positions(&rates, k, steps, Some(acc_drafts))?);
    }
    Ok(Some((drafter, window)))
}

/// A parenthesised list of rates, `(0.805, 0.632)`; `()` when no step accepted a draft.
fn rate_list(text: &str) -> Result<Vec<f64>, String> {
    let inner = text
        .trim_start()
        .strip_prefix('(')
        .and_then(|t| t.split_once(')'))
        .map(|(inner, _)| inner)
        .ok_or("the per-position rates are not a closed (…) list (truncated line?)")?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|part| match number(part, "acceptance rate per position")? {
            r if r <= 1.0 => Ok(r),
            r => Err(format!("per-position acceptance rate {r} is not a probability")),
        })
        .collect()
}

/// P_1..P_k from rates over `steps` steps, zeros past the list's end; `first` is P_1 where it is
/// counted exactly.
fn positions(rates: &[f64], k: usize, steps: f64, first: Option<f64>) -> Result<Vec<f64>, String> {
    if rates.len() > k {
        return Err(format!("{} per-position rates: a step accepted more than k = {k} drafts", rates.len()));
    }
    let mut counts: Vec<f64> = rates.iter().map(|r| r * steps).collect();
    counts.resize(k, 0.0);
    if let (Some(p1), Some(c)) = (first, counts.first_mut()) {
        if (*c - p1).abs() > 5e-4 * steps + 0.5 {
            return Err(format!(
                "the first position's rate {:.3} disagrees with #acc drafts / accept calls",
                *c / steps
            ));
        }
        *c = p1;
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_request_spellings_recover_the_steps() {
        let old = request("draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)").unwrap();
        // 167 accepted at AL 2.92 is 86.98 steps: 87 fits the mean, and 259 tokens need at least 87.
        let w = old.window(3).unwrap();
        assert_eq!(w.steps, 87.0);
        assert_eq!(w.positions.as_ref().unwrap().len(), 3);
        let new = request("draft acceptance = 0.77945 (  311 accepted /   399 generated), mean len =  2.55").unwrap();
        let w = new.window(2).unwrap();
        assert_eq!((w.steps, w.accepted, w.positions), (200.0, 311.0, None));
        // At k = 1 the 399 tokens need 399 steps, and 311 accepted in 399 steps is AL 1.78, not 2.55.
        let err = new.window(1).unwrap_err();
        assert!(err.contains("not 1"), "{err}");
        assert!(request("draft acceptance = 0.5 ( 30 accepted / 20 generated), mean len = 2.0").is_err());
        assert!(request("draft acceptance = 0.9 ( 10 accepted / 20 generated), mean len = 2.0").is_err());
    }

    #[test]
    fn statistics_lines_count_accept_calls_and_pad_positions() {
        let line = "0.34.089.513 I spec common_specu: statistics        draft-mtp: #calls(b,g,a) =    1    200    200, #gen drafts =    200, #acc drafts =   170, #gen tokens =    399, #acc tokens =   311, #mean acc len = 2.55, #acc rate/pos = (0.850, 0.705), dur(b,g,a) = 0.004, 1011.730, 0.465 ms";
        let (drafter, w) = statistics(line, Some(3)).unwrap().unwrap();
        assert_eq!(drafter, "draft-mtp");
        assert_eq!((w.steps, w.accepted, w.draft_tokens), (200.0, 311.0, Some(399.0)));
        assert_eq!(w.positions, Some(vec![170.0, 141.0, 0.0]));
        assert_eq!(statistics(line, None).unwrap().unwrap().1.positions, None);
        let idle = "statistics ngram-mod: #calls(b,g,a) = 1 7 0, #gen drafts = 0, #acc drafts = 0, #gen tokens = 0, #acc tokens = 0, dur(b,g,a) = 0.024, 0.016, 0.000 ms";
        assert_eq!(statistics(idle, Some(3)).unwrap(), None);
        let wrong = line.replace("#mean acc len = 2.55", "#mean acc len = 2.65");
        assert!(statistics(&wrong, Some(3)).unwrap_err().contains("disagrees"));
        assert!(statistics(line, Some(1)).unwrap_err().contains("more than k = 1"));
    }
}
