//! The classes of finding the pin check makes: the eleven of docs/pins.md and its own, with each class's
//! name, number, severity and one line on how to mend it. Which records or pins make a finding of a
//! class is its rule's (`src/pins/rules/`).

use std::fmt;

use serde::Serialize;

use super::{FindingClass, Severity};
use crate::error::Result;

/// The classes of error of docs/pins.md (1–11), plus the check's own findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// 1. The value is the golden AL for another draft length.
    WrongK,
    /// 2. Another drafter's curve, or the greedy curve used with probabilistic drafting (or the reverse).
    WrongDrafter,
    /// 3. The other thinking mode's value, or a reasoning effort the curve was not collected at.
    WrongThinkingMode,
    /// 4. Another model's value.
    WrongModel,
    /// 5. TRT-LLM value not minus one, ATOM rate not (AL−1)/k, SGLang triple incomplete, vLLM length without
    ///    `rejection_sample_method: synthetic`.
    Spelling,
    /// 6. AL outside [1, k+1] for the role's own k.
    OutOfRange,
    /// 7. A value computed but never passed to the engine.
    NeverPassed,
    /// 8. A pin that also applies to `EVAL_ONLY` runs, or an eval twin that carries one.
    EvalLeak,
    /// 9. A spec-decoding config with no pin, or a k with no lookup-table entry.
    MissingPin,
    /// 10. k and AL set independently, or prose naming another value than the code.
    Drift,
    /// 11. Golden curves that cannot be told apart, are out of range, or break monotonicity beyond noise.
    CurveProblem,
    /// A value that matches no golden curve at all.
    Mismatch,
    /// A candidate file that could not be read, decoded or parsed.
    Unreadable,
    /// A fact the check could not decide.
    Unresolved,
    /// A verdict that rests on an assumption no file states and no documentation settles (greedy drafting,
    /// llama.cpp's draft length).
    Assumption,
    /// A YAML key written twice: the last value wins, as PyYAML reads it.
    DuplicateKey,
    /// A pin that does nothing (its role runs no speculative decoding), or a setting the engine ignores.
    Inert,
    /// An allow-list entry that matched nothing.
    StaleAllow,
    /// Under `--base`: an allow entry the change adds, or widens to more files or a whole file.
    AllowChanged,
    /// Under `--base`: a file the base checked that the working tree still has, but its ignore files,
    /// excludes or configuration drop.
    DroppedFile,
}

impl Class {
    /// Every class, in order.
    pub const ALL: [Class; 20] = [
        Class::WrongK,
        Class::WrongDrafter,
        Class::WrongThinkingMode,
        Class::WrongModel,
        Class::Spelling,
        Class::OutOfRange,
        Class::NeverPassed,
        Class::EvalLeak,
        Class::MissingPin,
        Class::Drift,
        Class::CurveProblem,
        Class::Mismatch,
        Class::Unreadable,
        Class::Unresolved,
        Class::Assumption,
        Class::DuplicateKey,
        Class::Inert,
        Class::StaleAllow,
        Class::AllowChanged,
        Class::DroppedFile,
    ];

    /// The kebab-case name used in output and allow-lists.
    pub fn name(self) -> &'static str {
        match self {
            Class::WrongK => "wrong-k",
            Class::WrongDrafter => "wrong-drafter",
            Class::WrongThinkingMode => "wrong-thinking-mode",
            Class::WrongModel => "wrong-model",
            Class::Spelling => "spelling",
            Class::OutOfRange => "out-of-range",
            Class::NeverPassed => "never-passed",
            Class::EvalLeak => "eval-leak",
            Class::MissingPin => "missing-pin",
            Class::Drift => "drift",
            Class::CurveProblem => "curve-problem",
            Class::Mismatch => "mismatch",
            Class::Unreadable => "unreadable",
            Class::Unresolved => "unresolved",
            Class::Assumption => "assumption",
            Class::DuplicateKey => "duplicate-key",
            Class::Inert => "inert",
            Class::StaleAllow => "stale-allow",
            Class::AllowChanged => "allow-changed",
            Class::DroppedFile => "dropped-file",
        }
    }

    /// The number of the class in docs/pins.md, for the eleven it lists.
    pub fn number(self) -> Option<usize> {
        Class::ALL[..11].iter().position(|c| *c == self).map(|i| i + 1)
    }

    /// Whether setting the value to its golden one mends a finding of this class (what `pins fix` may do).
    pub fn value_mends(self) -> bool {
        matches!(
            self,
            Class::WrongK
                | Class::WrongDrafter
                | Class::WrongThinkingMode
                | Class::WrongModel
                | Class::Spelling
                | Class::OutOfRange
                | Class::Mismatch
        )
    }

    /// One line on how to mend a finding of this class, shown under it (`alsim explain CLASS` says more).
    pub fn help(self) -> &'static str {
        match self {
            Class::WrongK => "pin the golden value for the k this role runs; alsim pins fix prints the change",
            Class::WrongDrafter => "pin the value of the curve collected with the drafter and draft sampling that run",
            Class::WrongThinkingMode => {
                "pin the value for the thinking mode the server runs, or state the mode it runs"
            }
            Class::WrongModel => "pin the value of the served model's own curve",
            Class::Spelling => "write the value in the engine's own unit and with every knob the engine needs",
            Class::OutOfRange => "an AL lies in [1, k+1] for the role's k: fix the value or the k",
            Class::NeverPassed => {
                "pass the value to the engine (export it, or put it in the flag or config the engine reads)"
            }
            Class::EvalLeak => "set the pin only when EVAL_ONLY is not true, so eval runs verify for real",
            Class::MissingPin => "pin the golden value for this run's k, or add the missing k to the lookup table",
            Class::Drift => "derive the value from the same k the engine runs, and keep prose in step with the code",
            Class::CurveProblem => {
                "re-collect the golden points at fault, or tell the curve files apart in their headers"
            }
            Class::Mismatch => "no golden curve has this value: pin one of the curve's values for this model and k",
            Class::Unreadable => "make the file readable, or move it out of the repository",
            Class::Unresolved => {
                "write the fact where the check can read it (a literal, or a variable set in the repository)"
            }
            Class::Assumption => "state the fact the verdict assumes (draft sampling, draft length, thinking mode)",
            Class::DuplicateKey => "write the key once: YAML readers keep only the last value",
            Class::Inert => "remove the setting, or enable speculative decoding for the role it is meant for",
            Class::StaleAllow => "remove the allow-list entry, or correct its file, line or class",
            Class::AllowChanged => {
                "have the new or wider allow entry reviewed, or sanction only the findings it is for"
            }
            Class::DroppedFile => {
                "check the file again: narrow the ignore entry or exclude, or allow the finding with its reason"
            }
        }
    }
}

impl FindingClass for Class {
    fn name(self) -> &'static str {
        Class::name(self)
    }

    fn severity(self) -> Severity {
        match self {
            Class::Unresolved | Class::Assumption | Class::StaleAllow | Class::DuplicateKey => Severity::Warning,
            Class::Inert => Severity::Note,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Class {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Class> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Class::ALL
            .into_iter()
            .find(|c| c.name() == wanted || c.number().is_some_and(|n| n.to_string() == wanted))
            .ok_or_else(|| {
                crate::Error::invalid(
                    "class",
                    format!(
                        "unknown class '{s}'; expected one of {}",
                        Class::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
    }
}
