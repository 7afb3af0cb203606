//! The Dart adapter (`dart debug_adapter`): launches take the plain
//! arguments; attaching goes through the VM service's websocket.

use super::{Adapter, RequestArguments};
use crate::catalog::ResolvedAdapter;
use serde_json::{json, Value};

/// The Dart and Flutter adapter.
pub struct Dart;

impl Adapter for Dart {
    fn attach_port(&self, adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        RequestArguments::plain(attach(adapter, port))
    }
}

fn attach(adapter: &ResolvedAdapter, port: u16) -> Value {
    json!({
        "vmServiceUri": format!("ws://127.0.0.1:{port}/ws"),
        "cwd": adapter.project_dir,
    })
}
