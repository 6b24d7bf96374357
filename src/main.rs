//! The `alsim` command: parses arguments, calls the library, prints through `alsim::report`.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
