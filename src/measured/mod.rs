//! Curves measured from real-verification runs, behind the `alsim golden` commands: collecting a curve
//! from eval-only runs ([`collect`]) and testing a committed golden curve against new runs ([`retest`]).
//! It sits above both [`crate::curve`] (the golden-curve files) and [`crate::evidence`] (the runs), which
//! know nothing of each other. In the crate, "golden" names only the committed curve; a curve this module
//! builds becomes one when it is written and committed.

pub mod collect;
pub mod retest;
