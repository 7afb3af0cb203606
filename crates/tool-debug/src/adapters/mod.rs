//! What each built-in adapter needs that the others do not, one file each:
//! how it is found, what a launch of a program runs under it, its launch
//! and attach arguments, and its quirks — the [`Adapter`] trait, with one
//! impl per `adapters/<name>.rs` ([`AdapterKind::adapter`] picks it).
//! Their catalog entries are data: `catalog/adapters.toml`, embedded and
//! loaded here into [`AdapterSpec`]s. The catalog, the session and the ops
//! stay adapter-neutral and ask the trait.
//!
//! Invariant: a harness-supplied adapter ([`AdapterKind::Custom`]) gets plain
//! `program`/`args`/`cwd` (launch) or `port` (attach) arguments, and every
//! adapter's `launch_template` is merged over the built-in arguments last
//! ([`launch_arguments`], [`attach_arguments`]).

pub mod custom;
pub mod dart;
pub mod debugpy;
pub mod delve;
pub mod java;
pub mod java_tests;
pub mod lldb;
pub mod node;
pub mod python_tests;
pub mod rust_tests;

use crate::args::GoMode;
use crate::catalog::{
    find_marker, rel, AdapterKind, AdapterSpec, Catalog, CommandLine, NotUsable, ResolvedAdapter,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The built-in catalog's text (`catalog/adapters.toml`), embedded.
pub const BUILTIN_TOML: &str = include_str!("../../catalog/adapters.toml");

/// An adapter catalog file: its `[[adapters]]` tables.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AdapterFile {
    adapters: Vec<AdapterSpec>,
}

/// Parse an adapter catalog's text (the built-in one, or a test's).
pub fn parse_catalog(text: &str) -> Result<Vec<AdapterSpec>, String> {
    toml::from_str::<AdapterFile>(text)
        .map(|f| f.adapters)
        .map_err(|e| e.to_string())
}

/// The built-in catalog, in routing order, from the embedded
/// `catalog/adapters.toml` (a test checks it loads).
pub fn builtin() -> Vec<AdapterSpec> {
    parse_catalog(BUILTIN_TOML).expect("the built-in catalog/adapters.toml is valid (tested)")
}

/// What one debug adapter knows that the others do not. The default
/// methods are a plain DAP adapter's (dart's, a harness's `custom` one);
/// each built-in adapter overrides what it does differently.
pub trait Adapter: Sync {
    /// The adapter's command line, the debuggee's interpreter (debugpy)
    /// and notes: by default the first of the catalog `commands` whose
    /// program is on the search path.
    fn command(
        &self,
        catalog: &Catalog,
        spec: &AdapterSpec,
        _project: &Path,
        _root: &Path,
    ) -> Result<CommandLine, String> {
        first_on_path(catalog, spec)
    }

    /// What it needs besides its command line for a project in
    /// `project_dir` (lldb: Rust formatters and their Python).
    fn setup(&self, _catalog: &Catalog, _command: &[OsString], _project_dir: &Path) -> Setup {
        Setup::default()
    }

    /// What a `launch` of `launch.program` runs under this adapter, with
    /// `mode` and `test` checked; `Err` says why they do not fit.
    fn launch_target(&self, launch: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        launch.plain()
    }

    /// Whether it debugs Python: `module` launches go to it.
    fn runs_python(&self) -> bool {
        false
    }

    /// How it can give a program its standard input, if it can.
    fn stdin_route(&self) -> Option<StdinRoute> {
        None
    }

    /// Whether a launch without `stdin` gives the program a pipe held open
    /// (a read waits, and the wait is said), where the adapter would
    /// otherwise give it end of file at once.
    fn holds_stdin_open(&self) -> bool {
        false
    }

    /// Function breakpoints a launch of `program` gets by default, as an
    /// IDE sets them.
    fn default_functions(&self, _program: &Path) -> Vec<String> {
        Vec::new()
    }

    /// Its `launch` arguments for `input`, before the spec's template.
    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        Ok(RequestArguments::plain(json!({
            "program": input.program,
            "args": input.args,
            "cwd": input.cwd,
            "env": input.env,
        })))
    }

    /// Its `attach` arguments for a debug server on 127.0.0.1:`port`,
    /// before the spec's template.
    fn attach_port(&self, _adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        RequestArguments::plain(json!({ "port": port }))
    }

    /// Its `attach` arguments for the running process `pid`, before the
    /// spec's template; `Err` says why it cannot attach that way.
    fn attach_pid(&self, adapter: &ResolvedAdapter, _pid: u32) -> Result<RequestArguments, String> {
        Err(format!(
            "the {} adapter cannot attach to a process id; start the program with its debug server and attach with `port`",
            adapter.spec.id
        ))
    }

    /// Checked before an attach to `target` starts the adapter (blocking,
    /// run off the async threads); `Err` is the refusal.
    fn check_attach(&self, _target: AttachTarget) -> Result<(), String> {
        Ok(())
    }

    /// The question to ask it about a stop that came without a
    /// description, if it needs one.
    fn stop_question(&self) -> Option<StopQuestion> {
        None
    }

    /// The program's output as the model reads it (debugpy: its own frames
    /// left out of tracebacks).
    fn tidy_output(&self, text: String) -> String {
        text
    }

    /// Whether its threads are goroutines (delve): answers name them.
    fn threads_are_goroutines(&self) -> bool {
        false
    }

    /// The goroutine a thread of that `name` is, where threads are
    /// goroutines.
    fn goroutine(&self, _thread_name: &str) -> Option<delve::GoroutineName> {
        None
    }

    /// Whether the adapter process is the debuggee itself (the JVM under
    /// its JDWP agent): its exit is the program's exit, with its status
    /// as the exit code, never an adapter's death.
    fn process_is_debuggee(&self) -> bool {
        false
    }
}

impl AdapterKind {
    /// The adapter behind this kind: the one place a kind is matched.
    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            AdapterKind::Debugpy => &debugpy::Debugpy,
            AdapterKind::Lldb => &lldb::Lldb,
            AdapterKind::Delve => &delve::Delve,
            AdapterKind::Dart => &dart::Dart,
            AdapterKind::Node => &node::Node,
            AdapterKind::Java => &java::Java,
            AdapterKind::Custom => &custom::Custom,
        }
    }
}

/// What an adapter needs besides its command line in a project.
#[derive(Debug, Default)]
pub struct Setup {
    /// Commands run before the target is created (lldb: Rust formatters).
    pub init_commands: Vec<String>,
    /// Extra environment for the adapter process.
    pub env: Vec<(String, String)>,
    /// Put in front of the adapter's PATH.
    pub path_prefix: Option<PathBuf>,
}

/// A `launch` of a program, as the model asked for it.
#[derive(Debug, Clone, Copy)]
pub struct ProgramLaunch<'a> {
    /// The adapter's id, for messages.
    pub adapter_id: &'a str,
    /// The program as the model wrote it.
    pub program: &'a str,
    /// Its absolute path (a file or a folder).
    pub path: &'a Path,
    pub mode: Option<GoMode>,
    pub test: Option<&'a str>,
}

impl ProgramLaunch<'_> {
    /// The program itself, with neither `mode` nor `test`: what an adapter
    /// without tests or modes accepts.
    pub fn plain(&self) -> Result<LaunchTarget, String> {
        if self.mode.is_none() && self.test.is_none() {
            return Ok(LaunchTarget::Program { go: None });
        }
        Err(format!(
            "`mode` and `test` are for Go programs under delve, Python test files under debugpy and Rust test files under lldb, and `{}` goes to the {} adapter; leave them out",
            self.program, self.adapter_id
        ))
    }
}

/// What a `launch` runs, as its adapter decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchTarget {
    /// The program itself (delve: how Go launches it).
    Program { go: Option<delve::GoLaunch> },
    /// One test of a Python test file: its name inside the file.
    PythonTest(String),
    /// One test of the file, run by its adapter's own runner: its name
    /// as that runner selects it (a `node:test` name, a JUnit
    /// `Class#method`), and the label answers give the launch.
    NamedTest { name: String, label: String },
    /// One Rust test of the file: its test binary is built by cargo
    /// before lldb starts.
    RustTest,
}

/// The first of `spec`'s commands whose program is on the search path.
fn first_on_path(catalog: &Catalog, spec: &AdapterSpec) -> Result<CommandLine, String> {
    for cmd in &spec.commands {
        let Some((program, rest)) = cmd.split_first() else {
            continue;
        };
        if let Some(path) = catalog.which(program) {
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

#[cfg(test)]
mod catalog_file_tests {
    use super::*;
    use crate::catalog::Connect;

    #[test]
    fn every_built_in_adapter_loads_from_the_toml() {
        let specs = parse_catalog(BUILTIN_TOML).unwrap();
        let summary: Vec<String> = specs
            .iter()
            .map(|s| {
                format!(
                    "{} {:?} {:?} commands={} first={:?} markers={:?} ext={:?} eval={} template={}",
                    s.id,
                    s.kind,
                    s.connect,
                    s.commands.len(),
                    s.commands.first(),
                    s.markers,
                    s.extensions,
                    s.evaluate_context,
                    s.launch_template
                )
            })
            .collect();
        expect_test::expect![[r#"
            debugpy Debugpy Stdio commands=0 first=None markers=["pyproject.toml", "setup.py", "requirements.txt"] ext=["py"] eval=repl template={}
            lldb Lldb Stdio commands=50 first=Some(["lldb-dap"]) markers=["Cargo.toml", "CMakeLists.txt", "Makefile", "*.c", "*.cpp"] ext=["c", "cc", "cpp", "rs"] eval=watch template={}
            delve Delve TcpListen commands=1 first=Some(["dlv", "dap", "--listen", "127.0.0.1:0"]) markers=["go.mod"] ext=["go"] eval=repl template={}
            dart Dart Stdio commands=1 first=Some(["dart", "debug_adapter"]) markers=["pubspec.yaml"] ext=["dart"] eval=repl template={}
            node Node Inspector commands=2 first=Some(["node"]) markers=["package.json", "*.js", "*.mjs", "*.cjs"] ext=["js", "mjs", "cjs"] eval=repl template={}
            java Java Jdwp commands=1 first=Some(["java"]) markers=["pom.xml", "build.gradle", "build.gradle.kts", "*.java"] ext=["java", "class"] eval=watch template={}"#]]
        .assert_eq(&summary.join("\n"));
        assert_eq!(specs[1].commands[13], vec!["/usr/lib/llvm-22/bin/lldb-dap"]);
        assert_eq!(specs[2].connect, Connect::TcpListen);
        // A bad entry is named, not skipped.
        let err = parse_catalog("[[adapters]]\nid = \"x\"\nkind = \"gdb\"\n").unwrap_err();
        expect_test::expect![[r#"
            TOML parse error at line 3, column 8
              |
            3 | kind = "gdb"
              |        ^^^^^
            unknown variant `gdb`, expected one of `debugpy`, `lldb`, `delve`, `dart`, `node`, `java`, `custom`
        "#]]
        .assert_eq(&err);
    }
}

impl Catalog {
    /// The built-in adapters, then `extra` (replacing built-ins of the same
    /// id); binaries are looked for on `search_path`.
    pub fn new(extra: Vec<AdapterSpec>, search_path: OsString, env: Vec<(String, String)>) -> Self {
        Catalog::from_specs(builtin(), extra, search_path, env)
    }

    /// Whether `spec` can start for a program in `start` (a directory inside
    /// `root`): the marker is looked for from `start` up to `root`.
    pub fn resolve(
        &self,
        spec: &AdapterSpec,
        start: &Path,
        root: &Path,
    ) -> Result<ResolvedAdapter, NotUsable> {
        let adapter = spec.kind.adapter();
        let marker = find_marker(&spec.markers, start, root);
        let binary = adapter.command(
            self,
            spec,
            marker.as_ref().map_or(start, |(d, _)| d.as_path()),
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
        let setup = adapter.setup(self, &command, &project_dir);
        Ok(ResolvedAdapter {
            spec: spec.clone(),
            command,
            project_dir,
            marker,
            debuggee_python,
            init_commands: setup.init_commands,
            notes,
            env: setup.env,
            path_prefix: setup.path_prefix,
        })
    }

    /// The adapter that attaches to the running process `pid` when none is
    /// named: a Python interpreter goes to the adapter that runs Python,
    /// anything else by its executable (`/proc/PID/exe`) as
    /// [`Catalog::route`] would send it.
    pub fn route_process(&self, pid: u32) -> Option<&AdapterSpec> {
        let exe = tool_core::process::procfs::exe(pid)?;
        let name = exe.file_name()?.to_str()?;
        if name.starts_with("python") {
            return self.specs().iter().find(|s| s.kind.adapter().runs_python());
        }
        self.route(&exe)
    }
}

/// What a launch is made of.
#[derive(Debug)]
pub struct LaunchInput<'a> {
    pub adapter: &'a ResolvedAdapter,
    /// Absolute path of the program (a file or a Go package folder).
    pub program: &'a Path,
    pub args: Vec<String>,
    /// The run's search path: the debuggee's `PATH`.
    pub search_path: &'a OsString,
    /// The program's working directory.
    pub cwd: &'a Path,
    /// Extra environment for the program.
    pub env: &'a BTreeMap<String, String>,
    /// A file whose text is the program's standard input (or a pipe held
    /// open, with nothing in it).
    pub stdin_file: Option<&'a Path>,
    /// delve: how the Go program is launched (checked by
    /// [`delve::launch_mode`]).
    pub go: Option<delve::GoLaunch>,
    /// debugpy: `python -m MODULE` instead of the program (a test run, or
    /// the model's `module`).
    pub python: Option<python_tests::PythonModule>,
    /// node: the name of the one `node:test` test of the program to run;
    /// java: the JUnit selection (`pkg.Class#method`).
    pub named_test: Option<&'a str>,
}

/// A new scratch folder under the system temp dir, removed with the
/// session (never in the workspace).
pub fn scratch_dir() -> std::io::Result<PathBuf> {
    tool_core::scratch::make_dir("debug")
}

/// How an adapter's program gets the `stdin` text of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinRoute {
    /// From a scratch file the launch arguments name: lldb's
    /// `target.input-path`; debugpy's debuggee started through `sh -c
    /// 'exec … < FILE'` (its launcher gives it /dev/null otherwise).
    File,
    /// Written into the adapter's own standard input, which the debuggee
    /// inherits: `dlv dap` speaks DAP on TCP and starts its target with
    /// its own stdin.
    AdapterStdin,
}

/// The arguments of a launch or attach request, and what they imply.
#[derive(Debug)]
pub struct RequestArguments {
    pub arguments: Value,
    /// Removed when the session ends (delve's build output).
    pub scratch_dir: Option<PathBuf>,
    /// Connect straight to this port instead of starting the adapter.
    pub connect_to: Option<u16>,
}

impl RequestArguments {
    pub(crate) fn plain(arguments: Value) -> Self {
        RequestArguments {
            arguments,
            scratch_dir: None,
            connect_to: None,
        }
    }
}

/// The `launch` arguments for `input`'s adapter.
pub fn launch_arguments(input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
    let spec = &input.adapter.spec;
    let mut out = spec.kind.adapter().launch(input)?;
    merge(&mut out.arguments, &spec.launch_template);
    Ok(out)
}

/// What an `attach` reaches: a debug server on a port, or a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachTarget {
    /// A debuggee (or its debug server) listening on 127.0.0.1:port.
    Port(u16),
    /// A running process, attached to by the adapter (ptrace).
    Pid(u32),
}

/// The `attach` arguments for `target`; `Err` says why this adapter
/// cannot attach that way.
pub fn attach_arguments(
    adapter: &ResolvedAdapter,
    target: AttachTarget,
) -> Result<RequestArguments, String> {
    let spec = &adapter.spec;
    let kind = spec.kind.adapter();
    let mut out = match target {
        AttachTarget::Port(port) => kind.attach_port(adapter, port),
        AttachTarget::Pid(pid) => kind.attach_pid(adapter, pid)?,
    };
    merge(&mut out.arguments, &spec.launch_template);
    Ok(out)
}

/// A question to ask the adapter about a stop that came without a
/// description: an expression for its `repl` context, and how to read the
/// answer.
#[derive(Debug, Clone, Copy)]
pub struct StopQuestion {
    pub expression: &'static str,
    pub read: fn(&str) -> Option<String>,
}

/// Shallow merge of `extra`'s keys over `base`.
fn merge(base: &mut Value, extra: &Value) {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
}
