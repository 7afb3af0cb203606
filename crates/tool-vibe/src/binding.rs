//! [`VibeBinding`]: brings the vibe roster into a run's Registry, and
//! gives the roster the five tools it switches with vibe mode (the roster
//! itself knows no tool: the tools know the roster).

use crate::roster::{RosterInner, VibeTools};
use crate::tools::{self, TOOL_NAMES};
use crate::Roster;
use std::sync::{Arc, Weak};
use tool_core::{Binding, Registry, RegistryError, RunContext};

/// The vibe family's resource: one run's [`Roster`]. The five tools are in
/// the Registry only while its vibe mode is on.
#[derive(Debug, Clone)]
pub struct VibeBinding {
    roster: Roster,
}

impl VibeBinding {
    pub fn new(roster: Roster) -> Self {
        VibeBinding { roster }
    }

    /// The handle that switches vibe mode for this run.
    pub fn roster(&self) -> &Roster {
        &self.roster
    }
}

impl Roster {
    /// Bind to a run's Registry: the tools are registered now if vibe mode
    /// is on, and follow [`Roster::set_vibe_mode`] from here on.
    pub fn attach(&self, registry: &Registry) -> Result<(), RegistryError> {
        self.attach_tools(registry, Arc::new(FiveTools))
    }
}

/// The five vibe_* tools, as the roster switches them.
struct FiveTools;

impl VibeTools for FiveTools {
    fn register(
        &self,
        roster: Weak<RosterInner>,
        registry: &Registry,
    ) -> Result<(), RegistryError> {
        for tool in tools::all(roster) {
            let name = tool.spec().name;
            if !registry.contains(&name) {
                registry.register(tool)?;
            }
        }
        Ok(())
    }

    fn unregister(&self, registry: &Registry) {
        for name in TOOL_NAMES {
            let _ = registry.unregister(name);
        }
    }
}

impl Binding for VibeBinding {
    fn resource(&self) -> &'static str {
        "vibe roster"
    }

    fn register(&self, _run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        self.roster.attach(registry)
    }

    fn doctor(&self, _run: &RunContext) -> Vec<String> {
        let mut lines = vec![format!(
            "vibe mode {}; at most {} workers run at once, the rest queue",
            if self.roster.vibe_mode() { "on" } else { "off" },
            self.roster.capacity()
        )];
        lines.extend(
            self.roster
                .backend()
                .describe()
                .into_iter()
                .map(|l| format!("  {l}")),
        );
        lines
    }
}
