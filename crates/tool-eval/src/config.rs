//! What a run may configure about its kernels (the `[eval]` section of the
//! config file), and the languages a cell can be written in.

use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The language of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    #[serde(alias = "py")]
    Python,
    #[serde(alias = "js", alias = "node")]
    Javascript,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::Python, Language::Javascript];

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Javascript => "javascript",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `[eval]` config section. Every key is optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// The Python interpreter; default: the project's `.venv/bin/python`,
    /// then `venv/bin/python`, then `python3` on `$PATH`.
    pub python: Option<PathBuf>,
    /// The Node.js executable; default: `node` on `$PATH`.
    pub node: Option<PathBuf>,
    /// The idle budget of a cell when the call does not give one.
    pub idle_timeout_seconds: f64,
    /// The largest idle budget a call may ask for.
    pub max_idle_timeout_seconds: f64,
    /// How long an interrupted cell may take to stop before the kernel is killed.
    pub interrupt_grace_seconds: f64,
    /// How long a kernel may take to start.
    pub start_timeout_seconds: f64,
    /// Output text kept per cell (the first and last halves), in bytes.
    pub max_output_bytes: usize,
    /// Images kept per cell.
    pub max_images: usize,
    /// A command prefix that runs the kernel inside the conversation's
    /// isolated environment (e.g. `["bwrap", "--ro-bind", "/", "/", "--"]`).
    pub sandbox: Vec<String>,
    /// Extra environment variables for the kernels.
    pub env: BTreeMap<String, String>,
    /// Environment variables the kernels must not inherit.
    pub env_remove: Vec<String>,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            python: None,
            node: None,
            idle_timeout_seconds: 300.0,
            max_idle_timeout_seconds: 3600.0,
            interrupt_grace_seconds: 3.0,
            start_timeout_seconds: 60.0,
            max_output_bytes: 32 * 1024,
            max_images: 8,
            sandbox: Vec::new(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
        }
    }
}

impl EvalConfig {
    pub fn idle_timeout(&self) -> Duration {
        secs(self.idle_timeout_seconds)
    }
    pub fn max_idle_timeout(&self) -> Duration {
        secs(self.max_idle_timeout_seconds)
    }
    pub fn interrupt_grace(&self) -> Duration {
        secs(self.interrupt_grace_seconds)
    }
    pub fn start_timeout(&self) -> Duration {
        secs(self.start_timeout_seconds)
    }

    /// Reject values that cannot work, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        for (key, v) in [
            ("idle_timeout_seconds", self.idle_timeout_seconds),
            ("max_idle_timeout_seconds", self.max_idle_timeout_seconds),
            ("interrupt_grace_seconds", self.interrupt_grace_seconds),
            ("start_timeout_seconds", self.start_timeout_seconds),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "[eval] {key} = {v}: must be a positive number of seconds"
                ));
            }
        }
        if self.idle_timeout_seconds > self.max_idle_timeout_seconds {
            return Err(format!(
                "[eval] idle_timeout_seconds = {}: must not exceed max_idle_timeout_seconds ({})",
                self.idle_timeout_seconds, self.max_idle_timeout_seconds
            ));
        }
        if self.max_output_bytes < 256 {
            return Err(format!(
                "[eval] max_output_bytes = {}: must be at least 256",
                self.max_output_bytes
            ));
        }
        Ok(())
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.001))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bad_values() {
        let c = EvalConfig::default();
        assert_eq!(c.idle_timeout(), Duration::from_mins(5));
        assert!(c.validate().is_ok());
        let c = EvalConfig {
            idle_timeout_seconds: 10_000.0,
            ..EvalConfig::default()
        };
        expect_test::expect![
            "[eval] idle_timeout_seconds = 10000: must not exceed max_idle_timeout_seconds (3600)"
        ]
        .assert_eq(&c.validate().unwrap_err());
        let c = EvalConfig {
            interrupt_grace_seconds: -1.0,
            ..EvalConfig::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .contains("interrupt_grace_seconds"));
    }

    #[test]
    fn language_names_and_aliases() {
        let l: Language = serde_json::from_str("\"js\"").unwrap();
        assert_eq!(l, Language::Javascript);
        let l: Language = serde_json::from_str("\"python\"").unwrap();
        assert_eq!(l.as_str(), "python");
        assert!(serde_json::from_str::<Language>("\"ruby\"").is_err());
    }
}
