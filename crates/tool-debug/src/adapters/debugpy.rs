//! debugpy: the adapter runs under any interpreter that can import debugpy
//! (checked, never assumed), while the *debuggee* runs under the project's
//! own interpreter (`.venv`, then `venv`, then `python3`), because a python
//! from elsewhere is another environment and fails in ways that look like
//! broken code.

use super::{
    python_tests, Adapter, AttachTarget, LaunchInput, LaunchTarget, ProgramLaunch,
    RequestArguments, StdinRoute,
};
use crate::catalog::{AdapterSpec, Catalog, CommandLine, ResolvedAdapter};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// debugpy, Python's debug adapter.
pub struct Debugpy;

impl Adapter for Debugpy {
    fn command(
        &self,
        catalog: &Catalog,
        _spec: &AdapterSpec,
        project: &Path,
        root: &Path,
    ) -> Result<CommandLine, String> {
        resolve_command(catalog, project, root)
    }

    fn launch_target(&self, l: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        let program = l.program;
        match (l.mode, l.test) {
            (None, None) => Ok(LaunchTarget::Program { go: None }),
            (None, Some(test)) if l.path.is_file() => Ok(LaunchTarget::PythonTest(
                python_tests::split_node_id(test).1.to_string(),
            )),
            (None, Some(_)) => Err(format!(
                "`test` runs one test of a Python test file, and `{program}` is a folder; pass the test file as `program`, or use `module` (pytest, with `args`) for a folder"
            )),
            (Some(_), _) => Err(format!(
                "`mode` is for Go programs under delve, and `{program}` goes to the debugpy adapter; leave it out (`test` runs a Python test, `module` runs python -m)"
            )),
        }
    }

    fn runs_python(&self) -> bool {
        true
    }

    /// The debuggee is started through `sh -c 'exec … < FILE'`: its
    /// launcher gives it /dev/null otherwise.
    fn stdin_route(&self) -> Option<StdinRoute> {
        Some(StdinRoute::File)
    }

    /// debugpy's launcher hands its debuggee /dev/null.
    fn holds_stdin_open(&self) -> bool {
        true
    }

    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        Ok(RequestArguments::plain(launch(input)))
    }

    fn attach_port(&self, _adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        attach(port)
    }

    fn attach_pid(&self, _adapter: &ResolvedAdapter, pid: u32) -> Result<RequestArguments, String> {
        Ok(RequestArguments::plain(attach_pid(pid)))
    }

    /// By pid, debugpy injects itself with gdb, which must work here.
    fn check_attach(&self, target: AttachTarget) -> Result<(), String> {
        match target {
            AttachTarget::Pid(_) => gdb_can_inject().map_err(|why| pid_attach_refusal(&why)),
            AttachTarget::Port(_) => Ok(()),
        }
    }

    fn tidy_output(&self, text: String) -> String {
        hide_adapter_frames(&text)
    }
}

fn launch(input: &LaunchInput<'_>) -> Value {
    let python = input
        .adapter
        .debuggee_python
        .clone()
        .unwrap_or_else(|| PathBuf::from("python3"));
    // debugpy's launcher hands its debuggee /dev/null: the program starts
    // through a shell that opens its input (the `stdin` text, or a pipe
    // held open when none was given) and execs the interpreter (same pid;
    // the launcher itself stays plain).
    let python_command: Vec<String> = match input.stdin_file {
        None => vec![python.to_string_lossy().into_owned()],
        Some(file) => vec![
            "/bin/sh".into(),
            "-c".into(),
            format!(
                "exec \"$0\" \"$@\" < {}",
                shell_quoted(&file.to_string_lossy())
            ),
            python.to_string_lossy().into_owned(),
        ],
    };
    let (target, args) = match &input.python {
        Some(m) => (
            json!({ "module": m.module }),
            m.leading_args.iter().chain(&input.args).cloned().collect(),
        ),
        None => (json!({ "program": input.program }), input.args.clone()),
    };
    let mut arguments = json!({
        "type": "python",
        "request": "launch",
        "name": "agent-tools",
        "args": args,
        "cwd": input.cwd,
        "env": input.env,
        "python": python_command,
        "debugLauncherPython": python,
        "console": "internalConsole",
        "redirectOutput": true,
        "justMyCode": true,
        "stopOnEntry": false,
    });
    super::merge(&mut arguments, &target);
    arguments
}

/// `text` as one word for `sh`: single-quoted, its quotes escaped.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `python -m debugpy --listen PORT` runs its own adapter on that port:
/// the client connects straight to it, as an IDE does for `connect`.
fn attach(port: u16) -> RequestArguments {
    RequestArguments {
        arguments: json!({
            "type": "python", "request": "attach", "name": "agent-tools",
            "connect": {"host": "127.0.0.1", "port": port}, "justMyCode": true,
        }),
        scratch_dir: None,
        connect_to: Some(port),
    }
}

/// Whether gdb can call a function inside a running process on this
/// machine, which debugpy's attach by pid needs (it injects itself with
/// gdb). Probed once per process on a throwaway child (`sleep`), never on
/// the user's process; `Err` holds gdb's own words. Some virtual machines
/// refuse the register state gdb writes back ("Couldn't write extended
/// state status: Bad address"): debugpy then waits forever for a debuggee
/// that never connects. Blocking (up to 15 s the first time).
pub fn gdb_can_inject() -> Result<(), String> {
    static PROBED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBED.get_or_init(probe_gdb_injection).clone()
}

/// Why debugpy cannot attach by pid here (`why`: from [`gdb_can_inject`]),
/// and what works instead.
pub fn pid_attach_refusal(why: &str) -> String {
    format!(
        "debugpy attaches to a running process by having gdb call into it, and that fails on this machine ({why}); \
         start the program under debugpy's own server instead (`python -m debugpy --listen 127.0.0.1:PORT prog.py`) \
         and attach by `port`"
    )
}

fn probe_gdb_injection() -> Result<(), String> {
    use std::time::Duration;
    use tool_core::process::{BlockingChild, ChildSpec, Io};
    // Killed with its group when dropped, at the end of this function.
    let target = BlockingChild::spawn(
        &ChildSpec::new("sleep")
            .arg("60")
            .stdout(Io::Null)
            .stderr(Io::Null),
    )
    .map_err(|e| format!("cannot start a process to probe gdb with: {e}"))?;
    let pid = target.id();
    // stdin null, stdout and stderr piped: ChildSpec's defaults.
    let gdb = BlockingChild::spawn(&ChildSpec::new("gdb").args([
        "-nx",
        "--batch",
        "-p",
        &pid.to_string(),
        "-ex",
        "call (int)getpid()",
    ]));
    let result = match gdb {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("gdb is not installed (debugpy needs it to attach by pid)".to_string())
        }
        Err(e) => Err(format!("cannot run gdb: {e}")),
        Ok(mut gdb) => {
            // Past the bound its group is killed; what it printed is read.
            let _ = gdb.wait_bounded(Duration::from_secs(15));
            let out = gdb.wait_with_output().map_err(|e| e.to_string())?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if text.contains(&format!("= {pid}")) {
                Ok(())
            } else {
                let why = text
                    .lines()
                    .rev()
                    .map(str::trim)
                    .find(|l| {
                        !l.is_empty()
                            && (l.contains("Couldn't")
                                || l.contains("ptrace")
                                || l.contains("not permitted")
                                || l.starts_with("warning:")
                                || l.contains("rror"))
                    })
                    .unwrap_or("it printed no result")
                    .to_string();
                Err(format!("gdb could not call into a process: {why}"))
            }
        }
    };
    drop(target);
    result
}

/// Attach to a running Python process: the adapter injects debugpy into it
/// with gdb (which needs ptrace permission over it).
fn attach_pid(pid: u32) -> Value {
    json!({
        "type": "python", "request": "attach", "name": "agent-tools",
        "processId": pid, "justMyCode": true,
    })
}

/// The adapter's command line (`INTERPRETER -m debugpy.adapter`), the
/// debuggee's interpreter and notes on which was used.
fn resolve_command(catalog: &Catalog, project: &Path, root: &Path) -> Result<CommandLine, String> {
    let Some((debuggee, origin)) = catalog.project_python(project, root) else {
        return Err("no Python interpreter: no .venv/bin/python or venv/bin/python, and python3 not on PATH".into());
    };
    let mut notes = Vec::new();
    let adapter_python = if let Some(version) = debugpy_version(catalog, &debuggee) {
        notes.push(format!(
            "adapter and program run with {} ({origin}, debugpy {version})",
            debuggee.display()
        ));
        debuggee.clone()
    } else {
        // The interpreter `agent-tools install debugpy` sets up, then any.
        let other = ["debugpy-python", "python3", "python"]
            .iter()
            .filter_map(|n| catalog.which(n))
            .find_map(|p| debugpy_version(catalog, &p).map(|v| (p, v)));
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
                     install it with `agent-tools install debugpy` or `{} -m pip install debugpy`",
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

/// pytest's version if `python` can import it (cached).
pub fn pytest_version(catalog: &Catalog, python: &Path) -> Option<String> {
    catalog.probe(
        python,
        "pytest",
        &["-c", "import pytest; print(pytest.__version__)"],
    )
}

/// debugpy's version if `python` can import it (cached).
pub fn debugpy_version(catalog: &Catalog, python: &Path) -> Option<String> {
    catalog.probe(
        python,
        "debugpy",
        &["-c", "import debugpy; print(debugpy.__version__)"],
    )
}

/// A traceback in the program's output, from its first user frame: the
/// frames of debugpy and of `runpy` that run the program are left out, and
/// a line says how many were.
pub fn hide_adapter_frames(text: &str) -> String {
    fn adapter_frame(line: &str) -> bool {
        let Some(rest) = line.trim_start().strip_prefix("File \"") else {
            return false;
        };
        let path = rest.split('"').next().unwrap_or_default();
        path.contains("/debugpy/") || path.contains("/_pydevd") || path.ends_with("/runpy.py")
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        if !(lines[i].starts_with("  File \"") && adapter_frame(lines[i])) {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        // A run of adapter frames, each with its indented detail lines.
        let mut hidden = 0;
        while i < lines.len() && lines[i].starts_with("  File \"") && adapter_frame(lines[i]) {
            hidden += 1;
            i += 1;
            while i < lines.len() && lines[i].starts_with("    ") {
                i += 1;
            }
        }
        out.push_str(&format!(
            "  ({} of the debugger hidden)\n",
            tool_core::format::plural(hidden, "frame", "frames")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted() {
        assert_eq!(shell_quoted("/tmp/a b/stdin"), "'/tmp/a b/stdin'");
        assert_eq!(shell_quoted("it's"), "'it'\\''s'");
    }

    #[test]
    fn a_traceback_starts_at_the_first_user_frame() {
        let text = "parsing\nTraceback (most recent call last):\n  File \"/usr/lib/python3.11/runpy.py\", line 198, in _run_module_as_main\n    return _run_code(code, main_globals, None,\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/v/lib/python3.11/site-packages/debugpy/__main__.py\", line 71, in <module>\n    cli.main()\n  File \"/w/crash.py\", line 13, in <module>\n    main()\n  File \"/w/crash.py\", line 10, in main\n    return parse(\"forty-two\")\nValueError: invalid literal\n";
        expect_test::expect![[r#"
            parsing
            Traceback (most recent call last):
              (2 frames of the debugger hidden)
              File "/w/crash.py", line 13, in <module>
                main()
              File "/w/crash.py", line 10, in main
                return parse("forty-two")
            ValueError: invalid literal
        "#]]
        .assert_eq(&hide_adapter_frames(text));
    }
}
