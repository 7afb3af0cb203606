//! delve (`dlv dap`): started listening on TCP, it prints its address and
//! then the debuggee's output; it builds Go programs itself (into a scratch
//! folder, never the workspace); a headless `dlv` speaks DAP, so attaching
//! connects straight to it; it reports exit codes in a console line.

use super::{LaunchInput, RequestArguments};
use serde_json::json;

pub(super) fn launch(input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
    let mode = if crate::catalog::is_native_executable(input.program) {
        "exec"
    } else {
        "debug"
    };
    // The build goes to a scratch folder, not into the workspace.
    let dir = super::scratch_dir()?;
    let out = dir.join("__debug_bin");
    Ok(RequestArguments {
        arguments: json!({
            "request": "launch",
            "mode": mode,
            "program": input.program,
            "args": input.args,
            "cwd": input.cwd,
            "env": input.env,
            "output": out,
            "stopOnEntry": false,
        }),
        scratch_dir: Some(dir),
        connect_to: None,
    })
}

pub(super) fn attach(port: u16) -> RequestArguments {
    // A headless dlv speaks DAP itself: connect straight to it.
    RequestArguments {
        arguments: json!({"request": "attach", "mode": "remote"}),
        scratch_dir: None,
        connect_to: Some(port),
    }
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
    fn exit_lines_are_read() {
        assert_eq!(
            exit_status_line("Process 15737 has exited with status 3\n"),
            Some(3)
        );
        assert_eq!(exit_status_line("Detaching\n"), None);
    }
}
