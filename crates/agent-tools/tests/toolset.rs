//! The Toolset builder registers a family's tools only when its resource is
//! bound, and says why not otherwise.

use agent_tools::{BindingState, ToolsetBuilder};
use serde_json::{json, Value};
use std::sync::Arc;
use tool_core::{
    async_trait, schema_for, Binding, CallContext, Registry, RegistryError, RunContext, Surface,
    Tier, Tool, ToolError, ToolOutput, ToolSpec,
};

/// A real (tiny) tool: lists the workspace root's entries.
struct ListRoot {
    root: std::path::PathBuf,
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

struct ListBinding;

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

#[tokio::test]
async fn only_bound_resources_register() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.txt"), "").unwrap();
    std::fs::write(dir.path().join("a.txt"), "").unwrap();

    let unbound = ToolsetBuilder::new(dir.path())
        .unwrap()
        .unbound("astgrep", "no parser for this run")
        .build()
        .unwrap();
    assert!(unbound.registry().specs(Surface::FULL).is_empty());
    assert_eq!(
        unbound.state("astgrep"),
        BindingState::Unbound {
            why: "no parser for this run".into()
        }
    );

    let bound = ToolsetBuilder::new(dir.path())
        .unwrap()
        .bind("astgrep", Box::new(ListBinding))
        .build()
        .unwrap();
    assert_eq!(
        bound.state("astgrep"),
        BindingState::Bound {
            resource: "directory lister".into()
        }
    );
    let out = bound
        .registry()
        .call(
            Surface::READ_ONLY,
            "list_root",
            json!({}),
            CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "a.txt\nb.txt");
}

#[test]
fn a_missing_root_is_an_error() {
    assert!(ToolsetBuilder::new("/nonexistent/agent-tools-root").is_err());
}
