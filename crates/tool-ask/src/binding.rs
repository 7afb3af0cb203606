//! [`AskBinding`]: brings `ask_user` into a run's Registry when both a
//! question port and a target space are bound.

use crate::{AskDesk, AskUserTool, CardApprover};
use std::sync::Arc;
use tool_core::{Binding, Registry, RegistryError, RunContext};

/// The ask family's resource: one run's [`AskDesk`].
#[derive(Debug, Clone)]
pub struct AskBinding {
    desk: AskDesk,
}

impl AskBinding {
    pub fn new(desk: AskDesk) -> Self {
        AskBinding { desk }
    }

    pub fn desk(&self) -> &AskDesk {
        &self.desk
    }

    /// An approver that asks through the same port, numbering its cards in
    /// the same sequence as `ask_user`.
    pub fn approver(&self) -> CardApprover {
        CardApprover::new(self.desk.clone())
    }
}

impl Binding for AskBinding {
    fn resource(&self) -> &'static str {
        "question port + target space"
    }

    fn register(&self, _run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        registry.register(Arc::new(AskUserTool::new(self.desk.clone())))
    }

    fn doctor(&self, _run: &RunContext) -> Vec<String> {
        let port = self.desk.port();
        vec![format!(
            "ask_user: cards are shown on {} ({}); {}; cards expire after {} s",
            self.desk.target().label,
            port.describe(),
            if port.human_attached() {
                "a human is attached"
            } else {
                "no human is attached, so every question fails at once"
            },
            self.desk.expiry().as_secs()
        )]
    }
}
