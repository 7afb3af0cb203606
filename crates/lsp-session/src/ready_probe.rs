//! A catalog entry's proof that its server is ready: a command whose answer
//! comes once the open file's project is loaded.

use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// A command whose answer proves the server ready (see
/// [`crate::catalog::ServerEntry::ready_probe`]). In `arguments`, the string `{file}`
/// stands for the path of a document open in the server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadyProbe {
    pub command: String,
    #[serde(default)]
    pub arguments: Vec<Value>,
}

impl ReadyProbe {
    /// The `workspace/executeCommand` parameters for the open `file`.
    pub fn params(&self, file: &Path) -> Value {
        fn fill(v: &Value, file: &str) -> Value {
            match v {
                Value::String(s) if s == "{file}" => Value::String(file.to_string()),
                Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, file)).collect()),
                Value::Object(o) => {
                    Value::Object(o.iter().map(|(k, v)| (k.clone(), fill(v, file))).collect())
                }
                other => other.clone(),
            }
        }
        let file = file.to_string_lossy();
        serde_json::json!({
            "command": self.command,
            "arguments": self.arguments.iter().map(|a| fill(a, &file)).collect::<Vec<_>>(),
        })
    }
}
