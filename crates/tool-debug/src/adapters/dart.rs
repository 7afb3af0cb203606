//! The Dart adapter (`dart debug_adapter`): launches take the plain
//! arguments; attaching goes through the VM service's websocket.

use crate::catalog::{AdapterKind, AdapterSpec, Connect, ResolvedAdapter};
use serde_json::{json, Value};

pub fn spec() -> AdapterSpec {
    AdapterSpec {
        id: "dart".into(),
        kind: AdapterKind::Dart,
        commands: vec![vec!["dart".into(), "debug_adapter".into()]],
        markers: vec!["pubspec.yaml".into()],
        extensions: vec!["dart".into()],
        connect: Connect::Stdio,
        launch_template: json!({}),
        evaluate_context: "repl".into(),
    }
}

pub(super) fn attach(adapter: &ResolvedAdapter, port: u16) -> Value {
    json!({
        "vmServiceUri": format!("ws://127.0.0.1:{port}/ws"),
        "cwd": adapter.project_dir,
    })
}
