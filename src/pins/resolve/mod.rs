//! Resolve: each pin's golden query — its model key, drafter, draft sampling and thinking mode, defaults
//! applied (`served`: who renders the prompt, at which version) — looked up in the golden curves
//! (`lookup`), and the subject the rules judge (`subject`), or the fact that stayed undecided. [`resolve`]
//! runs the stage for one pin, each step once and in that order, and hands the rules a record.

pub(crate) mod key;
pub(crate) mod lookup;
pub(crate) mod served;
pub(crate) mod subject;

use self::served::Context;
use self::subject::Resolution;
use crate::curve::CurveSet;
use crate::pins::Pin;

/// A pin as the resolve stage leaves it: its thinking mode the deployment's default where one decides, the
/// golden key its served model matched, and how far its facts resolved.
pub(crate) struct ResolvedPin {
    pub(crate) pin: Pin,
    pub(crate) key: Option<String>,
    pub(crate) resolution: Resolution,
}

/// Resolves `pin` against `curves`: its model's golden key ([`key::golden_key`]; none for an inert pin),
/// the mode its deployment serves ([`served::with_served_mode`]), then its facts ([`subject::resolve`]).
pub(crate) fn resolve(pin: Pin, curves: &CurveSet, context: &Context<'_>) -> ResolvedPin {
    let key = (!pin.inert()).then(|| key::golden_key(&pin, curves)).flatten();
    let (pin, open, effort_renders) = match &key {
        Some(key) => served::with_served_mode(pin, key, context),
        None => (pin, None, None),
    };
    let resolution = subject::resolve(&pin, key.as_deref(), curves, open.as_ref(), effort_renders);
    ResolvedPin { pin, key, resolution }
}
