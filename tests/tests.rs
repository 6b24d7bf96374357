//! alsim's integration tests: one binary (linking paid once), one module per area, each reading like the
//! commands a user types.

mod accept;
mod perf;
mod util;
