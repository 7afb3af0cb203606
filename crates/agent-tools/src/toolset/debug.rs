//! Binding the `debug` family's resource (crate `tool-debug`): a
//! debug-session supervisor, one session per conversation.
//!
//! The binary reads the optional `[debug]` section of the config file
//! (`ttl_seconds`, `wait_seconds`, `handshake_seconds`); a harness builds its
//! own [`DebugSupervisor`] (with its own adapters, PATH and limits) and binds
//! it with [`ToolsetBuilder::debug`]. The tool registers only when the run
//! has a conversation id, as the spec requires.

use super::NotBound;
use crate::options::{bad_value, parse_section};
use crate::{RunOptions, ToolsetBuilder};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tool_core::{Binding, RunContext};
use tool_debug::{DebugBinding, DebugConfig, DebugSupervisor};

/// The `[debug]` section of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DebugSection {
    /// Hard lifetime of a session (default 1800).
    ttl_seconds: Option<u64>,
    /// How long launch/continue/steps wait for a stop (default 30).
    wait_seconds: Option<f64>,
    /// How long the adapter may take to start the program (default 120).
    handshake_seconds: Option<u64>,
}

/// The supervisor config the binary uses, from the config file.
pub(crate) fn config_from(opts: &RunOptions) -> Result<DebugConfig, String> {
    let section: DebugSection = parse_section("debug", opts.config.debug.as_ref())?;
    let mut cfg = DebugConfig::default();
    if let Some(s) = section.ttl_seconds {
        if s == 0 {
            return Err(bad_value("debug", "ttl_seconds", s, "must be at least 1"));
        }
        cfg.ttl = Duration::from_secs(s);
    }
    if let Some(s) = section.wait_seconds {
        if !(s.is_finite() && s > 0.0) {
            return Err(bad_value(
                "debug",
                "wait_seconds",
                s,
                "must be a positive number",
            ));
        }
        cfg.default_wait = Duration::from_secs_f64(s);
    }
    if let Some(s) = section.handshake_seconds {
        if s == 0 {
            return Err(bad_value(
                "debug",
                "handshake_seconds",
                s,
                "must be at least 1",
            ));
        }
        cfg.handshake_timeout = Duration::from_secs(s);
    }
    Ok(cfg)
}

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let cfg = config_from(opts).map_err(NotBound::Config)?;
    if run.conversation_id.is_none() {
        return Err(NotBound::Unavailable(
            "the run has no conversation id; the debug tool is bound to one".into(),
        ));
    }
    Ok(Box::new(DebugBinding::new(DebugSupervisor::new(cfg))))
}

impl ToolsetBuilder {
    /// Bind the debug tool to `supervisor` (sessions for this run's
    /// conversation). The tool registers only with a conversation id.
    pub fn debug(self, supervisor: Arc<DebugSupervisor>) -> Self {
        self.bind("debug", Box::new(DebugBinding::new(supervisor)))
    }
}
