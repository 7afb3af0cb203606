//! Which servers a workspace-wide symbol query asks when no file names one:
//! the servers already running (not the linters beside them), or else the servers of the languages whose
//! files the workspace holds, each started for the first such file (found
//! by a bounded walk) — never every server that could start at the root (a
//! C project would otherwise start the servers of bash, CSS, YAML, … whose
//! entries need no project file).

use crate::catalog::Role;
use crate::client::LspClient;
use crate::source_walk::source_walk;
use crate::supervisor::{LspSupervisor, ServerSlot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// At most this many entries of the workspace are looked at to find which
/// languages it holds.
const MAX_WALKED: usize = 20_000;
/// Nor deeper than this.
const MAX_DEPTH: usize = 8;

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
    let first_files = first_file_per_name(sup.workspace().root());
    for entry in sup.catalog().entries() {
        if entry.role != Role::Server || !entry.workspace_symbols {
            continue;
        }
        let file = entry
            .extensions
            .keys()
            .map(|e| format!(".{e}"))
            .chain(entry.file_names.keys().cloned())
            .find_map(|key| first_files.get(&key));
        if let Some(file) = file {
            if let Ok(t) = sup.target_for(file).await {
                let _ = t.client.sync_file(file, &t.language_id).await;
                add(&mut servers, (t.client, t.slot));
            }
        }
    }
    servers
}

fn add(servers: &mut Vec<Asked>, server: Asked) {
    if !servers.iter().any(|(c, _)| Arc::ptr_eq(c, &server.0)) {
        servers.push(server);
    }
}

/// The first file (in path order) of each extension (as `.ext`) and each
/// whole file name under `root`.
fn first_file_per_name(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut first = BTreeMap::new();
    let walk = source_walk(root).max_depth(Some(MAX_DEPTH)).build();
    for entry in walk.take(MAX_WALKED).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(ext) = path.extension() {
            first
                .entry(format!(".{}", ext.to_string_lossy()))
                .or_insert_with(|| path.to_path_buf());
        }
        first.entry(name).or_insert_with(|| path.to_path_buf());
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_file_of_each_extension_and_name_in_path_order() {
        let d = tempfile::tempdir().unwrap();
        for f in ["b/z.c", "a/y.c", "a/Makefile", "node_modules/x.ts", "s.sh"] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let first = first_file_per_name(d.path());
        let shown: Vec<String> = first
            .iter()
            .map(|(k, p)| format!("{k} {}", p.strip_prefix(d.path()).unwrap().display()))
            .collect();
        assert_eq!(
            shown,
            [
                ".c a/y.c",
                ".sh s.sh",
                "Makefile a/Makefile",
                "s.sh s.sh",
                "y.c a/y.c",
                "z.c b/z.c"
            ]
        );
    }
}
