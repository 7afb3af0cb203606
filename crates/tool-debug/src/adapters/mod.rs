//! What each built-in adapter needs that the others do not, one file each:
//! how it is found, its launch and attach arguments, and its quirks. Their
//! catalog entries are data: `catalog/adapters.toml`, embedded and loaded
//! here into [`AdapterSpec`]s. The catalog, the session and the ops stay adapter-neutral and
//! ask here.
//!
//! Invariant: a harness-supplied adapter ([`AdapterKind::Custom`]) gets plain
//! `program`/`args`/`cwd` (launch) or `port` (attach) arguments, and every
//! adapter's `launch_template` is merged over the built-in arguments last.

pub mod dart;
pub mod debugpy;
pub mod delve;
pub mod lldb;
pub mod node;
pub mod python_tests;
pub mod rust_tests;

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
            node Node Inspector commands=2 first=Some(["node"]) markers=["package.json", "*.js", "*.mjs", "*.cjs"] ext=["js", "mjs", "cjs"] eval=repl template={}"#]]
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
            unknown variant `gdb`, expected one of `debugpy`, `lldb`, `delve`, `dart`, `node`, `custom`
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
        let marker = find_marker(&spec.markers, start, root);
        let binary = self.resolve_command(
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
        let setup = if spec.kind == AdapterKind::Lldb {
            lldb::setup(self, &command, &project_dir)
        } else {
            Default::default()
        };
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

    /// The command line, the debuggee interpreter (debugpy) and notes.
    fn resolve_command(
        &self,
        spec: &AdapterSpec,
        project: &Path,
        root: &Path,
    ) -> Result<CommandLine, String> {
        if spec.kind == AdapterKind::Debugpy {
            return debugpy::resolve_command(self, project, root);
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
    /// node: the name of the one `node:test` test of the program to run.
    pub node_test: Option<&'a str>,
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

/// How the adapter can give a program its standard input, if it can.
pub fn stdin_route(kind: AdapterKind) -> Option<StdinRoute> {
    match kind {
        AdapterKind::Lldb | AdapterKind::Debugpy => Some(StdinRoute::File),
        AdapterKind::Delve | AdapterKind::Node => Some(StdinRoute::AdapterStdin),
        AdapterKind::Dart | AdapterKind::Custom => None,
    }
}

/// Whether a launch without `stdin` gives the program a pipe held open
/// (a read waits, and the wait is said), where the adapter would otherwise
/// give it end of file at once: debugpy's launcher hands its debuggee
/// /dev/null. (lldb's debuggee already waits on the adapter's input.)
pub fn holds_stdin_open(kind: AdapterKind) -> bool {
    kind == AdapterKind::Debugpy
}

/// Function breakpoints a launch of `program` gets by default, as an IDE
/// sets them: a Rust program under lldb stops on `rust_panic`.
pub fn default_functions(kind: AdapterKind, program: &Path) -> Vec<String> {
    if kind == AdapterKind::Lldb && lldb::is_rust_executable(program) {
        vec![lldb::RUST_PANIC.to_string()]
    } else {
        Vec::new()
    }
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
    fn plain(arguments: Value) -> Self {
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
    let mut out = match spec.kind {
        AdapterKind::Debugpy => RequestArguments::plain(debugpy::launch(input)),
        AdapterKind::Lldb => RequestArguments::plain(lldb::launch(input)),
        AdapterKind::Delve => delve::launch(input)?,
        AdapterKind::Node => RequestArguments::plain(node::launch(input)),
        AdapterKind::Dart | AdapterKind::Custom => RequestArguments::plain(json!({
            "program": input.program,
            "args": input.args,
            "cwd": input.cwd,
            "env": input.env,
        })),
    };
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
    let mut out = match (spec.kind, target) {
        (AdapterKind::Debugpy, AttachTarget::Port(port)) => debugpy::attach(port),
        (AdapterKind::Debugpy, AttachTarget::Pid(pid)) => {
            RequestArguments::plain(debugpy::attach_pid(pid))
        }
        (AdapterKind::Lldb, AttachTarget::Port(port)) => RequestArguments::plain(lldb::attach(port)),
        (AdapterKind::Lldb, AttachTarget::Pid(pid)) => {
            RequestArguments::plain(lldb::attach_pid(adapter, pid))
        }
        (AdapterKind::Delve, AttachTarget::Port(port)) => delve::attach(port),
        (AdapterKind::Delve, AttachTarget::Pid(pid)) => {
            RequestArguments::plain(delve::attach_pid(pid))
        }
        (AdapterKind::Dart, AttachTarget::Port(port)) => {
            RequestArguments::plain(dart::attach(adapter, port))
        }
        (AdapterKind::Custom, AttachTarget::Port(port)) => {
            RequestArguments::plain(json!({"port": port}))
        }
        (AdapterKind::Node, AttachTarget::Port(port)) => {
            RequestArguments::plain(json!({ "port": port }))
        }
        (AdapterKind::Node, AttachTarget::Pid(_)) => {
            return Err(
                "the node backend attaches to a Node.js started with --inspect=127.0.0.1:PORT (pass that `port`), not to a pid".to_string(),
            )
        }
        (AdapterKind::Dart | AdapterKind::Custom, AttachTarget::Pid(_)) => {
            return Err(format!(
                "the {} adapter cannot attach to a process id; start the program with its debug server and attach with `port`",
                spec.id
            ))
        }
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

/// The adapter's [`StopQuestion`], if it needs one.
pub fn stop_question(kind: AdapterKind) -> Option<StopQuestion> {
    match kind {
        AdapterKind::Lldb => Some(StopQuestion {
            expression: lldb::STOP_QUESTION,
            read: lldb::stop_reason_in,
        }),
        _ => None,
    }
}

/// The program's output as the model reads it: an adapter's own frames
/// left out of tracebacks (debugpy).
pub fn tidy_output(kind: AdapterKind, text: String) -> String {
    match kind {
        AdapterKind::Debugpy => debugpy::hide_adapter_frames(&text),
        _ => text,
    }
}

/// Shallow merge of `extra`'s keys over `base`.
fn merge(base: &mut Value, extra: &Value) {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
}
