//! Which language server serves which file: per language, the server
//! commands in order of preference, the root markers, and the project
//! checker `diagnostics "*"` runs.
//!
//! A server can answer only when BOTH halves hold: a root marker is found
//! (nearest to the file, walking up, never above the workspace root) and its
//! binary resolves (project-local first, then `$PATH`). Every refusal names
//! the missing half and what was looked for. The harness extends or replaces
//! entries with [`CatalogConfig`], without code changes.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How a checker's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckerFormat {
    /// `pyright --outputjson` / `basedpyright --outputjson`.
    PyrightJson,
    /// `tsc --noEmit --pretty false`: `file(line,col): error TSnnnn: msg`.
    Tsc,
    /// `cargo check --message-format=json`.
    CargoJson,
    /// `go vet`: `file:line:col: msg` on stderr.
    GoVet,
    /// `dart analyze --format=machine`: `SEVERITY|TYPE|CODE|file|line|col|len|msg`.
    DartMachine,
    /// `clangd --check=FILE` per file of the compile database.
    ClangdCheck,
}

/// The command `diagnostics "*"` runs for a project.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckerSpec {
    /// Alternatives in order of preference; the first whose binary resolves
    /// runs.
    pub commands: Vec<Vec<String>>,
    pub format: CheckerFormat,
    /// Environment set for the checker (e.g. its own `CARGO_TARGET_DIR`, so
    /// it does not wait on the lock of a build the agent started).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// How the root is chosen among the markers found walking up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RootRule {
    /// The nearest directory holding a marker.
    #[default]
    Nearest,
    /// Cargo: the outermost `Cargo.toml` that declares `[workspace]` and
    /// lists this package, else the nearest one (a member is not a root).
    CargoWorkspace,
}

/// One language's server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// Stable id (`python`, `rust`…), used in `status` and config.
    pub id: String,
    /// File extensions (without dot) and the LSP language id of each.
    pub extensions: BTreeMap<String, String>,
    /// Server command lines in order of preference.
    pub commands: Vec<Vec<String>>,
    pub root_markers: Vec<String>,
    #[serde(default)]
    pub root_rule: RootRule,
    #[serde(default)]
    pub checker: Option<CheckerSpec>,
    /// Why there is no checker, when there is none.
    #[serde(default)]
    pub no_checker_reason: Option<String>,
    /// Sent as `initializationOptions`.
    #[serde(default)]
    pub initialization_options: Option<Value>,
    /// Answers `workspace/configuration`: looked up by section (`a.b`).
    #[serde(default)]
    pub settings: Option<Value>,
    /// The server always reports indexing (`$/progress` or rust-analyzer's
    /// serverStatus) once started: the first query waits until it has.
    #[serde(default)]
    pub reports_progress: bool,
    /// How long a fresh server that has not reported progress is given to
    /// start reporting it (default 0: no wait on a quiet window; queries of
    /// servers that do not report are gated on their answers; ignored with
    /// `reports_progress`).
    #[serde(default)]
    pub startup_settle_ms: Option<u64>,
    /// The `$/progress` token prefix of the check the server runs after a
    /// save (rust-analyzer's `cargo check`: `rust-analyzer/flycheck`). After a
    /// write, diagnostics are read only once such a run has begun and ended.
    #[serde(default)]
    pub save_check_progress: Option<String>,
}

/// The built-in catalog's text (`catalog/servers.toml`), embedded.
pub const BUILTIN_TOML: &str = include_str!("../catalog/servers.toml");

/// A catalog file: its `[[servers]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    servers: Vec<ServerEntry>,
}

/// Parse a catalog file's text (the built-in one, or a test's).
pub fn parse_catalog(text: &str) -> Result<Vec<ServerEntry>, String> {
    toml::from_str::<CatalogFile>(text)
        .map(|f| f.servers)
        .map_err(|e| e.to_string())
}

/// The built-in entries, from the embedded `catalog/servers.toml` (a test
/// checks every entry loads, so this cannot fail in a built binary).
pub fn builtin() -> Vec<ServerEntry> {
    parse_catalog(BUILTIN_TOML).expect("the built-in catalog/servers.toml is valid (tested)")
}

/// The harness's changes to the catalog (the `[lsp]` config section).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogConfig {
    /// Entries added, or replacing a built-in one with the same id.
    #[serde(default)]
    pub servers: Vec<ServerEntry>,
    /// Built-in ids to drop.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Request timeout in milliseconds.
    #[serde(default)]
    pub request_timeout_ms: Option<u64>,
    /// How long a query waits for indexing, in milliseconds.
    #[serde(default)]
    pub index_wait_ms: Option<u64>,
    /// How long the write wrapper waits for diagnostics, in milliseconds.
    #[serde(default)]
    pub diagnostics_wait_ms: Option<u64>,
}

/// rust-analyzer's settings that keep it from running the project's code:
/// no build scripts, no proc-macro expansion, no `cargo check` on save.
pub fn rust_analyzer_without_project_code() -> Value {
    serde_json::json!({
        "cargo": {"buildScripts": {"enable": false}},
        "procMacro": {"enable": false},
        "checkOnSave": false
    })
}

impl CatalogConfig {
    /// The catalog for a run whose surface may not run the project's code
    /// (the read surface): built-in servers that would run it by default
    /// are started with that switched off. Today that is rust-analyzer
    /// (build scripts and proc macros while indexing, `cargo check` on
    /// save). An entry the user configured for the same id is kept as
    /// given: the user chose it.
    pub fn without_project_code(mut self) -> Self {
        let user_has = |id: &str| self.servers.iter().any(|e| e.id == id);
        if !user_has("rust") && !self.disable.iter().any(|d| d == "rust") {
            if let Some(mut rust) = builtin().into_iter().find(|e| e.id == "rust") {
                rust.initialization_options = Some(rust_analyzer_without_project_code());
                rust.save_check_progress = None;
                self.servers.push(rust);
            }
        }
        self
    }
}

/// The entries in effect for a run.
#[derive(Debug, Clone)]
pub struct Catalog {
    entries: Vec<ServerEntry>,
}

/// Why an entry cannot serve a file, or what it resolved to.
#[derive(Debug, Clone)]
pub enum Resolution {
    Ready {
        root: PathBuf,
        command: Vec<String>,
        program: PathBuf,
    },
    NoMarker {
        looked_for: Vec<String>,
        from: PathBuf,
    },
    NoBinary {
        root: PathBuf,
        looked_for: Vec<String>,
        dirs: Vec<PathBuf>,
    },
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog { entries: builtin() }
    }
}

impl Catalog {
    pub fn new(entries: Vec<ServerEntry>) -> Self {
        Catalog { entries }
    }

    /// The built-ins changed by `config`.
    pub fn with_config(config: &CatalogConfig) -> Self {
        let mut entries: Vec<ServerEntry> = builtin()
            .into_iter()
            .filter(|e| !config.disable.contains(&e.id))
            .collect();
        for extra in &config.servers {
            if let Some(e) = entries.iter_mut().find(|e| e.id == extra.id) {
                *e = extra.clone();
            } else {
                entries.push(extra.clone());
            }
        }
        Catalog { entries }
    }

    pub fn entries(&self) -> &[ServerEntry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&ServerEntry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The entry for a file, by extension, and its LSP language id.
    pub fn for_file(&self, path: &Path) -> Option<(&ServerEntry, String)> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.entries
            .iter()
            .find_map(|e| e.extensions.get(&ext).map(|l| (e, l.clone())))
    }

    /// Every known extension, for messages.
    pub fn known_extensions(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .entries
            .iter()
            .flat_map(|e| e.extensions.keys().map(|k| format!(".{k}")))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// The root for `entry`, walking up from `start` (a file or directory), never
/// above `workspace_root`.
pub fn find_root(entry: &ServerEntry, start: &Path, workspace_root: &Path) -> Option<PathBuf> {
    let dir = if start.is_dir() {
        start
    } else {
        start.parent()?
    };
    let mut with_marker = Vec::new();
    for d in dir.ancestors() {
        if !d.starts_with(workspace_root) {
            break;
        }
        if entry.root_markers.iter().any(|m| d.join(m).exists()) {
            with_marker.push(d.to_path_buf());
            if entry.root_rule == RootRule::Nearest {
                break;
            }
        }
    }
    match entry.root_rule {
        RootRule::Nearest => with_marker.into_iter().next(),
        RootRule::CargoWorkspace => {
            let nearest = with_marker.first()?.clone();
            let workspace = with_marker.iter().rev().find(|d| {
                std::fs::read_to_string(d.join("Cargo.toml"))
                    .map(|t| t.lines().any(|l| l.trim() == "[workspace]"))
                    .unwrap_or(false)
            });
            Some(workspace.cloned().unwrap_or(nearest))
        }
    }
}

/// Project-local binary folders for a root: `.venv/bin`, `venv/bin`,
/// `node_modules/.bin` of the root and each folder up to the workspace root.
pub fn local_bin_dirs(root: &Path, workspace_root: &Path) -> Vec<PathBuf> {
    tool_core::programs::project_bin_dirs(root, workspace_root)
}

/// `", project-local binary .venv/bin/x"` when `program` was taken from the
/// checkout itself (inside the workspace root: `.venv/bin`, `node_modules/.bin`
/// or a path in the project): it is the project's own code, run as the
/// server. Empty for a binary from elsewhere on `$PATH`.
pub fn project_local_note(program: &Path, workspace_root: &Path) -> String {
    match program.strip_prefix(workspace_root) {
        Ok(rel) => format!(", project-local binary {}", rel.display()),
        Err(_) => String::new(),
    }
}

/// Resolve a program name: a path (relative to `root`), else the first
/// executable in `local` then `path`.
pub fn resolve_program(
    name: &str,
    root: &Path,
    local: &[PathBuf],
    path: Option<&OsString>,
) -> Option<PathBuf> {
    // No search path given means none, not `$PATH`.
    let empty = OsString::new();
    tool_core::programs::find_program(name, root, local, Some(path.unwrap_or(&empty)))
}

/// Resolve `entry` for `start`: root marker AND binary, or which is missing.
pub fn resolve(
    entry: &ServerEntry,
    start: &Path,
    workspace_root: &Path,
    path: Option<&OsString>,
) -> Resolution {
    let Some(root) = find_root(entry, start, workspace_root) else {
        return Resolution::NoMarker {
            looked_for: entry.root_markers.clone(),
            from: start.to_path_buf(),
        };
    };
    let local = local_bin_dirs(&root, workspace_root);
    for command in &entry.commands {
        let Some(name) = command.first() else {
            continue;
        };
        if let Some(program) = resolve_program(name, &root, &local, path) {
            return Resolution::Ready {
                root,
                command: command.clone(),
                program,
            };
        }
    }
    Resolution::NoBinary {
        root,
        looked_for: entry
            .commands
            .iter()
            .filter_map(|c| c.first().cloned())
            .collect(),
        dirs: local,
    }
}

impl Resolution {
    /// Why this cannot start, in words for the model (with paths shown by
    /// `rel`). `None` when it can.
    pub fn why_not(&self, entry: &ServerEntry, rel: &dyn Fn(&Path) -> String) -> Option<String> {
        match self {
            Resolution::Ready { .. } => None,
            Resolution::NoMarker { looked_for, from } => Some(format!(
                "no {} project root: none of {} found in {} or any folder above it up to the workspace root; \
                 add one of them (or open a file inside such a project)",
                entry.id,
                looked_for.join(", "),
                rel(from),
            )),
            Resolution::NoBinary { root, looked_for, .. } => Some(format!(
                "the {} project root is {} but no server binary resolves: looked for {} in .venv/bin, venv/bin, \
                 node_modules/.bin (of the root and up to the workspace root) and on $PATH; install one of them",
                entry.id,
                rel(root),
                looked_for.join(", "),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn without_project_code_turns_rust_analyzers_build_scripts_and_macros_off() {
        let cfg = CatalogConfig::default().without_project_code();
        let ids: Vec<&str> = cfg.servers.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["rust"]);
        let rust = &cfg.servers[0];
        assert_eq!(
            rust.initialization_options.as_ref().unwrap().to_string(),
            r#"{"cargo":{"buildScripts":{"enable":false}},"checkOnSave":false,"procMacro":{"enable":false}}"#
        );
        assert_eq!(rust.save_check_progress, None);
        // A user's own entry, or a disabled one, is left as the user set it.
        let mut own = CatalogConfig::default();
        own.servers
            .push(builtin().into_iter().find(|e| e.id == "rust").unwrap());
        let kept = own.without_project_code();
        assert_eq!(kept.servers.len(), 1);
        assert_eq!(kept.servers[0].initialization_options, None);
        let off = CatalogConfig {
            disable: vec!["rust".into()],
            ..CatalogConfig::default()
        };
        assert!(off.without_project_code().servers.is_empty());
    }

    #[test]
    fn every_built_in_server_loads_from_the_toml() {
        let entries = parse_catalog(BUILTIN_TOML).unwrap();
        let mut ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "ids are unique");
        for e in &entries {
            assert!(!e.extensions.is_empty(), "{}: no extensions", e.id);
            assert!(
                !e.commands.is_empty() && e.commands.iter().all(|c| !c.is_empty()),
                "{}: an empty command",
                e.id
            );
            assert!(!e.root_markers.is_empty(), "{}: no root markers", e.id);
        }
        let ts = entries.iter().find(|e| e.id == "typescript").unwrap();
        assert_eq!(
            ts.initialization_options.as_ref().unwrap().to_string(),
            r#"{"preferences":{"providePrefixAndSuffixTextForRename":false}}"#
        );
        let rust = entries.iter().find(|e| e.id == "rust").unwrap();
        assert_eq!(rust.root_rule, RootRule::CargoWorkspace);
        assert_eq!(
            rust.checker.as_ref().unwrap().format,
            CheckerFormat::CargoJson
        );
        // A bad entry is named, not skipped.
        let err = parse_catalog("[[servers]]\nid = \"x\"\nextensions = {}\ncommands = []\nroot_markers = []\nport = 1\n")
            .unwrap_err();
        assert!(err.contains("unknown field `port`"), "{err}");
    }

    #[test]
    fn roots_need_a_marker_within_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        fs::create_dir_all(ws.join("pkg/src")).unwrap();
        fs::write(d.path().join("pyproject.toml"), "").unwrap();
        let cat = Catalog::default();
        let py = cat.get("python").unwrap();
        let file = ws.join("pkg/src/a.py");
        // The marker above the workspace root does not count.
        assert_eq!(find_root(py, &file, &ws), None);
        fs::write(ws.join("pyproject.toml"), "").unwrap();
        fs::write(ws.join("pkg/setup.py"), "").unwrap();
        assert_eq!(find_root(py, &file, &ws), Some(ws.join("pkg")));
    }

    #[test]
    fn cargo_members_resolve_to_the_workspace_root() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        fs::create_dir_all(ws.join("crates/a/src")).unwrap();
        fs::write(
            ws.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/a\"]\n",
        )
        .unwrap();
        fs::write(ws.join("crates/a/Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        let cat = Catalog::default();
        let rs = cat.get("rust").unwrap();
        assert_eq!(
            find_root(rs, &ws.join("crates/a/src/lib.rs"), ws),
            Some(ws.to_path_buf())
        );
    }

    #[test]
    fn binaries_resolve_project_local_first_and_say_what_is_missing() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        fs::write(ws.join("pyproject.toml"), "").unwrap();
        let cat = Catalog::default();
        let py = cat.get("python").unwrap();
        let empty = OsString::from("/nonexistent");
        let r = resolve(py, &ws.join("a.py"), ws, Some(&empty));
        let why = r.why_not(py, &|p| p.display().to_string()).unwrap();
        assert!(why.contains("no server binary resolves"), "{why}");
        assert!(
            why.contains("basedpyright-langserver, pyright-langserver, pylsp, ty"),
            "{why}"
        );
        fs::create_dir_all(ws.join(".venv/bin")).unwrap();
        let bin = ws.join(".venv/bin/pylsp");
        fs::write(&bin, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        match resolve(py, &ws.join("a.py"), ws, Some(&empty)) {
            Resolution::Ready {
                program, command, ..
            } => {
                assert_eq!(program, bin);
                assert_eq!(command, vec!["pylsp"]);
            }
            other => panic!("{other:?}"),
        }
        let r = resolve(py, &ws.join("sub/a.py"), &ws.join("sub"), Some(&empty));
        let why = r.why_not(py, &|p| p.display().to_string()).unwrap();
        assert!(why.contains("none of pyproject.toml, setup.py"), "{why}");
    }

    #[test]
    fn config_adds_replaces_and_disables_entries() {
        let cfg: CatalogConfig = serde_json::from_value(serde_json::json!({
            "disable": ["dart"],
            "servers": [{
                "id": "zig", "extensions": {"zig": "zig"}, "commands": [["zls"]],
                "root_markers": ["build.zig"]
            }]
        }))
        .unwrap();
        let cat = Catalog::with_config(&cfg);
        assert!(cat.get("dart").is_none());
        assert_eq!(cat.for_file(Path::new("a/b.zig")).unwrap().0.id, "zig");
        assert_eq!(
            cat.for_file(Path::new("x.TSX")).unwrap().1,
            "typescriptreact"
        );
    }
}
