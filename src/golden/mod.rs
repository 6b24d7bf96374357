//! Golden curves from real-verification runs, the `alsim golden` commands: collecting a curve from eval-only
//! runs ([`collect`]) and testing a committed curve against new runs ([`retest`]). It sits above both
//! [`crate::curve`] (the files) and [`crate::evidence`] (the runs), which know nothing of each other.

pub mod collect;
pub mod retest;
