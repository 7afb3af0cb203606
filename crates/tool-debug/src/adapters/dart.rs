//! The Dart adapter (`dart debug_adapter`): launches take the plain
//! arguments; attaching goes through the VM service's websocket.

use crate::catalog::ResolvedAdapter;
use serde_json::{json, Value};

pub(super) fn attach(adapter: &ResolvedAdapter, port: u16) -> Value {
    json!({
        "vmServiceUri": format!("ws://127.0.0.1:{port}/ws"),
        "cwd": adapter.project_dir,
    })
}
