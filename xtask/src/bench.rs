//! Benchmarks: this project and the named peer side by side, in one run, on
//! the same input, printing both times and the ratio. Each tool family adds
//! its own entry to [`NAMES`] and [`run`].

use anyhow::{bail, Result};
use std::path::Path;

pub const NAMES: &[&str] = &[];

pub fn run(_root: &Path, name: Option<&str>) -> Result<()> {
    match name {
        None if NAMES.is_empty() => {
            println!("no benchmarks yet: each tool issue adds its own (see xtask/src/bench.rs)");
            Ok(())
        }
        None => {
            for n in NAMES {
                run(_root, Some(n))?;
            }
            Ok(())
        }
        Some(other) => bail!(
            "unknown benchmark `{other}`; known: {}",
            if NAMES.is_empty() {
                "none yet".to_string()
            } else {
                NAMES.join(", ")
            }
        ),
    }
}
