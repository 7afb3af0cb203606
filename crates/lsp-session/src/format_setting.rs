//! One language's `[lsp.format_on_write]` setting, as the configuration
//! reads it.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::time::Duration;

/// How long formatting one file may take, unless `timeout_ms` says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One language's `[lsp.format_on_write]` setting: `true`/`false`, or a
/// table (`enabled`, default true; `command`; `server`; `timeout_ms`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FormatSetting {
    pub enabled: bool,
    /// A formatter reading the file on stdin and printing it formatted.
    pub command: Option<Vec<String>>,
    /// The catalog id of the server (or linter) that formats; default the
    /// first of the file's that offers formatting.
    pub server: Option<String>,
    pub timeout_ms: Option<u64>,
}

impl FormatSetting {
    pub fn timeout(&self) -> Duration {
        self.timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingTable {
    #[serde(default = "yes")]
    enabled: bool,
    command: Option<Vec<String>>,
    server: Option<String>,
    timeout_ms: Option<u64>,
}

fn yes() -> bool {
    true
}

impl<'de> Deserialize<'de> for FormatSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FormatSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or a table with `command`, `server`, `timeout_ms`")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<FormatSetting, E> {
                Ok(FormatSetting {
                    enabled: v,
                    ..FormatSetting::default()
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FormatSetting, A::Error> {
                let t = SettingTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if t.command.as_ref().is_some_and(std::vec::Vec::is_empty) {
                    return Err(de::Error::invalid_length(0, &"a command line"));
                }
                Ok(FormatSetting {
                    enabled: t.enabled,
                    command: t.command,
                    server: t.server,
                    timeout_ms: t.timeout_ms,
                })
            }
        }
        d.deserialize_any(V)
    }
}
