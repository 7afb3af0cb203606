//! Small real tools for tests that need a family other than the one under
//! test (a tool bound next to it, a tool to bridge to).

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tool_core::{
    async_trait, schema_for, Binding, CallContext, Registry, RegistryError, RunContext, Tier, Tool,
    ToolError, ToolOutput, ToolSpec,
};

/// A read tool, `list_root`: the workspace root's entry names, sorted, one a
/// line.
pub struct ListRoot {
    pub root: PathBuf,
}

#[derive(serde::Deserialize, tool_core::schemars::JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
struct NoArgs {}

#[async_trait]
impl Tool for ListRoot {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "list_root",
            "List the workspace root.",
            Tier::Read,
            schema_for::<NoArgs>(),
        )
    }
    async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        let mut names: Vec<String> = std::fs::read_dir(&self.root)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.sort();
        Ok(ToolOutput::text(names.join("\n")))
    }
}

/// Binds [`ListRoot`] on the run's root (resource `directory lister`).
pub struct ListBinding;

impl Binding for ListBinding {
    fn resource(&self) -> &'static str {
        "directory lister"
    }
    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        registry.register(Arc::new(ListRoot {
            root: run.workspace.root().to_path_buf(),
        }))
    }
}
