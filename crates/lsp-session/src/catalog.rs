//! Which language server serves which file: per language, the server
//! commands in order of preference, the root markers, and the project
//! checker `diagnostics "*"` runs.
//!
//! A server can answer only when BOTH halves hold: a root marker is found
//! (nearest to the file, walking up, never above the workspace root) and its
//! binary resolves (project-local first, then `$PATH`). Every refusal names
//! the missing half and what was looked for. The harness extends or replaces
//! entries with [`crate::CatalogConfig`], without code changes.

pub use crate::ready_probe::ReadyProbe;
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
    /// A Java project's build: `mvn -q -o compile` where a pom.xml is,
    /// `gradle compileJava --offline` (or the project's `./gradlew`) where
    /// a Gradle build is; javac's messages as Maven prints them
    /// (`[ERROR] /abs/F.java:[12,5] msg`) or as javac does
    /// (`/abs/F.java:12: error: msg`, then the line and a caret).
    JavaBuild,
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
    /// The workspace root, with no marker needed (servers of single files:
    /// YAML, JSON, shell…).
    Workspace,
}

/// What an entry does for its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The file's server: it answers every query. Of several for a file,
    /// the first (in catalog order) that resolves serves it.
    #[default]
    Server,
    /// Runs beside the file's server; its diagnostics are merged with the
    /// server's, labelled by source.
    Linter,
}

/// One language's server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// Stable id (`python`, `rust`…), used in `status` and config.
    pub id: String,
    /// The file's server, or a linter beside it.
    #[serde(default)]
    pub role: Role,
    /// File extensions (without dot) and the LSP language id of each.
    pub extensions: BTreeMap<String, String>,
    /// Whole file names (`Dockerfile`) and the LSP language id of each.
    #[serde(default)]
    pub file_names: BTreeMap<String, String>,
    /// Server command lines in order of preference. An argument's
    /// `{own_dir}` is a new folder of the server process's own, removed when
    /// it stops (jdtls's `-data`, its workspace index).
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
    /// The `source` of the diagnostics that check reports (rust-analyzer:
    /// `rustc`, `clippy`); empty: those not in the server's own pass.
    #[serde(default)]
    pub save_check_sources: Vec<String>,
    /// A notification (params `{textDocument: {uri}}`) that starts the
    /// check, sent when a write's save started none (rust-analyzer:
    /// `rust-analyzer/runFlycheck`).
    #[serde(default)]
    pub save_check_nudge: Option<String>,
    /// The start of a `window/logMessage` the server sends once it has
    /// finished starting (loaded its configuration). Until then it may
    /// publish incomplete diagnostics under the document's own version
    /// (biome: syntax only, no lint), so no document is opened in it before
    /// this message; a server that does not send it within the startup bound
    /// did not start.
    #[serde(default)]
    pub started_message: Option<String>,
    /// Environment variables set, for each start of the server, to a new
    /// private folder removed when it stops (biome: `XDG_CACHE_HOME`, where
    /// its lsp-proxy finds the socket of its daemon — one daemon per user
    /// otherwise, which the end of one run would stop under another run).
    #[serde(default)]
    pub own_dir_env: Vec<String>,
    /// The server runs on Java and needs a JDK of at least this feature
    /// release (jdtls: 21). The first found by [`tool_core::jdk::find`]
    /// (`$JAVA_HOME`, the `java` on the run's PATH, the JDKs installed in
    /// /usr/lib/jvm, /opt…) is the server's `JAVA_HOME` and first on its
    /// PATH; the project's own build keeps the JDK the run's PATH gives.
    #[serde(default)]
    pub jdk: Option<u32>,
    /// A `workspace/executeCommand` the server answers only once it has
    /// loaded the project of an open file: while a fresh server has not
    /// reported progress, its answer proves it ready, so a server that
    /// reports no progress for this project (tsserver on a folder with no
    /// tsconfig.json) is not waited on for the whole index wait.
    #[serde(default)]
    pub ready_probe: Option<ReadyProbe>,
    /// This server's memory ceiling in MiB (see
    /// [`crate::CatalogConfig::memory_ceiling_mb`]).
    #[serde(default)]
    pub memory_ceiling_mb: Option<u64>,
    /// Whether a query for symbols across the workspace asks this server
    /// (default true). vscode-markdown-language-server offers it but
    /// answers it only through file-system requests of its own that this
    /// client does not serve, so its entry says false.
    #[serde(default = "answers_workspace_symbols")]
    pub workspace_symbols: bool,
    /// How long after a change the server publishes for the project's other
    /// files (gopls: its 1 s diagnosticsDelay): a write's fallout waits
    /// that long for them.
    #[serde(default)]
    pub project_diagnostics_delay_ms: Option<u64>,
    /// The start of the title under which the server reports each
    /// diagnosis of a change as a work-done progress run, ended once the
    /// diagnostics of every file it covers are published (gopls with
    /// `verboseWorkDoneProgress`: "diagnosing changed files", both its
    /// phases): a change's fallout is read once that run has ended, not
    /// after a delay, and the state before a change once no such run is
    /// going on.
    #[serde(default)]
    pub project_diagnostics_progress: Option<String>,
    /// How long the server waits after a change before it checks the
    /// document again (intelephense debounces changes by 1 s): an
    /// unversioned publish that comes sooner after a change answers an
    /// earlier text (its indexing's end, another document's open), never
    /// the change.
    #[serde(default)]
    pub change_diagnostics_delay_ms: Option<u64>,
    /// It only publishes, and its check of a file reads the files that
    /// one uses (clangd: the headers it includes): a write's dependents are
    /// judged by opening them before the write and, after it, closing and
    /// opening each again and reading its first publish.
    #[serde(default)]
    pub dependents_by_reopen: bool,
    /// The server reads a document from the disk when it is opened,
    /// ignoring the text sent, and checks only on open and save (fortls):
    /// a write's baseline is then taken before the write reaches the disk.
    #[serde(default)]
    pub open_reads_disk: bool,
    /// What the server's diagnostics cover, when less than its language's
    /// full check: `"syntax"` (jedi-language-server reports syntax errors
    /// only). A clean answer from it then says what was not checked, never
    /// a bare "no new errors".
    #[serde(default)]
    pub covers: Option<String>,
    /// The entry whose server checks more (names, types), suggested beside
    /// such an answer and by `doctor`.
    #[serde(default)]
    pub fuller: Option<String>,
    /// Built-in entries say whether a test drives this server for real
    /// (`doctor` shows the untested ones); a user's entry need not.
    #[serde(default)]
    pub tested: Option<bool>,
    /// Why an untested entry is untested, when it is more than "no test
    /// drives it" (`doctor` says it).
    #[serde(default)]
    pub untested_reason: Option<String>,
}

fn answers_workspace_symbols() -> bool {
    true
}

impl ServerEntry {
    /// Its first file among `files` (as [`crate::source_walk::first_file_per_name`]
    /// keys them: `.ext` and whole names), if the workspace has one.
    pub fn first_file_in<'a>(&self, files: &'a BTreeMap<String, PathBuf>) -> Option<&'a PathBuf> {
        self.extensions
            .keys()
            .find_map(|x| files.get(&format!(".{x}")))
            .or_else(|| self.file_names.keys().find_map(|n| files.get(n)))
    }

    /// What a clean answer of this server did not check, when its
    /// diagnostics cover less than a full check (see [`Self::covers`]):
    /// `(covered, note)`, as `("syntax", "python-jedi checks syntax only
    /// …")`.
    pub fn partial_cover(&self) -> Option<(&str, String)> {
        let covers = self.covers.as_deref()?;
        let fuller = match &self.fuller {
            Some(f) => {
                format!("; `agent-tools install {f}` adds one that checks names and types")
            }
            None => String::new(),
        };
        Some((covers, format!("{} checks {covers} only{fuller}", self.id)))
    }

    /// The LSP language id of `path` for this entry, when it serves it (by
    /// whole file name, else by extension, case-insensitively).
    pub fn language_of(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        if let Some(l) = self.file_names.get(name) {
            return Some(l.clone());
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.extensions.get(&ext).cloned()
    }
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

/// A project config's entry that names a command, set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Untrusted {
    pub entry: ServerEntry,
    /// The project config file, as shown to the model.
    pub source: String,
}

impl Untrusted {
    /// The notice `status`, `doctor` and a call for its files give.
    pub fn notice(&self) -> String {
        let commands: Vec<String> = commands_of(&self.entry).map(|c| c.join(" ")).collect();
        format!(
            "{} server `{}` ({}): not run: project config names a command; trust the workspace to use it \
             (--trust-workspace)",
            self.source,
            self.entry.id,
            commands.join("; ")
        )
    }
}

/// Every command line an entry would start: its servers' and its checker's.
pub fn commands_of(entry: &ServerEntry) -> impl Iterator<Item = &Vec<String>> {
    entry
        .commands
        .iter()
        .chain(entry.checker.iter().flat_map(|c| c.commands.iter()))
}

/// The entries in effect for a run.
#[derive(Debug, Clone)]
pub struct Catalog {
    entries: Vec<ServerEntry>,
    /// Project entries set aside (the workspace is not trusted).
    untrusted: Vec<Untrusted>,
    /// Whether runs share these servers through the broker (`[lsp] shared`).
    shared: bool,
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
        Catalog::new(builtin())
    }
}

impl Catalog {
    pub fn new(entries: Vec<ServerEntry>) -> Self {
        Catalog {
            entries,
            untrusted: Vec::new(),
            shared: false,
        }
    }

    /// Entries in effect, and the project entries set aside.
    pub fn with_untrusted(entries: Vec<ServerEntry>, untrusted: Vec<Untrusted>) -> Self {
        Catalog {
            entries,
            untrusted,
            shared: false,
        }
    }

    /// The same catalog, its servers shared through the broker or not.
    #[must_use]
    pub fn with_sharing(mut self, shared: bool) -> Self {
        self.shared = shared;
        self
    }

    /// Whether runs share these servers through the broker.
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// Project entries that name a command and were not used.
    pub fn untrusted(&self) -> &[Untrusted] {
        &self.untrusted
    }

    /// The notices of set-aside project entries for `path`'s extension.
    pub fn untrusted_for(&self, path: &Path) -> Vec<String> {
        self.untrusted
            .iter()
            .filter(|u| u.entry.language_of(path).is_some())
            .map(Untrusted::notice)
            .collect()
    }

    pub fn entries(&self) -> &[ServerEntry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&ServerEntry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The entry for a file, by extension, and its LSP language id: the
    /// first server entry for it.
    pub fn for_file(&self, path: &Path) -> Option<(&ServerEntry, String)> {
        self.servers_for(path).into_iter().next()
    }

    /// Every server entry for a file, in order of preference.
    pub fn servers_for(&self, path: &Path) -> Vec<(&ServerEntry, String)> {
        self.with_role(path, Role::Server)
    }

    /// The linters that run beside a file's server.
    pub fn linters_for(&self, path: &Path) -> Vec<(&ServerEntry, String)> {
        self.with_role(path, Role::Linter)
    }

    fn with_role(&self, path: &Path, role: Role) -> Vec<(&ServerEntry, String)> {
        self.entries
            .iter()
            .filter(|e| e.role == role)
            .filter_map(|e| e.language_of(path).map(|l| (e, l)))
            .collect()
    }

    /// Every known extension, for messages.
    pub fn known_extensions(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .entries
            .iter()
            .flat_map(|e| {
                e.extensions
                    .keys()
                    .map(|k| format!(".{k}"))
                    .chain(e.file_names.keys().cloned())
            })
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
    if entry.root_rule == RootRule::Workspace {
        return dir
            .starts_with(workspace_root)
            .then(|| workspace_root.to_path_buf());
    }
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
        RootRule::Nearest | RootRule::Workspace => with_marker.into_iter().next(),
        RootRule::CargoWorkspace => {
            let nearest = with_marker.first()?.clone();
            let workspace = with_marker.iter().rev().find(|d| {
                std::fs::read_to_string(d.join("Cargo.toml"))
                    .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
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
                 node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` \
                 put in its data folder, and on $PATH; {}",
                entry.id,
                rel(root),
                looked_for.join(", "),
                match looked_for.iter().find_map(|b| tool_core::install::install_hint(b)) {
                    Some(line) => format!("install it with `{line}`"),
                    None => "install one of them".to_string(),
                },
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CatalogConfig;
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
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "ids are unique");
        for e in &entries {
            assert!(!e.extensions.is_empty(), "{}: no extensions", e.id);
            assert!(
                !e.commands.is_empty() && e.commands.iter().all(|c| !c.is_empty()),
                "{}: an empty command",
                e.id
            );
            assert_eq!(
                e.root_markers.is_empty(),
                e.root_rule == RootRule::Workspace,
                "{}: root markers are needed unless the root is the workspace's",
                e.id
            );
            assert!(e.tested.is_some(), "{}: says whether it is tested", e.id);
        }
        assert!(entries.len() >= 40, "{} entries", entries.len());
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
        expect_test::expect![[r#"
            TOML parse error at line 6, column 1
              |
            6 | port = 1
              | ^^^^
            unknown field `port`, expected one of `id`, `role`, `extensions`, `file_names`, `commands`, `root_markers`, `root_rule`, `checker`, `no_checker_reason`, `initialization_options`, `settings`, `reports_progress`, `startup_settle_ms`, `save_check_progress`, `save_check_sources`, `save_check_nudge`, `started_message`, `own_dir_env`, `jdk`, `ready_probe`, `memory_ceiling_mb`, `workspace_symbols`, `project_diagnostics_delay_ms`, `project_diagnostics_progress`, `change_diagnostics_delay_ms`, `dependents_by_reopen`, `open_reads_disk`, `covers`, `fuller`, `tested`, `untested_reason`
        "#]].assert_eq(&err);
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
        let why = why.replace(&ws.display().to_string(), "<ws>");
        expect_test::expect!["the python project root is <ws> but no server binary resolves: looked for basedpyright-langserver, pyright-langserver, pylsp, ty in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install it with `agent-tools install basedpyright`"].assert_eq(&why);
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
        let why = why.replace(&ws.display().to_string(), "<ws>");
        expect_test::expect!["no python project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt, pyrightconfig.json found in <ws>/sub/a.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project)"].assert_eq(&why);
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
