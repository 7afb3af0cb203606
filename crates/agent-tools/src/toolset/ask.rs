//! Binding the `ask` family's resource (crate `tool-ask`): a question port
//! and a target space.
//!
//! The binary binds the terminal port; it has a human attached only when
//! stdin is a TTY, so under a pipeline or a service `ask_user` fails at once
//! instead of waiting. A harness with its own UI binds a
//! [`tool_ask::ChannelPort`] (or any [`QuestionPort`]) with
//! [`ToolsetBuilder::ask`].

use super::NotBound;
use crate::options::{bad_value, parse_section};
use crate::{RunOptions, ToolsetBuilder};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tool_ask::{AskBinding, AskDesk, CardApprover, QuestionPort, TargetSpace, TerminalPort};
use tool_core::{Binding, RunContext};

/// The `[ask]` section of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskConfig {
    /// Seconds a card waits for an answer before it expires.
    expiry_seconds: Option<u64>,
}

/// How long a card waits, from the `[ask]` section (its mistakes named).
pub(crate) fn expiry(opts: &RunOptions) -> Result<Duration, String> {
    let cfg: AskConfig = parse_section("ask", opts.config.ask.as_ref())?;
    match cfg.expiry_seconds {
        None => Ok(tool_ask::DEFAULT_EXPIRY),
        Some(0) => Err(bad_value("ask", "expiry_seconds", 0, "must be at least 1")),
        Some(s) => Ok(Duration::from_secs(s)),
    }
}

/// The binding the binary uses for this family: the controlling terminal.
pub(crate) fn default_binding(
    opts: &RunOptions,
    _run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let expiry = expiry(opts).map_err(NotBound::Config)?;
    let desk = AskDesk::new(
        Arc::new(TerminalPort::new(opts.interactive)),
        TargetSpace::terminal(),
    )
    .with_expiry(expiry);
    Ok(Box::new(AskBinding::new(desk)))
}

impl ToolsetBuilder {
    /// Bind `ask_user`: cards go through `port` to `target`, expiring after
    /// [`tool_ask::DEFAULT_EXPIRY`].
    pub fn ask(self, port: Arc<dyn QuestionPort>, target: TargetSpace) -> Self {
        self.ask_desk(AskDesk::new(port, target))
    }

    /// Bind `ask_user` with a desk you configured (expiry).
    pub fn ask_desk(self, desk: AskDesk) -> Self {
        self.bind("ask", Box::new(AskBinding::new(desk)))
    }

    /// Bind `ask_user` and also make the same desk the run's approver, so
    /// "may I …?" cards for write and exec tools go through the same port,
    /// numbered in the same sequence, denied unless a human approves.
    pub fn ask_with_approval(mut self, desk: AskDesk) -> Self {
        self.approver = Some(Arc::new(CardApprover::new(desk.clone())));
        self.ask_desk(desk)
    }
}
