//! Benchmarks: this project and the named peer side by side, in one run, on
//! the same input, printing both times and the ratio.
//!
//! Each benchmark is an example named `bench` in its tool crate, run in
//! release mode with the fixtures on `$PATH`; it prints its own table.

use crate::{fixture_path, fixtures, run as run_cmd};
use anyhow::{bail, Result};
use std::path::Path;
use std::process::Command;

/// (name, package whose `examples/bench.rs` runs it)
pub(crate) const BENCHES: &[(&str, &str)] = &[
    ("astgrep", "tool-astgrep"),
    ("lsp", "tool-lsp"),
    ("debug", "tool-debug"),
    ("eval", "tool-eval"),
];

pub(crate) const NAMES: &[&str] = &["astgrep", "lsp", "debug", "eval", "context"];

pub(crate) fn run(root: &Path, name: Option<&str>) -> Result<()> {
    let selected: Vec<&(&str, &str)> = match name {
        None => BENCHES.iter().collect(),
        Some(n) => match BENCHES.iter().find(|(b, _)| *b == n) {
            Some(b) => vec![b],
            None => bail!("unknown benchmark `{n}`; known: {}", NAMES.join(", ")),
        },
    };
    for (bench, package) in selected {
        let example = root.join("crates").join(package).join("examples/bench.rs");
        if !example.exists() {
            println!(
                "bench {bench}: not written yet ({} is missing)",
                example.display()
            );
            continue;
        }
        println!("== bench {bench} ==");
        if *bench == "lsp" {
            // Its shared-servers part runs the binary, as a user does.
            crate::build_release_binary(root)?;
        }
        run_cmd(
            Command::new("cargo")
                .current_dir(root)
                .args([
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    package,
                    "--example",
                    "bench",
                ])
                .env("PATH", fixture_path(root))
                .env("AGENT_TOOLS_FIXTURES", fixtures::dir(root)),
        )?;
    }
    Ok(())
}
