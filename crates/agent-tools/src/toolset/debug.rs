//! Binding the `debug` family's resource (crate `tool-debug`): a
//! debug-session supervisor, one session per conversation.
//!
//! The binary reads the `[debug]` sections of the config layers, later
//! winning: the user's config file, the project's `.agent-tools.toml`, the
//! harness-supplied config. Each may set `ttl_seconds`, `wait_seconds`,
//! `handshake_seconds`, add or replace adapters by id (`[[debug.adapters]]`,
//! in the format of the built-in `catalog/adapters.toml`) and `disable`
//! ids. A project adapter that would start something new is used only with
//! `trust_workspace`; otherwise it is reported, never run
//! ([`tool_debug::config`]). A harness builds its own [`DebugSupervisor`]
//! (with its own adapters, PATH and limits) and binds it with
//! [`ToolsetBuilder::debug`]. The tool registers only when the run has a
//! conversation id, as the spec requires.

use super::NotBound;
use crate::options::{bad_value, parse_section, PROJECT_CONFIG};
use crate::{RunConfig, RunOptions, ToolsetBuilder};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tool_core::{Binding, RunContext};
use tool_debug::{
    AdapterConfig, AdapterKind, AdapterSpec, DebugBinding, DebugConfig, DebugSupervisor,
};

/// The `[debug]` section of one config layer.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DebugSection {
    /// Hard lifetime of a session (default 1800).
    ttl_seconds: Option<u64>,
    /// How long launch/continue/steps wait for a stop (default 30).
    wait_seconds: Option<f64>,
    /// How long the adapter may take to start the program (default 120).
    handshake_seconds: Option<u64>,
    /// Adapters added, or replacing a built-in one with the same id.
    #[serde(default)]
    adapters: Vec<AdapterSpec>,
    /// Adapter ids to drop.
    #[serde(default)]
    disable: Vec<String>,
}

impl DebugSection {
    /// One layer's section, parsed and checked.
    fn parse(section: Option<&toml::Value>) -> Result<Self, String> {
        let section: DebugSection = parse_section("debug", section)?;
        if section.ttl_seconds == Some(0) {
            return Err(bad_value("debug", "ttl_seconds", 0, "must be at least 1"));
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
        }
        if section.handshake_seconds == Some(0) {
            return Err(bad_value(
                "debug",
                "handshake_seconds",
                0,
                "must be at least 1",
            ));
        }
        for (i, spec) in section.adapters.iter().enumerate() {
            // debugpy's command is the project's interpreter's; every other
            // kind starts one of its command lines.
            let names_one = spec.commands.iter().any(|c| !c.is_empty());
            if spec.kind != AdapterKind::Debugpy && !names_one {
                return Err(format!(
                    "[debug] adapters[{i}].commands (id {:?}): names no command line; give at least one, e.g. [[\"my-adapter\", \"--stdio\"]]",
                    spec.id
                ));
            }
        }
        Ok(section)
    }

    /// Each disabled id names one of `known`.
    fn check_disabled(&self, known: &[String]) -> Result<(), String> {
        match self.disable.iter().find(|id| !known.contains(id)) {
            None => Ok(()),
            Some(id) => Err(bad_value(
                "debug",
                "disable",
                format!("[{id:?}]"),
                &format!("no adapter has the id {id:?} (known: {})", known.join(", ")),
            )),
        }
    }

    /// Its adapter changes, taken out; the limits stay.
    fn take_adapters(&mut self) -> AdapterConfig {
        AdapterConfig {
            adapters: std::mem::take(&mut self.adapters),
            disable: std::mem::take(&mut self.disable),
            untrusted: Vec::new(),
        }
    }

    /// `later`'s limits over these.
    fn then(self, later: DebugSection) -> DebugSection {
        DebugSection {
            ttl_seconds: later.ttl_seconds.or(self.ttl_seconds),
            wait_seconds: later.wait_seconds.or(self.wait_seconds),
            handshake_seconds: later.handshake_seconds.or(self.handshake_seconds),
            adapters: Vec::new(),
            disable: Vec::new(),
        }
    }
}

/// The supervisor config the binary uses: every layer's `[debug]` folded,
/// the project's adapters under the trust rule.
pub(crate) fn config_from(opts: &RunOptions) -> Result<DebugConfig, NotBound> {
    let in_project =
        |e: String| NotBound::ConfigIn(format!("project config {PROJECT_CONFIG}: {e}"));
    let user = match &opts.user_config {
        Some(u) => Some((
            DebugSection::parse(u.debug.as_ref()).map_err(|e| NotBound::ConfigIn(u.error(e)))?,
            u,
        )),
        None => None,
    };
    let project = match RunConfig::project_debug(&opts.root).map_err(NotBound::ConfigIn)? {
        Some(section) => Some(DebugSection::parse(Some(&section)).map_err(in_project)?),
        None => None,
    };
    let mut harness = DebugSection::parse(opts.config.debug.as_ref()).map_err(NotBound::Config)?;

    // A disabled id must name an adapter: a built-in one, or one some layer
    // adds (a typo would otherwise disable nothing, silently).
    let mut known: Vec<String> = tool_debug::adapters::builtin()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let layers = user
        .iter()
        .map(|(l, _)| l)
        .chain(&project)
        .chain([&harness]);
    for layer in layers {
        known.extend(layer.adapters.iter().map(|s| s.id.clone()));
    }
    if let Some((layer, u)) = &user {
        layer
            .check_disabled(&known)
            .map_err(|e| NotBound::ConfigIn(u.error(e)))?;
    }
    if let Some(layer) = &project {
        layer.check_disabled(&known).map_err(in_project)?;
    }
    harness.check_disabled(&known).map_err(NotBound::Config)?;

    let mut limits = DebugSection::default();
    let mut adapters = AdapterConfig::default();
    if let Some((mut layer, _)) = user {
        adapters = adapters.then(layer.take_adapters());
        limits = limits.then(layer);
    }
    if let Some(mut layer) = project {
        adapters =
            adapters.then_project(layer.take_adapters(), PROJECT_CONFIG, opts.trust_workspace);
        limits = limits.then(layer);
    }
    adapters = adapters.then(harness.take_adapters());
    let limits = limits.then(harness);

    let mut cfg = DebugConfig::default().with_adapters(adapters);
    if let Some(s) = limits.ttl_seconds {
        cfg.ttl = Duration::from_secs(s);
    }
    if let Some(s) = limits.wait_seconds {
        cfg.default_wait = Duration::from_secs_f64(s);
    }
    if let Some(s) = limits.handshake_seconds {
        cfg.handshake_timeout = Duration::from_secs(s);
    }
    Ok(cfg)
}

/// The binding the binary uses for this family.
pub(crate) fn default_binding(
    opts: &RunOptions,
    run: &RunContext,
) -> Result<Box<dyn Binding>, NotBound> {
    let cfg = config_from(opts)?;
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
