//! alsim's integration tests: one binary (linking paid once), one module per area, each reading like the
//! commands a user types.

mod accept;
mod artifacts;
mod calibration;
mod choice;
mod curve;
mod docs;
mod escape;
mod evidence;
mod exports;
mod fix_edits;
mod fuzz;
mod fuzz_bodies;
mod golden;
mod install;
mod layers;
mod layout;
mod no_panic;
mod output;
mod perf;
mod pins;
mod pins_base;
mod pins_cli;
mod pins_fix;
mod pins_launch;
mod pins_rates;
mod pins_scope;
mod props;
mod readme;
mod shape;
mod sim;
mod sweep;
mod transcripts;
mod util;
mod yaml;
mod yaml_before;
