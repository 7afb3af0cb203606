//! [`VibeBinding`]: brings the vibe roster into a run's Registry.

use crate::Roster;
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
