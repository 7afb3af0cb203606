//! What the binary (and any harness that wants the defaults) knows about a
//! run before binding it: the root, the vibe commands, and the config files:
//! the user's (`$XDG_CONFIG_HOME/agent-tools/config.toml`, else
//! `~/.config/agent-tools/config.toml`), the harness-supplied one, and the
//! project's (`.agent-tools.toml` at the workspace root; only its `[lsp]`
//! and `[debug]` sections are read, and a command they name runs only in a
//! trusted workspace).
//!
//! Config mistakes are named, never swallowed: every message says the file,
//! the section, the key path and (for a bad value) the value, on one line —
//! `config agent-tools.toml: [eval] max_output_bytes = 100: must be at least 256`.

use serde::de::DeserializeOwned;
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
    /// The highest tier the run's surface sees (`None`: exec). A run that
    /// cannot exec never starts a server in a mode that runs the project's
    /// own code (rust-analyzer's build scripts and proc macros).
    pub surface: Option<tool_core::Tier>,
    /// The harness-supplied config (`--config`).
    pub config: RunConfig,
    /// The user's own config file, read under the harness's (`None`: none).
    pub user_config: Option<RunConfig>,
    /// Whether the checkout is trusted to name commands in its project
    /// config (`--trust-workspace`).
    pub trust_workspace: bool,
}

/// The project config's file name, at the workspace root.
pub const PROJECT_CONFIG: &str = ".agent-tools.toml";

/// Where the user's config file is: `$XDG_CONFIG_HOME/agent-tools/config.toml`,
/// else `$HOME/.config/agent-tools/config.toml` (`None` without either).
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("agent-tools").join("config.toml"))
}

/// The config file (TOML). Each tool family reads its own section; unknown
/// keys inside a section are that family's to reject.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The file this config was read from, named in every config error.
    #[serde(skip)]
    pub source: Option<PathBuf>,
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
    pub vibe: Option<toml::Value>,
    #[serde(default)]
    pub astgrep: Option<toml::Value>,
    #[serde(default)]
    pub mcp: Option<toml::Value>,
    /// How staged changes are previewed, for every tool that stages.
    #[serde(default)]
    pub staging: Option<toml::Value>,
}

/// `[vibe]`: the worker commands and how many workers run at once.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VibeConfig {
    pub fast: Option<String>,
    pub good: Option<String>,
    /// How many workers run at once; more are queued (default
    /// `tool_vibe::DEFAULT_MAX_WORKERS`, 4).
    pub max_workers: Option<usize>,
    /// How long `batch`, once its input has ended, waits for workers still
    /// running or queued before it kills them, in seconds (default
    /// [`DEFAULT_BATCH_WAIT_SECONDS`]).
    pub batch_wait_seconds: Option<u64>,
}

/// How long `batch` waits for unfinished workers after its input ended,
/// unless `[vibe] batch_wait_seconds` says otherwise.
pub const DEFAULT_BATCH_WAIT_SECONDS: u64 = 300;

impl RunConfig {
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        let mut config: RunConfig = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            let message = e.message().trim().replace('\n', "; ");
            match line {
                Some(n) => format!("config {}: line {n}: {message}", path.display()),
                None => format!("config {}: {message}", path.display()),
            }
        })?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// The user's config file, when there is one (a file that exists but
    /// does not parse is an error, named by its path).
    pub fn load_user() -> Result<Option<Self>, String> {
        match user_config_path() {
            Some(p) if p.is_file() => RunConfig::load(&p).map(Some),
            _ => Ok(None),
        }
    }

    /// The project config's `[lsp]` section, when `root` has a
    /// `.agent-tools.toml` (only `[lsp]` and `[debug]` are read: a checkout
    /// does not choose the surface or the other families' settings).
    pub fn project_lsp(root: &Path) -> Result<Option<toml::Value>, String> {
        RunConfig::project_section(root, "lsp")
    }

    /// The project config's `[debug]` section (its adapters under the
    /// trust rule), when `root` has a `.agent-tools.toml`.
    pub fn project_debug(root: &Path) -> Result<Option<toml::Value>, String> {
        RunConfig::project_section(root, "debug")
    }

    fn project_section(root: &Path, name: &str) -> Result<Option<toml::Value>, String> {
        let path = root.join(PROJECT_CONFIG);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read project config {}: {e}", path.display()))?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| {
            format!(
                "project config {}: {}",
                path.display(),
                e.message().trim().replace('\n', "; ")
            )
        })?;
        Ok(table.get(name).cloned())
    }

    /// `message` about this config, prefixed with the file it came from:
    /// `config FILE: MESSAGE`.
    pub fn error(&self, message: impl std::fmt::Display) -> String {
        match &self.source {
            Some(p) => format!("config {}: {message}", p.display()),
            None => format!("config: {message}"),
        }
    }
}

/// Deserialize the config section `[name]` (an absent one gives the
/// defaults). A mistake is named by its key path and value:
/// `[lsp] request_timeout_ms = "x": invalid type: string "x", expected u64`.
pub fn parse_section<T: DeserializeOwned + Default>(
    name: &str,
    section: Option<&toml::Value>,
) -> Result<T, String> {
    let Some(value) = section else {
        return Ok(T::default());
    };
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path();
        let shown = value_at(value, path)
            .filter(|v| !v.is_table() && !v.is_array())
            .map(|v| format!(" = {v}"))
            .unwrap_or_default();
        // The toml deserializer appends its own partial key path on later
        // lines; the path above is the whole one.
        let inner = e.inner().to_string();
        let message = inner.lines().next().unwrap_or_default().trim().to_string();
        match path.to_string().as_str() {
            "." => format!("[{name}]: {message}"),
            key => format!("[{name}] {key}{shown}: {message}"),
        }
    })
}

/// A bad value's message: `[name] key = value: why`.
pub fn bad_value(name: &str, key: &str, value: impl std::fmt::Display, why: &str) -> String {
    format!("[{name}] {key} = {value}: {why}")
}

/// The value at a deserializer path inside a section, if it exists.
fn value_at<'a>(
    mut value: &'a toml::Value,
    path: &serde_path_to_error::Path,
) -> Option<&'a toml::Value> {
    use serde_path_to_error::Segment;
    for segment in path {
        value = match segment {
            Segment::Map { key } => value.get(key.as_str())?,
            Segment::Seq { index } => value.get(*index)?,
            Segment::Enum { .. } | Segment::Unknown => return None,
        };
    }
    Some(value)
}

impl RunOptions {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunOptions {
            root: root.into(),
            ..Default::default()
        }
    }

    /// The vibe commands, the command line winning over the config file's
    /// `[vibe]` section.
    pub fn vibe_commands(&self) -> Result<(Option<String>, Option<String>), String> {
        let cfg = self.vibe_config()?;
        Ok((
            self.vibe_fast.clone().or(cfg.fast),
            self.vibe_good.clone().or(cfg.good),
        ))
    }

    /// The config file's `[vibe]` section, checked.
    pub fn vibe_config(&self) -> Result<VibeConfig, String> {
        let cfg: VibeConfig = parse_section("vibe", self.config.vibe.as_ref())?;
        if cfg.max_workers == Some(0) {
            return Err(bad_value("vibe", "max_workers", 0, "must be at least 1"));
        }
        Ok(cfg)
    }
}
