//! The `[mcp]` section of the config file: how the host approves write and
//! exec calls, and how it paces progress and cancellation.

use serde::Deserialize;
use std::time::Duration;

/// Who approves write and exec tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    /// Trust the client's own confirmation: MCP clients confirm tool calls
    /// (using the annotations) before sending them.
    #[default]
    Client,
    /// Ask again through MCP elicitation before every write or exec call; a
    /// client without elicitation gets every such call refused.
    Elicit,
}

/// The `[mcp]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    pub approval: ApprovalPolicy,
    /// How often a running call reports "still running" to a client that gave
    /// a progress token (clients reset their request timeouts on progress).
    pub progress_interval_ms: u64,
    /// How long a cancelled call may take to wind down (interrupt its cell,
    /// end its wait) before it is dropped.
    pub cancel_grace_ms: u64,
    /// How long an elicitation (approval or question) may wait for the person.
    pub elicitation_timeout_seconds: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            approval: ApprovalPolicy::Client,
            progress_interval_ms: 5_000,
            cancel_grace_ms: 10_000,
            elicitation_timeout_seconds: 600,
        }
    }
}

impl McpConfig {
    /// Parse the `[mcp]` section of the config file (absent: the defaults).
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, String> {
        crate::options::parse_section("mcp", section)
    }

    pub fn progress_interval(&self) -> Duration {
        Duration::from_millis(self.progress_interval_ms.max(50))
    }

    pub fn cancel_grace(&self) -> Duration {
        Duration::from_millis(self.cancel_grace_ms)
    }

    pub fn elicitation_timeout(&self) -> Duration {
        Duration::from_secs(self.elicitation_timeout_seconds.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_section_and_rejects_unknown_keys() {
        assert_eq!(McpConfig::from_section(None).unwrap(), McpConfig::default());
        let v: toml::Value =
            toml::from_str("approval = \"elicit\"\nprogress_interval_ms = 200").unwrap();
        let c = McpConfig::from_section(Some(&v)).unwrap();
        assert_eq!(c.approval, ApprovalPolicy::Elicit);
        assert_eq!(c.progress_interval(), Duration::from_millis(200));
        assert_eq!(c.cancel_grace_ms, 10_000);
        let v: toml::Value = toml::from_str("aproval = \"client\"").unwrap();
        let err = McpConfig::from_section(Some(&v)).unwrap_err();
        assert_eq!(
            err,
            "[mcp] aproval = \"client\": unknown field `aproval`, expected one of `approval`, `progress_interval_ms`, \
             `cancel_grace_ms`, `elicitation_timeout_seconds`"
        );
        let v: toml::Value = toml::from_str("approval = \"always\"").unwrap();
        assert!(McpConfig::from_section(Some(&v)).is_err());
    }
}
