//! What the binary (and any harness that wants the defaults) knows about a
//! run before binding it: the root, the vibe commands, and the config file.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One run's options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub root: PathBuf,
    pub conversation_id: Option<String>,
    /// Command line of the `fast` vibe worker; vibe mode is on when either
    /// command is given.
    pub vibe_fast: Option<String>,
    pub vibe_good: Option<String>,
    /// Whether a person can be asked on this process's terminal.
    pub interactive: bool,
    pub config: RunConfig,
}

/// The config file (TOML). Each tool family reads its own section; unknown
/// keys inside a section are that family's to reject.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// `read`, `write` or `exec`.
    pub surface: Option<String>,
    #[serde(default)]
    pub lsp: Option<toml::Value>,
    #[serde(default)]
    pub debug: Option<toml::Value>,
    #[serde(default)]
    pub eval: Option<toml::Value>,
    #[serde(default)]
    pub ask: Option<toml::Value>,
    #[serde(default)]
    pub vibe: Option<VibeConfig>,
    #[serde(default)]
    pub astgrep: Option<toml::Value>,
    #[serde(default)]
    pub mcp: Option<toml::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VibeConfig {
    pub fast: Option<String>,
    pub good: Option<String>,
}

impl RunConfig {
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("config {}: {e}", path.display()))
    }
}

impl RunOptions {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunOptions {
            root: root.into(),
            ..Default::default()
        }
    }

    /// The vibe commands, the command line winning over the config file.
    pub fn vibe_commands(&self) -> (Option<String>, Option<String>) {
        let cfg = self.config.vibe.clone().unwrap_or_default();
        (
            self.vibe_fast.clone().or(cfg.fast),
            self.vibe_good.clone().or(cfg.good),
        )
    }
}
