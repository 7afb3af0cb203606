//! Which servers a workspace-wide symbol query asks when no file names one:
//! the servers already running (not the linters beside them), or else the
//! servers of the languages whose files the workspace holds, each started
//! for the first such file (found by a bounded walk) — never every server
//! that could start at the root (a C project would otherwise start the
//! servers of bash, CSS, YAML, … whose entries need no project file).

use crate::catalog::{Resolution, Role, ServerEntry};
use crate::client::LspClient;
use crate::source_walk::first_file_per_name;
use crate::supervisor::{LspSupervisor, ServerSlot};
use std::path::PathBuf;
use std::sync::Arc;

/// A server to ask, and the slot it runs in.
pub(crate) type Asked = (Arc<LspClient>, Arc<ServerSlot>);

/// The servers to ask, each once. A server started here gets its first
/// file opened, so that one that indexes only open files (clangd without a
/// compile database) has something to search.
pub(crate) async fn servers_for_query(sup: &LspSupervisor) -> Vec<Asked> {
    let mut servers: Vec<Asked> = Vec::new();
    // Linters beside a file's server are not asked.
    for slot in sup
        .slots()
        .into_iter()
        .filter(|s| s.entry.role == Role::Server)
    {
        if let Ok(c) = sup.ensure_running(&slot).await {
            add(&mut servers, (c, slot));
        }
    }
    if !servers.is_empty() {
        return servers;
    }
    let root = sup.workspace().root().to_path_buf();
    let first_files = first_file_per_name(&root);
    let with_files: Vec<(&ServerEntry, &PathBuf)> = sup
        .catalog()
        .entries()
        .iter()
        .filter(|e| e.role == Role::Server && e.workspace_symbols)
        .filter_map(|e| Some((e, e.first_file_in(&first_files)?)))
        .collect();
    // The servers of programming languages (their entries need a project
    // file) first; the file-type servers that need none (HTML, CSS, YAML,
    // …) only when none of those starts.
    let (project, plain): (Vec<_>, Vec<_>) = with_files
        .into_iter()
        .partition(|(e, _)| !e.root_markers.is_empty());
    for group in [project, plain] {
        for (entry, file) in group {
            // At the workspace root when it is a project root of the entry
            // (a docs/ folder with a requirements.txt of its own must not
            // win over the root's pyproject.toml), else for the file.
            let at = match sup.resolve(entry, &root) {
                Ok(Resolution::Ready { .. }) => root.join(file.file_name().unwrap_or_default()),
                _ => file.clone(),
            };
            if let Ok(t) = sup.target_for(&at).await {
                let _ = t.client.sync_file(file, &t.language_id).await;
                add(&mut servers, (t.client, t.slot));
            }
        }
        if !servers.is_empty() {
            break;
        }
    }
    servers
}

fn add(servers: &mut Vec<Asked>, server: Asked) {
    if !servers.iter().any(|(c, _)| Arc::ptr_eq(c, &server.0)) {
        servers.push(server);
    }
}
