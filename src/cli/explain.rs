//! `alsim explain TOPIC`: a finding class, engine, schedule or term, from the shipped docs/ pages.

use alsim::explain;
use alsim::report;

use super::{Outcome, emit};

/// Flags of `alsim explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A finding class (`wrong-k`, `8`, `class-8`), an engine or schedule (`sglang`, `min-variance`), or a
    /// term alsim prints (`al`, `inconclusive`, `band`); words may be given apart (`pin too high`). None: the
    /// list of topics.
    #[arg(value_name = "TOPIC")]
    topic: Vec<String>,
    /// List every topic.
    #[arg(long, conflicts_with = "topic")]
    list: bool,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if args.list || args.topic.is_empty() {
        emit(&report::explain::topic_list(&explain::topics()))?;
    } else {
        emit(&report::explain::topic(&explain::find(&args.topic.join(" "))?))?;
    }
    Ok(Outcome::Pass)
}
