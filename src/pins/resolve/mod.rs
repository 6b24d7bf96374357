//! Resolve: each pin's golden query — its model key, drafter, draft sampling and thinking mode, defaults
//! applied (`served`: who renders the prompt, at which version) — looked up in the golden curves
//! (`lookup`), and the subject the rules judge (`subject`), or the fact that stayed undecided.

pub(crate) mod lookup;
pub(crate) mod served;
pub(crate) mod subject;
