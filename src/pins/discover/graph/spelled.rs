//! Near-misses of a knob's spelling in launch code: a word that is almost an engine's pin knob or its
//! companion (`SGLANG_SIMULATE_ACC_LENGTH`, `synthetic_acceptance_lenght`) or an abbreviation of a flag
//! (`--spec-decode-acceptance-len`, which argparse takes only while no other flag shares the prefix).
//! No engine reads the first kind, so the file looks pinned to a reader while the run measures real
//! acceptance; the pre-scan that picks candidate files by exact spellings never sees them. Comment lines
//! are prose, not settings, and are skipped.

use rayon::prelude::*;

use super::Needles;
use crate::pins::Location;
use crate::pins::observed::Observed;
use crate::pins::walk::{FileKind, TextFile};

/// Every spelling an engine, the injector or a companion setting reads.
const SPELLINGS: &[&str] = &[
    "SGLANG_SIMULATE_ACC_LEN",
    "SGLANG_SIMULATE_ACC_METHOD",
    "SGLANG_SIMULATE_ACC_TOKEN_MODE",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "synthetic_acceptance_length",
    "synthetic_acceptance_rates",
    "--spec-decode-acceptance-length",
    "--spec-decode-acceptance-rate",
    "--spec-synth-len",
    "--spec-synth-rates",
    "LLAMA_ARG_SPEC_SYNTH_LEN",
    "LLAMA_ARG_SPEC_SYNTH_RATES",
    "SYNTHETIC_ACCEPTANCE_LENGTH",
];

/// Where a near-miss can start: the stem the spellings share.
static STEMS: Needles = Needles::new(&[
    "SGLANG_SIMULATE_AC",
    "TLLM_SPEC_DECODE",
    "synthetic_accept",
    "--spec-decode-accept",
    "--spec-synth",
    "LLAMA_ARG_SPEC_SYN",
    "SYNTHETIC_ACCEPTANCE_",
]);

/// The largest edit distance still read as a misspelling of one of [`SPELLINGS`].
const MAX_EDITS: usize = 2;

/// The near-misses in the shell and YAML files among `files` (archived and golden folders aside).
pub(crate) fn near_misses(files: &[TextFile]) -> Vec<Observed> {
    files
        .par_iter()
        .filter(|f| {
            matches!(f.kind, FileKind::Shell | FileKind::Yaml)
                && !f.rel.starts_with("golden_al_distribution/")
                && !super::archived(&f.rel)
        })
        .flat_map_iter(|f| in_text(&f.rel, &f.text))
        .collect()
}

fn in_text(rel: &str, text: &str) -> Vec<Observed> {
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = Vec::new();
    // One search per stem over the whole text; a hit's line is found only for the few hits there are.
    for finder in STEMS.finders() {
        for at in finder.find_iter(text.as_bytes()) {
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[at..].find('\n').map_or(text.len(), |e| at + e);
            let line = &text[line_start..line_end];
            let col = at - line_start;
            // A whole word only (`XSGLANG_…` or `…_SGLANG_…` is another name), outside comment lines.
            if line.trim_start().starts_with('#')
                || line[..col].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let end = line[col..].find(|c: char| !word_char(c)).map_or(line.len(), |e| col + e);
            let written = &line[col..end];
            // A name still being built (`…_LEN_${K}`) is not a spelling.
            if written.ends_with(['_', '-']) || SPELLINGS.contains(&written) {
                continue;
            }
            if let Some((meant, how)) = nearest(written) {
                let number = text[..line_start].matches('\n').count() + 1;
                out.push(Observed::NearMiss {
                    at: Location::new(rel, number),
                    written: written.to_string(),
                    meant: meant.to_string(),
                    how,
                });
            }
        }
    }
    out.sort_by_key(|o| match o {
        Observed::NearMiss { at, .. } => at.line,
        _ => None,
    });
    out
}

/// The spelling `written` nearly is, and how: an abbreviation of a flag, or a few edits away.
fn nearest(written: &str) -> Option<(&'static str, String)> {
    if written.starts_with("--")
        && let Some(full) = SPELLINGS.iter().find(|s| s.starts_with("--") && s.starts_with(written))
    {
        return Some((full, "an abbreviation, which argparse expands only while no other flag shares it".into()));
    }
    // `…_ACC_LENGTH` for `…_ACC_LEN`: the spelling run on by letters (a `_` would start another name).
    if let Some(full) = SPELLINGS
        .iter()
        .find(|s| written.strip_prefix(**s).is_some_and(|rest| rest.chars().all(|c| c.is_ascii_alphabetic())))
    {
        return Some((full, "the spelling run on".into()));
    }
    SPELLINGS
        .iter()
        .map(|s| (*s, strsim::levenshtein(written, s)))
        .filter(|(_, d)| *d <= MAX_EDITS)
        .min_by_key(|(_, d)| *d)
        .map(|(s, d)| (s, format!("{d} edit{} away", if d == 1 { "" } else { "s" })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelled(text: &str) -> Vec<(String, String)> {
        in_text("a.sh", text)
            .into_iter()
            .map(|o| match o {
                Observed::NearMiss { written, meant, .. } => (written, meant),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn near_misses_and_abbreviations_are_found_and_exact_spellings_comments_and_built_names_are_not() {
        assert_eq!(
            spelled("export SGLANG_SIMULATE_ACC_LENGTH=2.5\nx --spec-decode-acceptance-len 2.5\n"),
            [
                ("SGLANG_SIMULATE_ACC_LENGTH".into(), "SGLANG_SIMULATE_ACC_LEN".into()),
                ("--spec-decode-acceptance-len".into(), "--spec-decode-acceptance-length".into())
            ]
        );
        assert_eq!(
            spelled("{\"synthetic_acceptance_lenght\": 2.5}"),
            [("synthetic_acceptance_lenght".into(), "synthetic_acceptance_length".into())]
        );
        let clean = "export SGLANG_SIMULATE_ACC_LEN=2.5 SGLANG_SIMULATE_ACC_METHOD=match-expected\n\
                     # SGLANG_SIMULATE_ACC_LENGTH in a comment\nV=SGLANG_SIMULATE_ACC_LEN_${K}\n\
                     SYNTHETIC_ACCEPTANCE_LENGTH=2.5 SYNTHETIC_ACCEPTANCE=true\n";
        assert_eq!(spelled(clean), []);
    }
}
