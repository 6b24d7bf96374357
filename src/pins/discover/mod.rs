//! Discover: what a repository's files say, read without running them — the launch graph of config
//! entries, launchers, scripts and recipes (`graph`), the pins and facts of bash scripts (`script`) and of
//! YAML recipes (`recipe`). What it finds it records as pins and plain records (`super::observed`); it
//! makes no finding (that is the rules', `super::rules`).

pub(crate) mod graph;
pub(crate) mod recipe;
pub(crate) mod script;
