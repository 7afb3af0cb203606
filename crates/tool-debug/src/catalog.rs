//! Which debug adapters exist, and whether one can start for this checkout.
//!
//! The rule is the language servers' intersection: a root marker must exist
//! AND the adapter's binary must resolve; either alone is reported as not
//! usable, with what is missing, rather than guessed around. The harness can
//! add its own adapters ([`AdapterSpec::custom`]).
//!
//! debugpy is special twice over: the adapter runs under any interpreter that
//! can import debugpy (checked, never assumed), while the *debuggee* runs
//! under the project's own interpreter (`.venv`, then `venv`, then `python3`),
//! because a python from elsewhere is another environment and fails in ways
//! that look like broken code.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Which built-in adapter behaviour a spec gets (launch arguments, quirks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterKind {
    Debugpy,
    Lldb,
    Delve,
    Dart,
    /// A harness-supplied adapter: plain `program`/`args`/`cwd` launch
    /// arguments plus its template.
    Custom,
}

/// How the client reaches the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connect {
    /// DAP on the adapter's stdin/stdout.
    Stdio,
    /// The adapter listens on TCP and prints `… listening at: HOST:PORT` on
    /// stdout (`dlv dap --listen 127.0.0.1:0`); its later stdout is the
    /// debuggee's output.
    TcpListen,
}

/// One adapter of the catalog.
#[derive(Debug, Clone)]
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
    pub launch_template: Value,
    /// The `context` of `evaluate` requests.
    pub evaluate_context: String,
}

impl AdapterSpec {
    /// A harness-supplied stdio adapter.
    pub fn custom(id: &str, command: Vec<String>, markers: &[&str], extensions: &[&str]) -> Self {
        AdapterSpec {
            id: id.into(),
            kind: AdapterKind::Custom,
            commands: vec![command],
            markers: markers.iter().map(|s| s.to_string()).collect(),
            extensions: extensions.iter().map(|s| s.to_string()).collect(),
            connect: Connect::Stdio,
            launch_template: json!({}),
            evaluate_context: "watch".into(),
        }
    }
}

/// Versioned names Debian and LLVM's apt repository install (`lldb-dap-18`,
/// `/usr/lib/llvm-14/bin/lldb-vscode`), newest first.
fn lldb_commands() -> Vec<Vec<String>> {
    let versions: Vec<u32> = (11..=22).rev().collect();
    let mut out = vec![vec!["lldb-dap".to_string()]];
    for base in ["lldb-dap", "lldb-vscode"] {
        if base == "lldb-vscode" {
            out.push(vec!["lldb-vscode".to_string()]);
        }
        for n in &versions {
            out.push(vec![format!("{base}-{n}")]);
        }
        for n in &versions {
            out.push(vec![format!("/usr/lib/llvm-{n}/bin/{base}")]);
        }
    }
    out
}

/// The built-in catalog.
pub fn builtin() -> Vec<AdapterSpec> {
    vec![
        AdapterSpec {
            id: "debugpy".into(),
            kind: AdapterKind::Debugpy,
            commands: vec![],
            markers: vec![
                "pyproject.toml".into(),
                "setup.py".into(),
                "requirements.txt".into(),
            ],
            extensions: vec!["py".into()],
            connect: Connect::Stdio,
            launch_template: json!({}),
            // `repl` evaluates statements as well as expressions.
            evaluate_context: "repl".into(),
        },
        AdapterSpec {
            id: "lldb".into(),
            kind: AdapterKind::Lldb,
            commands: lldb_commands(),
            markers: vec![
                "Cargo.toml".into(),
                "CMakeLists.txt".into(),
                "Makefile".into(),
                "*.c".into(),
                "*.cpp".into(),
            ],
            extensions: vec![],
            connect: Connect::Stdio,
            launch_template: json!({}),
            // lldb's `repl` context runs lldb commands, not expressions.
            evaluate_context: "watch".into(),
        },
        AdapterSpec {
            id: "delve".into(),
            kind: AdapterKind::Delve,
            commands: vec![vec![
                "dlv".into(),
                "dap".into(),
                "--listen".into(),
                "127.0.0.1:0".into(),
            ]],
            markers: vec!["go.mod".into()],
            extensions: vec!["go".into()],
            connect: Connect::TcpListen,
            launch_template: json!({}),
            evaluate_context: "repl".into(),
        },
        AdapterSpec {
            id: "dart".into(),
            kind: AdapterKind::Dart,
            commands: vec![vec!["dart".into(), "debug_adapter".into()]],
            markers: vec!["pubspec.yaml".into()],
            extensions: vec!["dart".into()],
            connect: Connect::Stdio,
            launch_template: json!({}),
            evaluate_context: "repl".into(),
        },
    ]
}

/// A resolved command line, the debuggee interpreter (debugpy) and notes.
type CommandLine = (Vec<OsString>, Option<PathBuf>, Vec<String>);

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
}

impl Catalog {
    /// `extra` adapters replace built-in ones of the same id, else are added.
    pub fn new(extra: Vec<AdapterSpec>, search_path: OsString, env: Vec<(String, String)>) -> Self {
        let mut specs = builtin();
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
        }
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
        if program.is_dir() && program.join("go.mod").is_file() {
            return self.spec("delve");
        }
        if is_native_executable(program) {
            return self.spec("lldb");
        }
        None
    }

    /// Whether `spec` can start for a program in `start` (a directory inside
    /// `root`): the marker is looked for from `start` up to `root`.
    pub fn resolve(
        &self,
        spec: &AdapterSpec,
        start: &Path,
        root: &Path,
    ) -> Result<ResolvedAdapter, NotUsable> {
        let marker = find_marker(&spec.markers, start, root);
        let binary = self.resolve_command(
            spec,
            marker.as_ref().map(|(d, _)| d.as_path()).unwrap_or(start),
            root,
        );
        let (project_dir, marker) = match (marker, &binary) {
            (Some(m), Ok(_)) => m,
            (None, Ok((cmd, _, _))) => {
                return Err(NotUsable {
                    why: format!(
                        "no root marker ({}) in {}; binary `{}` found",
                        spec.markers.join(", "),
                        rel(start, root),
                        cmd[0].to_string_lossy()
                    ),
                })
            }
            (Some((_, m)), Err(why)) => {
                return Err(NotUsable {
                    why: format!("{why}; marker {m} found"),
                })
            }
            (None, Err(why)) => {
                return Err(NotUsable {
                    why: format!(
                        "{why}, and no root marker ({}) in {}",
                        spec.markers.join(", "),
                        rel(start, root)
                    ),
                })
            }
        };
        let (command, debuggee_python, notes) = binary.expect("checked above");
        let init_commands =
            if spec.kind == AdapterKind::Lldb && project_dir.join("Cargo.toml").is_file() {
                self.rust_formatters()
            } else {
                Vec::new()
            };
        let mut env = Vec::new();
        let mut path_prefix = None;
        // Only when Python is needed (the Rust formatters): starting lldb's
        // embedded Python costs ~100 ms a launch.
        if spec.kind == AdapterKind::Lldb && !init_commands.is_empty() {
            if let Some(dir) = command.first().and_then(|c| llvm_python_dir(Path::new(c))) {
                let mut path = dir.into_os_string();
                if let Some(old) = std::env::var_os("PYTHONPATH").filter(|o| !o.is_empty()) {
                    path.push(":");
                    path.push(old);
                }
                env.push((
                    "PYTHONPATH".to_string(),
                    path.to_string_lossy().into_owned(),
                ));
                // liblldb embeds the system libpython; left alone it finds
                // its stdlib through the first `python3` on PATH (a venv, a
                // pyenv build) and fails to start. Point it at the system one.
                // Python also reads the `pyvenv.cfg` of the first `python3`
                // on PATH, so the system one must come first for the adapter.
                if let Some(home) = system_python_home(&dir_version(&env)) {
                    env.push(("PYTHONHOME".to_string(), home));
                    path_prefix = Some(PathBuf::from("/usr/bin"));
                }
            }
        }
        Ok(ResolvedAdapter {
            spec: spec.clone(),
            command,
            project_dir,
            marker,
            debuggee_python,
            init_commands,
            notes,
            env,
            path_prefix,
        })
    }

    /// The command line, the debuggee interpreter (debugpy) and notes.
    fn resolve_command(
        &self,
        spec: &AdapterSpec,
        project: &Path,
        root: &Path,
    ) -> Result<CommandLine, String> {
        if spec.kind == AdapterKind::Debugpy {
            return self.resolve_debugpy(project, root);
        }
        for cmd in &spec.commands {
            let Some((program, rest)) = cmd.split_first() else {
                continue;
            };
            if let Some(path) = self.which(program) {
                let mut line = vec![path.into_os_string()];
                line.extend(rest.iter().map(OsString::from));
                return Ok((line, None, Vec::new()));
            }
        }
        let names: Vec<&str> = spec
            .commands
            .iter()
            .filter_map(|c| c.first().map(String::as_str))
            .filter(|n| !n.contains('/'))
            .take(4)
            .collect();
        Err(format!(
            "binary not found on PATH (looked for {})",
            names.join(", ")
        ))
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

    fn resolve_debugpy(&self, project: &Path, root: &Path) -> Result<CommandLine, String> {
        let Some((debuggee, origin)) = self.project_python(project, root) else {
            return Err("no Python interpreter: no .venv/bin/python or venv/bin/python, and python3 not on PATH".into());
        };
        let mut notes = Vec::new();
        let adapter_python = if let Some(version) = self.debugpy_version(&debuggee) {
            notes.push(format!(
                "adapter and program run with {} ({origin}, debugpy {version})",
                debuggee.display()
            ));
            debuggee.clone()
        } else {
            let other = ["python3", "python"]
                .iter()
                .filter_map(|n| self.which(n))
                .find_map(|p| self.debugpy_version(&p).map(|v| (p, v)));
            match other {
                Some((p, version)) => {
                    notes.push(format!(
                        "debugpy is not installed in the project interpreter {} ({origin}); \
                         the adapter runs with {} (debugpy {version}) and the program still runs with {}",
                        debuggee.display(),
                        p.display(),
                        debuggee.display()
                    ));
                    p
                }
                None => {
                    return Err(format!(
                        "no interpreter can import debugpy (tried {} ({origin}), then python3 and python on PATH); \
                         install it with `{} -m pip install debugpy`",
                        debuggee.display(),
                        debuggee.display()
                    ))
                }
            }
        };
        let command = vec![
            adapter_python.into_os_string(),
            "-m".into(),
            "debugpy.adapter".into(),
        ];
        Ok((command, Some(debuggee), notes))
    }

    /// debugpy's version if `python` can import it (cached).
    pub fn debugpy_version(&self, python: &Path) -> Option<String> {
        self.probe(
            python,
            "debugpy",
            &["-c", "import debugpy; print(debugpy.__version__)"],
        )
    }

    /// What rust-lldb loads: the toolchain's formatters, so `Vec` and
    /// `String` print as values instead of raw structs.
    fn rust_formatters(&self) -> Vec<String> {
        let Some(rustc) = self.which("rustc") else {
            return Vec::new();
        };
        let Some(sysroot) = self.probe(&rustc, "sysroot", &["--print", "sysroot"]) else {
            return Vec::new();
        };
        let etc = Path::new(&sysroot).join("lib/rustlib/etc");
        let lookup = etc.join("lldb_lookup.py");
        let commands = etc.join("lldb_commands");
        if !lookup.is_file() || !commands.is_file() {
            return Vec::new();
        }
        vec![
            format!("command script import \"{}\"", lookup.display()),
            format!("command source -s 0 \"{}\"", commands.display()),
        ]
    }

    /// Run `program args…` once per (file, mtime, probe) and keep the first
    /// line of its stdout when it succeeds.
    fn probe(&self, program: &Path, what: &'static str, args: &[&str]) -> Option<String> {
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
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    return None;
                }
                let mut out = String::new();
                use std::io::Read;
                child.stdout.take()?.read_to_string(&mut out).ok()?;
                return out
                    .lines()
                    .next()
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty());
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Where an LLVM install keeps lldb's Python module, for an adapter binary
/// inside it. Debian's lldb-14 looks for it in a wrong place
/// (`lldb-14 -P` prints `/usr/lib/local/…`), so its embedded Python — and
/// with it the Rust formatters — fails unless `PYTHONPATH` says where.
fn llvm_python_dir(binary: &Path) -> Option<PathBuf> {
    let real = binary.canonicalize().ok()?;
    let llvm = real.parent()?.parent()?; // …/llvm-N/bin/lldb-vscode → …/llvm-N
    let lib = llvm.join("lib");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
        })
        .flat_map(|p| [p.join("dist-packages"), p.join("site-packages")])
        .filter(|p| p.join("lldb").join("__init__.py").is_file())
        .collect();
    candidates.sort();
    candidates.pop()
}

/// `python3.11` from the PYTHONPATH entry just made
/// (`…/lib/python3.11/dist-packages`).
fn dir_version(env: &[(String, String)]) -> String {
    env.iter()
        .find(|(k, _)| k == "PYTHONPATH")
        .and_then(|(_, v)| v.split(':').next())
        .and_then(|p| {
            Path::new(p)
                .parent()?
                .file_name()?
                .to_str()
                .map(String::from)
        })
        .unwrap_or_default()
}

/// `/usr` when the system Python of that version is installed there.
fn system_python_home(version: &str) -> Option<String> {
    (!version.is_empty() && Path::new("/usr/lib").join(version).join("os.py").is_file())
        .then(|| "/usr".to_string())
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
        .map(|_| magic == *b"\x7fELF" || magic == [0xcf, 0xfa, 0xed, 0xfe])
        .unwrap_or(false)
}

fn rel(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(p) if p.as_os_str().is_empty() => ".".into(),
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
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
        let exe = root.path().join("prog");
        std::fs::write(&exe, b"\x7fELF....").unwrap();
        assert_eq!(cat.route(&exe).unwrap().id, "lldb");
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
