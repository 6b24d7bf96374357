//! The `alsim` command: parses arguments, calls the library, prints through `alsim::report`.

mod cli;

use std::process::ExitCode;

// `pins check` builds and drops many small trees (YAML nodes, shell words) on several threads; glibc's
// allocator spent about a quarter of the whole check's time in malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::main()
}
