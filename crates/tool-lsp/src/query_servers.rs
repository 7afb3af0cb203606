//! Which servers a workspace-wide symbol query asks when no file names one:
//! the servers already running (not the linters beside them), or else the servers of the languages whose
//! files the workspace holds, each started for the first such file (found
//! by a bounded walk) — never every server that could start at the root (a
//! C project would otherwise start the servers of bash, CSS, YAML, … whose
//! entries need no project file).

use crate::catalog::{Resolution, Role, ServerEntry};
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
    let root = sup.workspace().root().to_path_buf();
    let first_files = first_file_per_name(&root);
    let with_files: Vec<(&ServerEntry, &PathBuf)> = sup
        .catalog()
        .entries()
        .iter()
        .filter(|e| e.role == Role::Server && e.workspace_symbols)
        .filter_map(|e| {
            let file = e
                .extensions
                .keys()
                .map(|x| format!(".{x}"))
                .chain(e.file_names.keys().cloned())
                .find_map(|key| first_files.get(&key))?;
            Some((e, file))
        })
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

/// The first file of each extension (as `.ext`) and each whole file name
/// under `root`: the shallowest, then the first in path order.
pub(crate) fn first_file_per_name(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut first: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
    let walk = source_walk(root).max_depth(Some(MAX_DEPTH)).build();
    for entry in walk.take(MAX_WALKED).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let (path, depth) = (entry.path(), entry.depth());
        let mut keep = |key: String| {
            let slot = first.entry(key).or_insert((depth, path.to_path_buf()));
            if depth < slot.0 {
                *slot = (depth, path.to_path_buf());
            }
        };
        if let Some(ext) = path.extension() {
            keep(format!(".{}", ext.to_string_lossy()));
        }
        keep(entry.file_name().to_string_lossy().into_owned());
    }
    first.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shallowest_file_of_each_extension_and_name_then_path_order() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "b/z.c",
            "a/y.c",
            "a/Makefile",
            "node_modules/x.ts",
            "s.sh",
            "a/b/t.sh",
            "w.c",
        ] {
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
                ".c w.c",
                ".sh s.sh",
                "Makefile a/Makefile",
                "s.sh s.sh",
                "t.sh a/b/t.sh",
                "w.c w.c",
                "y.c a/y.c",
                "z.c b/z.c"
            ]
        );
    }
}
