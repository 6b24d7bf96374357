//! The facts a pin's value is judged on, resolved before any rule runs: the written value and the AL it
//! implies, k, the golden key of the served model, the thinking mode (an engine's documented default
//! deciding like a literal, [`super::thinking`]), the curve the run's facts select and its expected value,
//! and the golden value under the other draft sampling where no file writes one.
//!
//! A pin whose facts cannot all be resolved is [`Resolution::Undecided`], saying which fact stopped it; the
//! rules in [`super::rules`] decide what that means.

use super::lookup::{self, Alternative, drafter_name, method_family, sampling_alternative};
use super::served::OpenMode;
use crate::accept::RatesPin;
use crate::curve::{CurveFile, CurveQuery, CurveSet, ThinkingMode};
use crate::pins::rates;
use crate::pins::verdict::GoldenRef;
use crate::pins::{AL_TOLERANCE, How, Knob, Pin, RATE_TOLERANCE};
use crate::units::RANGE_EPS;

/// How far a pin's facts were resolved.
pub(crate) enum Resolution {
    /// The pin's role runs no speculative decoding: there is nothing to judge.
    Inert,
    /// The value is not a literal the check can read, for a reason discovery already reported.
    Silent,
    /// A fact could not be decided.
    Undecided(Undecided),
    /// Every fact is known: the value can be judged against its golden value.
    Subject(Box<Subject>),
}

/// The fact that stopped a pin's resolution, and what was known before it.
pub(crate) struct Undecided {
    /// The fact (`value`, `k`, `model`, `golden curve`, `thinking mode`).
    pub(crate) what: &'static str,
    /// Why it is undecided.
    pub(crate) why: String,
    /// The written value, its implied AL and k, where those are known.
    pub(crate) range: Option<Range>,
    /// Whether [1, k+1] is judged without a golden value (not where no golden key matches the model: the
    /// value may be in another knob's unit).
    pub(crate) range_judged: bool,
    /// Whether the fact is the thinking mode, undecided for want of the model's default: a fact of the model,
    /// not of the pin, which the check says once per model.
    pub(crate) for_want_of_default: bool,
}

impl Undecided {
    /// A thinking mode that neither the pin (`stated`: what it says of its mode) nor its deployment states,
    /// for a model (`model_key`) whose family has no known default.
    pub(crate) fn mode_without_default(stated: &str, model_key: &str, range: Range) -> Undecided {
        Undecided {
            what: "thinking mode",
            why: format!("{stated}; the deployment states no thinking mode and {}", no_default(model_key)),
            range: Some(range),
            range_judged: true,
            for_want_of_default: true,
        }
    }
}

/// A written value with the AL it implies at k.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    pub(crate) written: f64,
    pub(crate) implied: f64,
    pub(crate) k: usize,
}

impl Range {
    /// Whether the written value is the one a golden `al` calls for, within `knob`'s tolerance.
    pub(crate) fn matches(&self, knob: Knob, al: f64) -> bool {
        if knob == Knob::AtomRate {
            (self.written - (al - 1.0) / self.k as f64).abs() <= RATE_TOLERANCE
        } else {
            (self.implied - al).abs() <= AL_TOLERANCE
        }
    }

    /// Whether the implied AL lies outside [1, k+1].
    pub(crate) fn out_of_range(&self) -> bool {
        self.implied < 1.0 - RANGE_EPS || self.implied > self.k as f64 + 1.0 + RANGE_EPS
    }
}

/// A pin with every fact its value is judged on, as an owned record: the rules read it beside the curves
/// it was resolved against, and a test can write one by hand.
pub(crate) struct Subject {
    /// The pin (its thinking mode the documented default where none is written).
    pub(crate) pin: Pin,
    pub(crate) range: Range,
    /// The facts the curve was chosen by (its model: the served model's golden key, which is the chosen
    /// curve's).
    pub(crate) query: CurveQuery,
    /// The curve they chose.
    pub(crate) curve: Chosen,
    /// Its golden value at k, in the pin's spelling too.
    pub(crate) golden: GoldenRef,
    /// The golden value under the other draft sampling, where greedy drafting is only assumed.
    pub(crate) alternative: Option<Alternative>,
    /// Where no default decides the mode: why, and the other mode's golden value (the curve chosen is the
    /// mode whose value the pin holds, if either).
    pub(crate) open: Option<Open>,
    /// How the curve was chosen where it is not the served model's own in the repository (alsim's
    /// embedded one, a variant key's), said in the finding.
    pub(crate) chosen: Option<String>,
    /// What the reasoning effort run renders where the renderer's version changed it (vLLM's `high` from
    /// 77434861904a renders what `max` did): a header naming the effort cannot say which was collected.
    pub(crate) effort_renders: Option<String>,
}

/// The curve a subject's facts chose, by its file's place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chosen {
    pub(crate) file: FileAt,
    /// Its thinking mode.
    pub(crate) mode: ThinkingMode,
}

/// Where a chosen curve's file is: in the curves resolved against, or in alsim's embedded ones, which a
/// lookup falls back to where the repository's lack the run's curve.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FileAt {
    /// Its index in the searched set's [`CurveSet::files`].
    Searched(usize),
    /// Its index in alsim's embedded curves.
    Embedded(usize),
}

/// A thinking mode left open: why, and the golden value of the mode not chosen.
pub(crate) struct Open {
    pub(crate) mode: OpenMode,
    /// The other mode, its golden AL and its field (`dsv4_mtp.yaml deepseek-v4-pro.thinking_off.3`).
    pub(crate) other: Option<(crate::curve::ThinkingMode, f64, String)>,
}

impl Subject {
    /// Whether the written value is the one a golden `al` calls for, within the knob's tolerance.
    pub(crate) fn matches(&self, al: f64) -> bool {
        self.range.matches(self.pin.knob, al)
    }

    /// The golden AL the value is judged against.
    pub(crate) fn expected(&self) -> f64 {
        self.golden.expected_al
    }

    /// The chosen curve's file, `curves` being those the subject was resolved against.
    pub(crate) fn file<'c>(&self, curves: &'c CurveSet) -> &'c CurveFile {
        match self.curve.file {
            FileAt::Searched(i) => &curves.files()[i],
            FileAt::Embedded(i) => &lookup::embedded().files()[i],
        }
    }
}

/// Why a thinking mode no file states stays undecided when the served model's family has no known default
/// (`minimax-m3`): a fact of the model, not of the pin, which the check says once per model.
pub(crate) fn no_default(model_key: &str) -> String {
    format!("alsim knows no documented default for {model_key}")
}

/// Resolves `pin`'s facts against `curves`, its served model matched to `key` by [`super::key::golden_key`]
/// and its mode already defaulted by [`super::served::with_served_mode`], or left `open` between both modes:
/// then the curve is the mode's whose value the pin holds, else the first mode's the golden file has.
pub(crate) fn resolve(
    pin: &Pin,
    key: Option<&str>,
    curves: &CurveSet,
    open: Option<&OpenMode>,
    effort_renders: Option<String>,
) -> Resolution {
    if pin.inert() {
        return Resolution::Inert;
    }
    let undecided = |what, why: &str, range, range_judged| {
        Resolution::Undecided(Undecided { what, why: why.to_string(), range, range_judged, for_want_of_default: false })
    };
    let Some(written) = pin.written.value else {
        return match pin.written.how {
            How::Unresolved => undecided("value", &pin.written.text, None, false),
            _ => Resolution::Silent,
        };
    };
    let Some(k) = pin.k.value else { return undecided("k", &pin.k.text, None, false) };
    let range = Range { written, implied: pin.knob.implied_al(written, Some(k)).unwrap_or(written), k };
    let Some(model) = pin.model.value.as_deref() else {
        return undecided("model", &pin.model.text, Some(range), true);
    };
    let Some(key) = key.map(str::to_string) else {
        return undecided("golden curve", &format!("no golden key matches model '{model}'"), Some(range), false);
    };
    let mut query = CurveQuery {
        model: key,
        drafter: pin.drafter.value.as_deref().map(|d| drafter_name(curves, d)),
        method: pin.method.value.as_deref().map(|m| method_family(m, pin.drafter.value.as_deref())),
        draft_sampling: pin.draft_sampling.value.clone(),
        mode: pin.mode.value,
    };
    let mut open_values = None;
    if let Some(open) = open.filter(|_| pin.mode.value.is_none()) {
        let modes = [ThinkingMode::On, ThinkingMode::Off];
        let found: Vec<(ThinkingMode, lookup::Lookup<'_>)> = modes
            .iter()
            .filter_map(|&m| {
                lookup::lookup(curves, &CurveQuery { mode: Some(m), ..query.clone() }, k).ok().map(|l| (m, l))
            })
            .collect();
        let chosen = found.iter().position(|(_, l)| range.matches(pin.knob, l.expected)).unwrap_or(0);
        if let Some((mode, _)) = found.get(chosen) {
            query.mode = Some(*mode);
            let other = found.iter().enumerate().find(|(i, _)| *i != chosen).map(|(_, (m, l))| {
                (*m, l.expected, format!("{} {}", lookup::short(&l.resolved.file.origin), l.resolved.curve.field(k)))
            });
            open_values = Some(Open { mode: open.clone(), other });
        }
    }
    let lookup = match lookup::lookup(curves, &query, k) {
        Ok(l) => l,
        Err(e) => {
            let mode_undecided =
                pin.mode.value.is_none() && matches!(e, crate::Error::Lookup { kind: crate::LookupKind::Mode, .. });
            return if mode_undecided {
                Resolution::Undecided(Undecided::mode_without_default(&pin.mode.text, &query.model, range))
            } else {
                undecided("golden curve", &e.to_string(), Some(range), true)
            };
        }
    };
    // A variant key's curve chosen by the method is the run's own: later rules judge against that key.
    query.model = lookup.resolved.curve.model().to_string();
    let chain = pin.rates.as_ref().and_then(|_| rates::golden(lookup.resolved.curve, k));
    let golden = GoldenRef {
        file: lookup.resolved.file.origin.clone(),
        key: lookup.resolved.curve.field(k),
        expected_al: lookup.expected,
        expected_written: pin.knob.written_for(lookup.expected, k),
        drafter_match: lookup.resolved.drafter_match,
        expected_rates: chain.as_ref().map(|c| c.rates().to_vec()),
        rates_from: chain.as_ref().map(RatesPin::describe),
    };
    let sampling_assumed = pin.draft_sampling.how == How::Inferred;
    let alternative = sampling_assumed.then(|| sampling_alternative(curves, &query, k)).flatten();
    let at = |set: &CurveSet| set.files().iter().position(|f| std::ptr::eq(f, lookup.resolved.file));
    let file = match at(curves) {
        Some(i) => FileAt::Searched(i),
        None => FileAt::Embedded(at(lookup::embedded()).expect("a lookup's curve is the searched set's or alsim's")),
    };
    Resolution::Subject(Box::new(Subject {
        pin: pin.clone(),
        range,
        query,
        curve: Chosen { file, mode: lookup.resolved.curve.mode() },
        golden,
        alternative,
        open: open_values,
        chosen: lookup.chosen,
        effort_renders,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::Fact;
    use crate::pins::rules::testing::pin;

    /// A run whose curve the repository's golden files lack is judged on alsim's embedded one: the subject
    /// records that file's place there, and reads it back as the file the lookup chose.
    #[test]
    fn a_curve_from_alsims_embedded_set_is_recorded_there() {
        let mtp_only =
            CurveSet::new(lookup::embedded().files().iter().filter(|f| f.stem == "dsv4_mtp").cloned().collect());
        let mut p = pin(2.0, 3, ThinkingMode::On);
        p.model = Fact::known("deepseek-v4-pro".into(), How::Literal, "test", None);
        p.method = Fact::known("dspark".into(), How::Literal, "test", None);
        p.drafter = Fact::unresolved("not written");
        p.draft_sampling = Fact::known("probabilistic".into(), How::Literal, "test", None);
        let Resolution::Subject(s) = resolve(&p, Some("deepseek-v4-pro"), &mtp_only, None, None) else {
            panic!("the DSpark pin resolves on alsim's curve");
        };
        assert!(matches!(s.curve.file, FileAt::Embedded(_)), "{:?}", s.curve.file);
        assert_eq!(s.file(&mtp_only).origin, "<embedded>/dsv4-pro-0813-dspark.yaml");
        assert_eq!(s.golden.file, s.file(&mtp_only).origin);
    }
}
