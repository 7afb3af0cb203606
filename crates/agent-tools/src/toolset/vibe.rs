//! Binding the `vibe` family's resource (crate `tool-vibe`): a roster of
//! background workers.
//!
//! The binary turns vibe mode on when it is given worker commands
//! (`--vibe-fast 'CMD'`, `--vibe-good 'CMD'`, or `[vibe] fast/good` in the
//! config file); each worker runs its tier's command through `sh -c` in the
//! workspace; at most `[vibe] max_workers` (default 4) run at once, the
//! rest queue. A harness binds its own [`Roster`] with
//! [`ToolsetBuilder::vibe`] and keeps a clone to switch vibe mode during the
//! run ([`Roster::set_vibe_mode`]).

use super::NotBound;
use crate::{RunOptions, ToolsetBuilder};
use std::sync::Arc;
use tool_core::{Binding, RunContext};
use tool_vibe::{CommandBackend, Roster, VibeBinding};

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let (fast, good) = opts.vibe_commands().map_err(NotBound::Config)?;
    let max_workers = opts
        .vibe_config()
        .map_err(NotBound::Config)?
        .max_workers
        .unwrap_or(tool_vibe::DEFAULT_MAX_WORKERS);
    for (tier, cmd) in [("fast", &fast), ("good", &good)] {
        if let Some(c) = cmd {
            if c.trim().is_empty() {
                return Err(NotBound::Config(format!(
                    "[vibe] {tier} (or --vibe-{tier}): the worker command is empty"
                )));
            }
        }
    }
    if fast.is_none() && good.is_none() {
        return Err(NotBound::Unavailable(
            "vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' \
                    and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)"
                .into(),
        ));
    }
    let mut backend = CommandBackend::new(run.workspace.root());
    if let Some(c) = fast {
        backend = backend.fast(c);
    }
    if let Some(c) = good {
        backend = backend.good(c);
    }
    Ok(Box::new(VibeBinding::new(
        Roster::new(Arc::new(backend)).max_workers(max_workers),
    )))
}

impl ToolsetBuilder {
    /// Bind the vibe tools to `roster`. Keep a clone of it: its vibe mode
    /// decides whether the five tools are registered, and switching it off
    /// kills every worker.
    pub fn vibe(self, roster: Roster) -> Self {
        self.bind("vibe", Box::new(VibeBinding::new(roster)))
    }
}
