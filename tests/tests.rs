//! alsim's integration tests: one binary (linking paid once), one module per area, each reading like the
//! commands a user types.

mod accept;
mod curve;
mod no_panic;
mod props;
mod transcripts;
mod sim;
mod evidence;
mod pins;
mod perf;
mod util;
