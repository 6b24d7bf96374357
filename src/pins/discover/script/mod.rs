//! Pins in bash launch scripts, read with the bash reader ([`crate::bash`]): where a statement writes a
//! knob or a fact ([`written`]), every pin site with its facts resolved for one environment ([`sites`]),
//! and what a script records on its own — incomplete spellings, values never passed, eval guards
//! (`checks`).

mod checks;
pub(crate) mod sites;
pub(crate) mod written;
