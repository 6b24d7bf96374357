//! Resolve: each pin's golden query — its model key (`key`: the golden key its served model matches),
//! drafter, draft sampling and thinking mode, defaults applied (`served`: who renders the prompt, at which
//! version) — looked up in the golden curves (`lookup`), and the subject the rules judge (`subject`), or the
//! fact that stayed undecided. [`resolve`] runs the stage for one pin, each step once and in that order,
//! and hands the rules a record.

pub(crate) mod key;
pub(crate) mod lookup;
pub(crate) mod served;
pub(crate) mod subject;

use self::served::{Context, OpenMode};
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

/// A pin with its model's golden key ([`key::golden_key`]) and, where one matched, the mode its deployment
/// serves ([`served::with_served_mode`]): left open between both modes, and what renders its stated effort.
pub(crate) struct ServedPin {
    pub(crate) pin: Pin,
    pub(crate) key: Option<String>,
    pub(crate) open: Option<OpenMode>,
    pub(crate) effort_renders: Option<String>,
}

/// `pin`'s golden key in `curves` and the mode its deployment serves: the first two steps of [`resolve`],
/// also what `pins list` shows of a pin's mode.
pub(crate) fn with_key_and_mode(pin: Pin, curves: &CurveSet, context: &Context<'_>) -> ServedPin {
    match key::golden_key(&pin, curves) {
        Some(key) => {
            let (pin, open, effort_renders) = served::with_served_mode(pin, &key, context);
            ServedPin { pin, key: Some(key), open, effort_renders }
        }
        None => ServedPin::unmatched(pin),
    }
}

impl ServedPin {
    /// `pin` as written: no golden key matched its model (or none was sought), so no default applies.
    fn unmatched(pin: Pin) -> ServedPin {
        ServedPin { pin, key: None, open: None, effort_renders: None }
    }
}

/// Resolves `pin` against `curves`: its model's golden key and served mode ([`with_key_and_mode`]; neither
/// for an inert pin), then its facts ([`subject::resolve`]).
pub(crate) fn resolve(pin: Pin, curves: &CurveSet, context: &Context<'_>) -> ResolvedPin {
    let ServedPin { pin, key, open, effort_renders } =
        if pin.inert() { ServedPin::unmatched(pin) } else { with_key_and_mode(pin, curves, context) };
    let resolution = subject::resolve(&pin, key.as_deref(), curves, open.as_ref(), effort_renders);
    ResolvedPin { pin, key, resolution }
}
