//! delve (`dlv dap`): started listening on TCP, it prints its address and
//! then the debuggee's output; it builds Go programs itself (into a scratch
//! folder, never the workspace); a headless `dlv` speaks DAP, so attaching
//! connects straight to it; it reports exit codes in a console line.

use super::{Adapter, LaunchInput, LaunchTarget, ProgramLaunch, RequestArguments, StdinRoute};
use crate::args::GoMode;
use crate::catalog::ResolvedAdapter;
use serde_json::json;
use std::path::{Path, PathBuf};

/// delve, Go's debugger.
pub struct Delve;

impl Adapter for Delve {
    fn launch_target(&self, l: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        let go = launch_mode(l.path, l.mode, l.test)
            .map_err(|why| format!("cannot launch `{}` under delve: {why}", l.program))?;
        Ok(LaunchTarget::Program { go: Some(go) })
    }

    /// Written into the adapter's own standard input, which the debuggee
    /// inherits: `dlv dap` speaks DAP on TCP and starts its target with
    /// its own stdin.
    fn stdin_route(&self) -> Option<StdinRoute> {
        Some(StdinRoute::AdapterStdin)
    }

    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        launch(input)
    }

    fn attach_port(&self, _adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        attach(port)
    }

    fn attach_pid(&self, _adapter: &ResolvedAdapter, pid: u32) -> Result<RequestArguments, String> {
        Ok(RequestArguments::plain(attach_pid(pid)))
    }

    fn threads_are_goroutines(&self) -> bool {
        true
    }

    fn goroutine(&self, thread_name: &str) -> Option<GoroutineName> {
        goroutine_name(thread_name)
    }
}

/// How delve launches a program: its `mode`, the `program` it is given
/// and the arguments in front of the model's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoLaunch {
    pub mode: GoMode,
    pub program: PathBuf,
    pub leading_args: Vec<String>,
}

/// The launch of `program` in `mode` (told from the program when not
/// given), running only the test function `test` if named; `Err` says why
/// they do not fit together.
pub fn launch_mode(
    program: &Path,
    mode: Option<GoMode>,
    test: Option<&str>,
) -> Result<GoLaunch, String> {
    let executable = crate::catalog::is_native_executable(program);
    let test_file = program.is_file()
        && program
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("_test.go"));
    let mode = match mode {
        Some(m) => m,
        None if executable => GoMode::Exec,
        None if test_file || test.is_some() => GoMode::Test,
        None => GoMode::Debug,
    };
    match mode {
        GoMode::Exec if !executable => {
            return Err("mode exec runs a compiled Go program, and this is not one; use mode debug for a package or .go file".into())
        }
        GoMode::Debug | GoMode::Test if executable => {
            return Err("this is a compiled program: delve can only run it (mode exec); build and test modes need the package's sources".into())
        }
        _ => {}
    }
    if test.is_some() && mode != GoMode::Test {
        return Err("`test` names a Go test function, which runs in mode test; leave `mode` out or make it test".into());
    }
    let program = if mode == GoMode::Test && program.is_file() {
        // Tests are built per package: the folder of the _test.go file.
        program.parent().unwrap_or(program).to_path_buf()
    } else {
        program.to_path_buf()
    };
    let leading_args = match test {
        Some(name) => {
            let name = name.trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '/')
            {
                return Err(format!("`test` is `{name}`, not a Go test function name (like TestMean, or TestMean/subtest)"));
            }
            vec!["-test.run".to_string(), format!("^{name}$")]
        }
        None => Vec::new(),
    };
    Ok(GoLaunch {
        mode,
        program,
        leading_args,
    })
}

fn launch(input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
    let go = match &input.go {
        Some(go) => go.clone(),
        None => launch_mode(input.program, None, None)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
    };
    let mode = match go.mode {
        GoMode::Debug => "debug",
        GoMode::Exec => "exec",
        GoMode::Test => "test",
    };
    let mut args = go.leading_args.clone();
    args.extend(input.args.iter().cloned());
    // The build goes to a scratch folder, not into the workspace.
    let dir = super::scratch_dir()?;
    let out = dir.join("__debug_bin");
    Ok(RequestArguments {
        arguments: json!({
            "request": "launch",
            "mode": mode,
            "program": go.program,
            "args": args,
            "cwd": input.cwd,
            "env": input.env,
            "output": out,
            "stopOnEntry": false,
        }),
        scratch_dir: Some(dir),
        connect_to: None,
    })
}

fn attach(port: u16) -> RequestArguments {
    // A headless dlv speaks DAP itself: connect straight to it.
    RequestArguments {
        arguments: json!({"request": "attach", "mode": "remote"}),
        scratch_dir: None,
        connect_to: Some(port),
    }
}

/// Attach to a running Go process by its id (`dlv dap` in local attach mode).
fn attach_pid(pid: u32) -> serde_json::Value {
    json!({"request": "attach", "mode": "local", "processId": pid})
}

/// A goroutine as delve lists it as a DAP thread:
/// `* [Go 1] main.main (Thread 24430)` (the `*` marks the selected one; an
/// OS thread is named only for a goroutine running on one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoroutineName {
    pub id: u64,
    /// The function delve says it is in (its current location).
    pub function: String,
    pub os_thread: Option<u64>,
}

/// Read delve's name of a goroutine thread; `None` for any other name.
pub fn goroutine_name(name: &str) -> Option<GoroutineName> {
    let rest = name.trim().trim_start_matches("* ");
    let rest = rest.strip_prefix("[Go ")?;
    let (id, rest) = rest.split_once(']')?;
    let rest = rest.trim();
    let (function, os_thread) = match rest.rsplit_once(" (Thread ") {
        Some((f, t)) => (f, t.strip_suffix(')')?.parse().ok()),
        None => (rest, None),
    };
    Some(GoroutineName {
        id: id.parse().ok()?,
        function: function.to_string(),
        os_thread,
    })
}

/// Exit status from delve's console line `Process 123 has exited with status 3`.
pub fn exit_status_line(text: &str) -> Option<i64> {
    let at = text.find("has exited with status ")?;
    text[at + "has exited with status ".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_told_from_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let test_file = dir.path().join("main_test.go");
        std::fs::write(&test_file, "package main\n").unwrap();
        let go = launch_mode(&test_file, None, Some("TestMean")).unwrap();
        assert_eq!(
            (go.mode, go.program.as_path(), go.leading_args),
            (
                GoMode::Test,
                dir.path(),
                vec!["-test.run".to_string(), "^TestMean$".to_string()]
            )
        );
        assert_eq!(
            launch_mode(dir.path(), None, None).unwrap().mode,
            GoMode::Debug
        );
        expect_test::expect!["mode exec runs a compiled Go program, and this is not one; use mode debug for a package or .go file"]
            .assert_eq(&launch_mode(dir.path(), Some(GoMode::Exec), None).unwrap_err());
        expect_test::expect!["`test` names a Go test function, which runs in mode test; leave `mode` out or make it test"]
            .assert_eq(&launch_mode(dir.path(), Some(GoMode::Debug), Some("TestMean")).unwrap_err());
        expect_test::expect!["`test` is `Test Mean`, not a Go test function name (like TestMean, or TestMean/subtest)"]
            .assert_eq(&launch_mode(dir.path(), None, Some("Test Mean")).unwrap_err());
    }

    #[test]
    fn goroutine_thread_names_are_read() {
        assert_eq!(
            goroutine_name("* [Go 1] main.main (Thread 24430)"),
            Some(GoroutineName {
                id: 1,
                function: "main.main".into(),
                os_thread: Some(24430)
            })
        );
        assert_eq!(
            goroutine_name("[Go 17] runtime.gopark"),
            Some(GoroutineName {
                id: 17,
                function: "runtime.gopark".into(),
                os_thread: None
            })
        );
        assert_eq!(goroutine_name("MainThread"), None);
        assert_eq!(goroutine_name("[Go x] f"), None);
    }

    #[test]
    fn exit_lines_are_read() {
        assert_eq!(
            exit_status_line("Process 15737 has exited with status 3\n"),
            Some(3)
        );
        assert_eq!(exit_status_line("Detaching\n"), None);
    }
}
