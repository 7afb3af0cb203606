//! Debug adapters from config, through the binary: `[[debug.adapters]]`
//! entries and `[debug] disable` in the user's config file, the harness's
//! `--config` and the project's `.agent-tools.toml` (whose new commands run
//! only with `--trust-workspace`), against the real debugpy adapter of the
//! fixtures venv declared as an entry of its own.
#![cfg(all(feature = "debug", feature = "cli"))]

use expect_test::{expect, Expect};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A Python project (the fixture's `avg.py`, a marker) and an empty
/// config home, so the user's own config file is not read.
struct Project {
    root: tempfile::TempDir,
    config_home: tempfile::TempDir,
}

fn project() -> Project {
    let root = tempfile::Builder::new()
        .prefix("debug-config-")
        .tempdir()
        .unwrap();
    let fixture = test_support::project::fixture("debug", "python");
    for f in ["avg.py", "requirements.txt"] {
        std::fs::copy(fixture.join(f), root.path().join(f)).unwrap();
    }
    Project {
        root,
        config_home: tempfile::tempdir().unwrap(),
    }
}

/// The fixtures venv's interpreter, which imports debugpy (`None`: not
/// installed, outside CI).
fn venv_python() -> Option<PathBuf> {
    let debugpy = test_support::fixtures::require(&["debugpy"])?;
    Some(debugpy.with_file_name("python"))
}

/// An adapter entry: the real debugpy adapter started by `command`.
fn entry(id: &str, command: &[String], extensions: &str) -> String {
    format!(
        "[[debug.adapters]]\nid = \"{id}\"\nkind = \"custom\"\ncommands = [{command:?}]\n\
         markers = [\"requirements.txt\"]\nextensions = [{extensions}]\nconnect = \"stdio\"\n\
         evaluate_context = \"repl\"\nlaunch_template = {{ console = \"internalConsole\", redirectOutput = true }}\n"
    )
}

fn python_adapter(python: &Path) -> Vec<String> {
    vec![
        python.to_string_lossy().into_owned(),
        "-m".into(),
        "debugpy.adapter".into(),
    ]
}

/// A command line that leaves `marker` behind, then runs the real debugpy
/// adapter: whether it was started is a file's existence.
fn touching_then_debugpy(marker: &Path, python: &Path) -> Vec<String> {
    vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        format!(
            "touch {} && exec {} -m debugpy.adapter",
            marker.display(),
            python.display()
        ),
    ]
}

/// Only debugpy stays built in: the other adapters' lines depend on what
/// the machine has installed.
const DISABLE_OTHERS: &str =
    "[debug]\ndisable = [\"lldb\", \"delve\", \"dart\", \"node\", \"java\"]\n";

impl Project {
    /// `agent-tools SUBCOMMAND --root ROOT`, with the fixtures on PATH.
    fn bin(&self, subcommand: &str) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
        c.arg(subcommand)
            .arg("--root")
            .arg(self.root.path())
            .env("PATH", test_support::fixtures::path_env())
            .env("XDG_CONFIG_HOME", self.config_home.path())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG");
        c
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn user_config(&self, text: &str) {
        self.write(
            &self.config_home.path().join("agent-tools/config.toml"),
            text,
        );
    }

    /// `text` with the root and the fixtures folder named, not spelled.
    fn shown(&self, text: &str) -> String {
        text.replace(&self.root.path().to_string_lossy().into_owned(), "<root>")
            .replace(
                &test_support::fixtures::dir().to_string_lossy().into_owned(),
                "<fixtures>",
            )
    }

    /// `batch --text` over `calls` with `extra` run options: the transcript.
    fn batch(&self, extra: &[&str], calls: &[Value]) -> String {
        let out = test_support::cli::batch(self.bin("batch").arg("--text").args(extra), calls);
        self.shown(&format!("{}{}", out.stdout, out.stderr))
    }

    /// `doctor`'s `debug:` lines.
    fn doctor(&self, extra: &[&str]) -> String {
        let out = self.run("doctor", extra);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout
            .lines()
            .skip_while(|l| *l != "debug:")
            .take_while(|l| !l.is_empty())
            .collect();
        self.shown(&lines.join("\n"))
    }

    fn run(&self, command: &str, extra: &[&str]) -> Output {
        self.bin(command)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

fn debug(args: Value) -> Value {
    json!({"tool": "debug", "args": args})
}

fn check(actual: &str, expected: Expect) {
    expected.assert_eq(actual.trim_end());
}

/// The breakpoint, a launch under `adapter` (or routed), and a look.
fn stop_at_line_9(adapter: Option<&str>) -> Vec<Value> {
    let mut launch = json!({"op": "launch", "program": "avg.py"});
    if let Some(a) = adapter {
        launch["adapter"] = json!(a);
    }
    vec![
        debug(json!({"op": "breakpoints", "file": "avg.py", "lines": [9]})),
        debug(launch),
        debug(json!({"op": "evaluate", "expression": "total"})),
    ]
}

#[test]
fn a_harness_config_adds_an_adapter_that_debug_uses_and_lists() {
    let Some(python) = venv_python() else {
        return;
    };
    let p = project();
    let harness = p.root.path().join("harness.toml");
    p.write(
        &harness,
        &format!(
            "{DISABLE_OTHERS}{}",
            entry("pydbg", &python_adapter(&python), "\"py\"")
        ),
    );
    let config = ["--config", harness.to_str().unwrap()];
    check(
        &p.doctor(&config),
        expect![[r#"
            debug:
              debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
              pydbg    usable: `<fixtures>/venv/bin/python -m debugpy.adapter` (marker requirements.txt)"#]],
    );
    let mut calls = vec![debug(json!({"op": "adapters"}))];
    calls.extend(stop_at_line_9(Some("pydbg")));
    check(
        &p.batch(&config, &calls),
        expect![[r#"
            debug {"op":"adapters"}
            debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)
            debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
              exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
            pydbg    usable: `<fixtures>/venv/bin/python -m debugpy.adapter` (marker requirements.txt)
            choose exception filters with exception_breakpoints (before or after launch)

            debug {"file":"avg.py","lines":[9],"op":"breakpoints"}
            debug breakpoints  avg.py
            avg.py:9 set  | return total / len(xs)
            no session yet: they are sent to the adapter at launch

            debug {"adapter":"pydbg","op":"launch","program":"avg.py"}
            debug launch  avg.py under pydbg (`<fixtures>/venv/bin/python -m debugpy.adapter`)
            breakpoint avg.py:9 verified  | return total / len(xs)
            stopped (breakpoint) thread 1 in mean at avg.py:9
                9 |     return total / len(xs)
            locals: i = 5, total = 104, xs = [4, 8, 15, 16, 23, 42]

            debug {"expression":"total","op":"evaluate"}
            debug evaluate  `total` in top frame, mean at avg.py:9
            104 (int)"#]],
    );
}

#[test]
fn a_user_config_replaces_a_built_in_by_id_and_disables_others() {
    let Some(python) = venv_python() else {
        return;
    };
    let p = project();
    // `debugpy` itself, started by another command line: a launch routed
    // by the `.py` extension reaches it.
    let used = p.root.path().join("started-by-user-config");
    let command = touching_then_debugpy(&used, &python);
    p.user_config(&format!(
        "{DISABLE_OTHERS}{}",
        entry("debugpy", &command, "\"py\"")
    ));
    let mut calls = vec![debug(json!({"op": "adapters"}))];
    calls.extend(stop_at_line_9(None));
    check(
        &p.batch(&[], &calls),
        expect![[r#"
        debug {"op":"adapters"}
        debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)
        debugpy  usable: `/bin/sh -c touch started-by-user-config && exec <fixtures>/venv/bin/python -m debugpy.adapter` (marker requirements.txt)
        choose exception filters with exception_breakpoints (before or after launch)

        debug {"file":"avg.py","lines":[9],"op":"breakpoints"}
        debug breakpoints  avg.py
        avg.py:9 set  | return total / len(xs)
        no session yet: they are sent to the adapter at launch

        debug {"op":"launch","program":"avg.py"}
        debug launch  avg.py under debugpy (`/bin/sh -c touch <root>/started-by-user-config && exec <fixtures>/venv/bin/python -m debugpy.adapter`)
        breakpoint avg.py:9 verified  | return total / len(xs)
        stopped (breakpoint) thread 1 in mean at avg.py:9
            9 |     return total / len(xs)
        locals: i = 5, total = 104, xs = [4, 8, 15, 16, 23, 42]

        debug {"expression":"total","op":"evaluate"}
        debug evaluate  `total` in top frame, mean at avg.py:9
        104 (int)"#]],
    );
    assert!(used.exists(), "the user's debugpy entry did not start");

    // A disabled adapter is named as such, not as unknown.
    let out = p.batch(
        &[],
        &[debug(
            json!({"op": "launch", "program": "avg.py", "adapter": "delve"}),
        )],
    );
    check(
        &out,
        expect![[r#"
        debug {"adapter":"delve","op":"launch","program":"avg.py"}
        error: refused: adapter `delve` is disabled by config ([debug] disable); known: debugpy"#]],
    );
}

/// A checkout whose `.agent-tools.toml` adds an adapter that leaves a
/// marker file when started (and disables the others, which needs no
/// trust).
fn project_naming_a_command(python: &Path) -> (Project, PathBuf) {
    let p = project();
    let marker = p.root.path().join("started-by-project-config");
    let command = touching_then_debugpy(&marker, python);
    p.write(
        &p.root.path().join(".agent-tools.toml"),
        &format!(
            "surface = \"exec\"\n{DISABLE_OTHERS}{}",
            entry("pyproj", &command, "\"py\"")
        ),
    );
    (p, marker)
}

#[test]
fn a_project_adapter_naming_a_command_runs_only_in_a_trusted_workspace() {
    let Some(python) = venv_python() else {
        return;
    };
    let (p, marker) = project_naming_a_command(&python);
    check(
        &p.doctor(&[]),
        expect![[r#"
        debug:
          debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
          .agent-tools.toml adapter `pyproj` (/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter): not run: project config names a command; trust the workspace to use it (--trust-workspace)"#]],
    );
    let mut calls = vec![
        debug(json!({"op": "adapters"})),
        debug(json!({"op": "status"})),
        debug(json!({"op": "launch", "program": "avg.py", "adapter": "pyproj"})),
    ];
    // Routed by extension to the built-in debugpy, with the notice.
    calls.extend(stop_at_line_9(None));
    check(
        &p.batch(&[], &calls),
        expect![[r#"
            debug {"op":"adapters"}
            debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)
            debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
              exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
            .agent-tools.toml adapter `pyproj` (/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter): not run: project config names a command; trust the workspace to use it (--trust-workspace)
            choose exception filters with exception_breakpoints (before or after launch)

            debug {"op":"status"}
            debug status  no session; 0 breakpoints set
            launch a program to start one
            debugpy: exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
            .agent-tools.toml adapter `pyproj` (/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter): not run: project config names a command; trust the workspace to use it (--trust-workspace)

            debug {"adapter":"pyproj","op":"launch","program":"avg.py"}
            error: refused: .agent-tools.toml adapter `pyproj` (/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter): not run: project config names a command; trust the workspace to use it (--trust-workspace); known: debugpy

            debug {"file":"avg.py","lines":[9],"op":"breakpoints"}
            debug breakpoints  avg.py
            avg.py:9 set  | return total / len(xs)
            no session yet: they are sent to the adapter at launch

            debug {"op":"launch","program":"avg.py"}
            debug launch  avg.py under debugpy (`<fixtures>/venv/bin/python3 -m debugpy.adapter`)
            note: adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
            note: .agent-tools.toml adapter `pyproj` (/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter): not run: project config names a command; trust the workspace to use it (--trust-workspace)
            breakpoint avg.py:9 verified  | return total / len(xs)
            stopped (breakpoint) thread 1 in mean at avg.py:9
                9 |     return total / len(xs)
            locals: i = 5, total = 104, xs = [4, 8, 15, 16, 23, 42]

            debug {"expression":"total","op":"evaluate"}
            debug evaluate  `total` in top frame, mean at avg.py:9
            104 (int)"#]],
    );
    assert!(!marker.exists(), "the untrusted project's command ran");

    let trusted = ["--trust-workspace"];
    check(
        &p.doctor(&trusted),
        expect![[r#"
        debug:
          debugpy  usable: `<fixtures>/venv/bin/python3 -m debugpy.adapter` (marker requirements.txt); adapter and program run with <fixtures>/venv/bin/python3 (python3 on PATH, debugpy 1.8.22)
          pyproj   usable: `/bin/sh -c touch started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter` (marker requirements.txt)"#]],
    );
    check(
        &p.batch(&trusted, &stop_at_line_9(Some("pyproj"))),
        expect![[r#"
            debug {"file":"avg.py","lines":[9],"op":"breakpoints"}
            debug breakpoints  avg.py
            avg.py:9 set  | return total / len(xs)
            no session yet: they are sent to the adapter at launch

            debug {"adapter":"pyproj","op":"launch","program":"avg.py"}
            debug launch  avg.py under pyproj (`/bin/sh -c touch <root>/started-by-project-config && exec <fixtures>/venv/bin/python -m debugpy.adapter`)
            breakpoint avg.py:9 verified  | return total / len(xs)
            stopped (breakpoint) thread 1 in mean at avg.py:9
                9 |     return total / len(xs)
            locals: i = 5, total = 104, xs = [4, 8, 15, 16, 23, 42]

            debug {"expression":"total","op":"evaluate"}
            debug evaluate  `total` in top frame, mean at avg.py:9
            104 (int)"#]],
    );
    assert!(marker.exists(), "the trusted project's command did not run");
}

#[test]
fn a_mistake_in_any_layer_names_its_file_and_key_and_nothing_starts() {
    let p = project();
    let read = ["read", r#"{"path": "avg.py"}"#];
    let call = |extra: &[&str]| {
        let mut args = read.to_vec();
        args.extend(extra);
        let out = p.run("call", &args);
        format!(
            "exit {:?}, stdout {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            p.shown(&String::from_utf8_lossy(&out.stderr))
        )
    };
    // The user's file: an entry missing a field.
    p.user_config(
        "[[debug.adapters]]\nid = \"pydbg\"\nkind = \"custom\"\ncommands = [[\"python3\"]]\n",
    );
    let user_error = call(&[]);
    let home = p.config_home.path().to_string_lossy().into_owned();
    check(
        &user_error.replace(&home, "<config home>"),
        expect![[r#"
        exit Some(2), stdout ""
        agent-tools call: config <config home>/agent-tools/config.toml: [debug] adapters[0]: missing field `markers`"#]],
    );
    std::fs::remove_file(p.config_home.path().join("agent-tools/config.toml")).unwrap();

    // The project's file: an unknown key in an entry.
    p.write(
        &p.root.path().join(".agent-tools.toml"),
        "[[debug.adapters]]\nid = \"pydbg\"\nkind = \"custom\"\ncomands = [[\"python3\"]]\n",
    );
    check(
        &call(&[]),
        expect![[r#"
        exit Some(2), stdout ""
        agent-tools call: project config .agent-tools.toml: [debug] adapters[0].comands: unknown field `comands`, expected one of `id`, `kind`, `commands`, `markers`, `extensions`, `connect`, `launch_template`, `evaluate_context`, `exception_filters`"#]],
    );
    std::fs::remove_file(p.root.path().join(".agent-tools.toml")).unwrap();

    // The harness's: a custom entry with no command line.
    let harness = p.root.path().join("harness.toml");
    p.write(
        &harness,
        "[[debug.adapters]]\nid = \"pydbg\"\nkind = \"custom\"\ncommands = []\nmarkers = [\"requirements.txt\"]\n\
         extensions = [\"py\"]\nconnect = \"stdio\"\nevaluate_context = \"repl\"\n",
    );
    check(
        &call(&["--config", harness.to_str().unwrap()]),
        expect![[r#"
            exit Some(2), stdout ""
            agent-tools call: config <root>/harness.toml: [debug] adapters[0].commands (id "pydbg"): names no command line; give at least one, e.g. [["my-adapter", "--stdio"]]"#]],
    );
}
