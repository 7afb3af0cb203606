//! The Toolset builder registers a family's tools only when its resource is
//! bound, and says why not otherwise.

use agent_tools::{BindingState, ToolsetBuilder};
use serde_json::json;
use test_support::tools::ListBinding;
use tool_core::{CallContext, Surface};

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
