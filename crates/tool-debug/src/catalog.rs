//! Which debug adapters exist, and whether one can start for this checkout.
//!
//! The rule is the language servers' intersection: a root marker must exist
//! AND the adapter's binary must resolve; either alone is reported as not
//! usable, with what is missing, rather than guessed around. The harness can
//! add its own adapters ([`AdapterSpec::custom`]), and config layers add,
//! replace or disable entries ([`crate::config`]); a disabled id or a
//! project entry set aside is named when asked for, not reported unknown. This module knows no
//! adapter in particular: the built-in entries (`catalog/adapters.toml`), and resolving a spec into a
//! command line (`Catalog::new`, `Catalog::resolve`), are in
//! [`crate::adapters`], which needs each adapter's knowledge to do it.

use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Which built-in adapter behaviour a spec gets (launch arguments, quirks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdapterKind {
    Debugpy,
    Lldb,
    Delve,
    Dart,
    /// Node.js itself, through its V8 inspector ([`crate::session::inspector`]).
    Node,
    /// A Java program under the JDK's own JDWP agent ([`crate::session::jdwp`]).
    Java,
    /// A harness-supplied adapter: plain `program`/`args`/`cwd` launch
    /// arguments plus its template.
    Custom,
}

/// How the client reaches the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connect {
    /// DAP on the adapter's stdin/stdout.
    Stdio,
    /// The adapter listens on TCP and prints `… listening at: HOST:PORT` on
    /// stdout (`dlv dap --listen 127.0.0.1:0`); its later stdout is the
    /// debuggee's output.
    TcpListen,
    /// No DAP adapter: the debuggee is started with its V8 inspector
    /// listening (`node --inspect-brk=127.0.0.1:0`, which prints `Debugger
    /// listening on ws://…` on stderr), and [`crate::session::inspector`] speaks DAP
    /// to the session and the inspector protocol to the debuggee, in
    /// process. Its stdout and stderr are the debuggee's output.
    Inspector,
    /// No DAP adapter: the JVM is started with the JDK's JDWP agent
    /// listening (`java -agentlib:jdwp=…,address=127.0.0.1:0`, which prints
    /// `Listening for transport dt_socket at address: N` on stdout), and
    /// [`crate::session::jdwp`] speaks DAP to the session and JDWP to the
    /// JVM, in process. Its stdout and stderr are the debuggee's output.
    Jdwp,
}

/// One adapter of the catalog (a `[[adapters]]` table of
/// `catalog/adapters.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterSpec {
    pub id: String,
    pub kind: AdapterKind,
    /// Candidate command lines, tried in order: the first whose program
    /// resolves (on the search path, or as an absolute path) is used. Unused
    /// for debugpy, whose command is `INTERPRETER -m debugpy.adapter`.
    pub commands: Vec<Vec<String>>,
    /// Files whose presence marks a project this adapter serves. `*.ext`
    /// matches any file with that extension.
    pub markers: Vec<String>,
    /// Program extensions routed to this adapter when `adapter` is not given.
    pub extensions: Vec<String>,
    pub connect: Connect,
    /// Extra launch arguments merged over the built-in ones.
    #[serde(default = "empty_object")]
    pub launch_template: Value,
    /// The `context` of `evaluate` requests.
    pub evaluate_context: String,
    /// The adapter's exception breakpoint filters as it announced them when
    /// tested; the running adapter's own list replaces them once started.
    #[serde(default)]
    pub exception_filters: Vec<ExceptionFilter>,
}

/// One of an adapter's `exceptionBreakpointFilters`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExceptionFilter {
    pub id: String,
    pub label: String,
    /// On unless the model chose filters (an IDE's default).
    #[serde(default)]
    pub default: bool,
}

fn empty_object() -> Value {
    json!({})
}

impl AdapterSpec {
    /// A harness-supplied stdio adapter.
    pub fn custom(id: &str, command: Vec<String>, markers: &[&str], extensions: &[&str]) -> Self {
        AdapterSpec {
            id: id.into(),
            kind: AdapterKind::Custom,
            commands: vec![command],
            markers: markers
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            extensions: extensions
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            connect: Connect::Stdio,
            launch_template: json!({}),
            evaluate_context: "watch".into(),
            exception_filters: Vec::new(),
        }
    }
}

/// A resolved command line, the debuggee interpreter (debugpy) and notes.
pub(crate) type CommandLine = (Vec<OsString>, Option<PathBuf>, Vec<String>);

/// Probe results by (program, its mtime, what was asked).
type ProbeCache = HashMap<(PathBuf, Option<SystemTime>, &'static str), Option<String>>;

/// An adapter that can start here, with everything launch needs.
#[derive(Debug, Clone)]
pub struct ResolvedAdapter {
    pub spec: AdapterSpec,
    pub command: Vec<OsString>,
    /// Where the marker was found: the debuggee's working directory.
    pub project_dir: PathBuf,
    pub marker: String,
    /// debugpy: the interpreter the debuggee runs with.
    pub debuggee_python: Option<PathBuf>,
    /// lldb: commands run before the target is created (Rust formatters).
    pub init_commands: Vec<String>,
    /// Things the user should know (which interpreter was used instead).
    pub notes: Vec<String>,
    /// Extra environment for the adapter process.
    pub env: Vec<(String, String)>,
    /// Put in front of the adapter's PATH (not the debuggee's).
    pub path_prefix: Option<PathBuf>,
}

/// Why an adapter cannot start here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUsable {
    pub why: String,
}

/// The catalog plus the results of expensive probes (does this interpreter
/// import debugpy? where is the Rust sysroot?), cached by file identity so a
/// launch does not pay for a Python start-up every time.
#[derive(Debug)]
pub struct Catalog {
    specs: Vec<AdapterSpec>,
    search_path: OsString,
    env: Vec<(String, String)>,
    probes: Mutex<ProbeCache>,
    /// Ids the config disabled: named when asked for.
    disabled: Vec<String>,
    /// Project entries set aside (untrusted workspace): reported, never run.
    untrusted: Vec<UntrustedAdapter>,
}

impl Catalog {
    /// `extra` adapters replace those of `specs` with the same id, else are
    /// added. (`Catalog::new` starts from the built-in adapters.)
    pub fn from_specs(
        mut specs: Vec<AdapterSpec>,
        extra: Vec<AdapterSpec>,
        search_path: OsString,
        env: Vec<(String, String)>,
    ) -> Self {
        for spec in extra {
            match specs.iter_mut().find(|s| s.id == spec.id) {
                Some(slot) => *slot = spec,
                None => specs.push(spec),
            }
        }
        Catalog {
            specs,
            search_path,
            env,
            probes: Mutex::new(HashMap::new()),
            disabled: Vec::new(),
            untrusted: Vec::new(),
        }
    }

    /// This catalog without the adapters `ids` (config's `disable`).
    pub fn disabling(mut self, ids: &[String]) -> Self {
        self.specs.retain(|s| !ids.contains(&s.id));
        self.disabled.extend(ids.iter().cloned());
        self
    }

    /// This catalog knowing the project entries set aside, to report them.
    pub fn with_untrusted(mut self, untrusted: Vec<UntrustedAdapter>) -> Self {
        self.untrusted = untrusted;
        self
    }

    /// The project entries set aside because the workspace is not trusted.
    pub fn untrusted(&self) -> &[UntrustedAdapter] {
        &self.untrusted
    }

    /// Why `id` is not in the catalog, when config says: disabled, or a
    /// project entry set aside.
    pub fn why_absent(&self, id: &str) -> Option<String> {
        if let Some(u) = self.untrusted.iter().find(|u| u.spec.id == id) {
            return Some(u.notice());
        }
        self.disabled
            .iter()
            .any(|d| d == id)
            .then(|| format!("adapter `{id}` is disabled by config ([debug] disable)"))
    }

    /// The notices of set-aside project entries a launch of `program` with
    /// `chosen` (the adapter used, if any) would have used instead: the
    /// same id, or, with nothing chosen, a matching extension.
    pub fn untrusted_for(&self, chosen: Option<&str>, program: &Path) -> Vec<String> {
        let ext = program.extension().and_then(|e| e.to_str()).unwrap_or("");
        self.untrusted
            .iter()
            .filter(|u| match chosen {
                Some(id) => u.spec.id == id,
                None => u.spec.extensions.iter().any(|e| e == ext),
            })
            .map(UntrustedAdapter::notice)
            .collect()
    }

    pub fn specs(&self) -> &[AdapterSpec] {
        &self.specs
    }

    pub fn spec(&self, id: &str) -> Option<&AdapterSpec> {
        self.specs.iter().find(|s| s.id == id)
    }

    pub fn ids(&self) -> String {
        self.specs
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn search_path(&self) -> &OsString {
        &self.search_path
    }

    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// An executable by name on the search path, or an absolute path.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        tool_core::programs::find_program(name, Path::new(""), &[], Some(&self.search_path))
    }

    /// The adapter a program is routed to when none is named.
    pub fn route(&self, program: &Path) -> Option<&AdapterSpec> {
        let ext = program.extension().and_then(|e| e.to_str()).unwrap_or("");
        if let Some(spec) = self
            .specs
            .iter()
            .find(|s| s.extensions.iter().any(|e| e == ext))
        {
            return Some(spec);
        }
        if is_go_package(program) || is_go_executable(program) {
            return self.spec("delve");
        }
        if is_native_executable(program) {
            return self.spec("lldb");
        }
        None
    }

    /// The project's interpreter: `.venv/bin/python`, `venv/bin/python` in
    /// the project (then the workspace root), then `python3` on the path.
    pub fn project_python(&self, project: &Path, root: &Path) -> Option<(PathBuf, String)> {
        for dir in [project, root] {
            for venv in [".venv", "venv"] {
                let p = dir.join(venv).join("bin").join("python");
                if tool_core::programs::is_executable(&p) {
                    return Some((p, format!("project {venv}")));
                }
            }
        }
        self.which("python3")
            .map(|p| (p, "python3 on PATH".to_string()))
    }

    /// Run `program args…` once per (file, mtime, probe) and keep the first
    /// line of its stdout when it succeeds.
    pub(crate) fn probe(
        &self,
        program: &Path,
        what: &'static str,
        args: &[&str],
    ) -> Option<String> {
        let mtime = program.metadata().and_then(|m| m.modified()).ok();
        let key = (program.to_path_buf(), mtime, what);
        if let Some(hit) = self.probes.lock().expect("probe lock").get(&key) {
            return hit.clone();
        }
        let result = run_probe(program, args, &self.search_path);
        self.probes
            .lock()
            .expect("probe lock")
            .insert(key, result.clone());
        result
    }
}

/// A short blocking probe, bounded: a python that hangs on import must not
/// hang the tool. Run on the caller's thread; callers are in
/// `spawn_blocking` or accept the short wait.
fn run_probe(program: &Path, args: &[&str], path: &OsString) -> Option<String> {
    use std::io::Read;
    use tool_core::process::{BlockingChild, ChildSpec, Io};
    let mut child = BlockingChild::spawn(
        &ChildSpec::new(program)
            .args(args)
            .env("PATH", path)
            .stderr(Io::Null),
    )
    .ok()?;
    let status = child.wait_bounded(Duration::from_secs(10)).ok()??;
    if !status.success() {
        return None;
    }
    let mut out = String::new();
    child.take_stdout()?.read_to_string(&mut out).ok()?;
    out.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The first directory from `start` up to `root` holding one of `markers`.
pub fn find_marker(markers: &[String], start: &Path, root: &Path) -> Option<(PathBuf, String)> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        for m in markers {
            if let Some(ext) = m.strip_prefix("*.") {
                let hit = std::fs::read_dir(d).ok().and_then(|entries| {
                    let mut names: Vec<String> = entries
                        .flatten()
                        .filter(|e| e.path().is_file())
                        .filter_map(|e| e.file_name().to_str().map(String::from))
                        .filter(|n| Path::new(n).extension().and_then(|x| x.to_str()) == Some(ext))
                        .collect();
                    names.sort();
                    names.into_iter().next()
                });
                if let Some(name) = hit {
                    return Some((d.to_path_buf(), rel(&d.join(name), root)));
                }
            } else if d.join(m).exists() {
                return Some((d.to_path_buf(), rel(&d.join(m), root)));
            }
        }
        if d == root || !d.starts_with(root) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// ELF or Mach-O magic: a compiled program lldb can run.
pub fn is_native_executable(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"\x7fELF" || magic == [0xcf, 0xfa, 0xed, 0xfe])
}

/// A folder holding a Go module's `go.mod` or `.go` files: a package
/// delve builds.
pub fn is_go_package(path: &Path) -> bool {
    path.is_dir()
        && (path.join("go.mod").is_file()
            || std::fs::read_dir(path).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().is_file() && e.path().extension().is_some_and(|x| x == "go"))
            }))
}

/// Whether the first `limit` bytes of the file at `path` contain `mark`.
pub fn file_contains(path: &Path, mark: &[u8], limit: u64) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(limit).read_to_end(&mut head).is_err() {
        return false;
    }
    // memmem, not a sliding window: a Rust test binary is several MB, and
    // a naive scan of it cost ~12 ms of every launch.
    memchr::memmem::find(&head, mark).is_some()
}

/// The marker the Go linker writes into every executable it builds (the
/// start of its build info, `go version -m` reads it).
const GO_BUILD_INFO_MAGIC: &[u8] = b"\xff Go buildinf:";

/// A compiled program whose build info says Go built it: delve runs it.
pub fn is_go_executable(path: &Path) -> bool {
    if !path.is_file() || !is_native_executable(path) {
        return false;
    }
    // The build info sits near the start of the data; a bounded read finds
    // it in any Go binary without reading a huge C++ one whole.
    file_contains(path, GO_BUILD_INFO_MAGIC, 64 << 20)
}

pub(crate) fn rel(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(p) if p.as_os_str().is_empty() => ".".into(),
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// A project config's adapter entry that would start something new, set
/// aside.
#[derive(Debug, Clone, PartialEq)]
pub struct UntrustedAdapter {
    pub spec: AdapterSpec,
    /// The project config file, as shown to the model.
    pub source: String,
}

impl UntrustedAdapter {
    /// The notice `adapters`, `doctor` and a launch that would use it give.
    pub fn notice(&self) -> String {
        let commands: Vec<String> = self.spec.commands.iter().map(|c| c.join(" ")).collect();
        let what = if commands.is_empty() {
            format!("kind {:?}", self.spec.kind).to_lowercase()
        } else {
            commands.join("; ")
        };
        format!(
            "{} adapter `{}` ({what}): not run: project config names a command; trust the workspace to use it \
             (--trust-workspace)",
            self.source, self.spec.id
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_with_path(dirs: &[&Path]) -> Catalog {
        Catalog::new(vec![], std::env::join_paths(dirs).unwrap(), vec![])
    }

    fn fake_binary(dir: &Path, name: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn an_adapter_needs_both_its_marker_and_its_binary() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let cat = catalog_with_path(&[bin.path()]);
        let delve = cat.spec("delve").unwrap().clone();
        let why = cat
            .resolve(&delve, root.path(), root.path())
            .unwrap_err()
            .why;
        assert!(
            why.contains("binary not found") && why.contains("no root marker (go.mod)"),
            "{why}"
        );

        std::fs::write(root.path().join("go.mod"), "module x\n").unwrap();
        let why = cat
            .resolve(&delve, root.path(), root.path())
            .unwrap_err()
            .why;
        assert!(
            why.contains("binary not found") && why.contains("marker go.mod found"),
            "{why}"
        );

        std::fs::remove_file(root.path().join("go.mod")).unwrap();
        fake_binary(bin.path(), "dlv");
        let why = cat
            .resolve(&delve, root.path(), root.path())
            .unwrap_err()
            .why;
        assert!(
            why.contains("no root marker") && why.contains("binary `"),
            "{why}"
        );

        std::fs::create_dir(root.path().join("cmd")).unwrap();
        std::fs::write(root.path().join("go.mod"), "module x\n").unwrap();
        let ok = cat
            .resolve(&delve, &root.path().join("cmd"), root.path())
            .unwrap();
        assert_eq!(ok.project_dir, root.path());
        assert_eq!(ok.marker, "go.mod");
        assert_eq!(ok.command[1], "dap");
    }

    #[test]
    fn lldb_takes_the_versioned_debian_name_and_a_lone_c_file() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        fake_binary(bin.path(), "lldb-vscode-14");
        let cat = catalog_with_path(&[bin.path()]);
        let lldb = cat.spec("lldb").unwrap().clone();
        std::fs::write(root.path().join("prog.c"), "int main(){}").unwrap();
        let ok = cat.resolve(&lldb, root.path(), root.path()).unwrap();
        assert!(ok.command[0].to_string_lossy().ends_with("lldb-vscode-14"));
        assert_eq!(ok.marker, "prog.c");
    }

    #[test]
    fn programs_are_routed_by_extension_then_by_content() {
        let root = tempfile::tempdir().unwrap();
        let cat = catalog_with_path(&[]);
        assert_eq!(cat.route(Path::new("a/b.py")).unwrap().id, "debugpy");
        assert_eq!(cat.route(Path::new("main.go")).unwrap().id, "delve");
        // A source lldb cannot run goes to lldb, which says how to build it.
        assert_eq!(cat.route(Path::new("prog.c")).unwrap().id, "lldb");
        let exe = root.path().join("prog");
        std::fs::write(&exe, b"\x7fELF....").unwrap();
        assert_eq!(cat.route(&exe).unwrap().id, "lldb");
        // A Go package folder (no go.mod of its own), and an executable
        // the Go linker built (its build info), go to delve.
        std::fs::create_dir_all(root.path().join("cmd/tool")).unwrap();
        std::fs::write(root.path().join("cmd/tool/main.go"), "package main\n").unwrap();
        assert_eq!(
            cat.route(&root.path().join("cmd/tool")).unwrap().id,
            "delve"
        );
        std::fs::write(&exe, b"\x7fELF....\xff Go buildinf:\x08\x02").unwrap();
        assert_eq!(cat.route(&exe).unwrap().id, "delve");
        assert!(cat.route(&root.path().join("cmd")).is_none());
        std::fs::write(root.path().join("notes.txt"), "x").unwrap();
        assert!(cat.route(&root.path().join("notes.txt")).is_none());
    }

    #[test]
    fn the_project_venv_is_preferred_over_path() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        fake_binary(bin.path(), "python3");
        let cat = catalog_with_path(&[bin.path()]);
        let (p, origin) = cat.project_python(root.path(), root.path()).unwrap();
        assert_eq!(
            (p, origin.as_str()),
            (bin.path().join("python3"), "python3 on PATH")
        );
        std::fs::create_dir_all(root.path().join("venv/bin")).unwrap();
        fake_binary(&root.path().join("venv/bin"), "python");
        assert_eq!(
            cat.project_python(root.path(), root.path()).unwrap().1,
            "project venv"
        );
        std::fs::create_dir_all(root.path().join(".venv/bin")).unwrap();
        fake_binary(&root.path().join(".venv/bin"), "python");
        let (p, origin) = cat.project_python(root.path(), root.path()).unwrap();
        assert_eq!(p, root.path().join(".venv/bin/python"));
        assert_eq!(origin, "project .venv");
    }
}
