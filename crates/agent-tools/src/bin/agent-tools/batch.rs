//! `batch`: one run, many calls read as lines; their results printed as
//! they end, then the vibe workers still running waited for
//! ([`crate::workers_at_end`]).

use crate::render;
use crate::run::{bind, BoundRun, OK, TOOL_ERROR, USAGE};
use crate::stop::StopSignals;
use crate::RunArgs;
use serde::Deserialize;
use serde_json::Value;
use std::io::{BufRead, Write};
use tool_core::{CallContext, ToolError};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchCall {
    tool: String,
    #[serde(default)]
    args: Value,
}

pub(crate) async fn batch(file: String, run: RunArgs, text: bool) -> u8 {
    let mut signals = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("agent-tools batch: cannot listen for signals: {e}");
            return USAGE;
        }
    };
    let bound = match bind("batch", &run) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agent-tools batch: {e}");
            return USAGE;
        }
    };
    let code = tokio::select! {
        code = batch_calls(file, &bound, text) => code,
        (number, name) = signals.recv() => {
            eprintln!("agent-tools batch: {name}: stopping every call and child process");
            128 + number as u8
        }
    };
    // The calls in flight were dropped above; dropping the toolset kills
    // every child process of the run with its whole tree.
    drop(bound);
    code
}

async fn batch_calls(file: String, bound: &BoundRun, text: bool) -> u8 {
    let reader: Box<dyn BufRead + Send> = if file == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&file) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("agent-tools batch: cannot open {file}: {e}");
                return USAGE;
            }
        }
    };
    // Lines are read on a blocking thread so a slow writer never stalls the
    // runtime that the tools' child processes run on.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(16);
    std::thread::spawn(move || {
        for line in reader.lines() {
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let mut failures = 0usize;
    let mut successes = 0usize;
    let mut stdout = std::io::stdout();
    let mut reader_gone = false;
    while let Some(line) = rx.recv().await {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("agent-tools batch: reading input failed: {e}");
                return USAGE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let call = serde_json::from_str::<BatchCall>(&line);
        let result = match &call {
            Ok(c) => {
                bound
                    .toolset
                    .registry()
                    .call(bound.surface, &c.tool, c.args.clone(), CallContext::new())
                    .await
            }
            Err(e) => Err(ToolError::bad_args(format!(
                "each line must be {{\"tool\": NAME, \"args\": {{…}}}}: {e}"
            ))),
        };
        if result.is_err() {
            failures += 1;
        } else {
            successes += 1;
        }
        let shown = if text {
            let heading = match &call {
                Ok(c) if c.args.is_null() => c.tool.clone(),
                Ok(c) => format!("{} {}", c.tool, c.args),
                Err(_) => line.clone(),
            };
            let body = match &result {
                Ok(out) => render::text(out, &bound.images_dir),
                Err(e) => format!("error: {e}"),
            };
            let gap = if failures + successes > 1 { "\n" } else { "" };
            format!("{gap}{heading}\n{}", body.trim_end_matches('\n'))
        } else {
            render::json_result(&result, &bound.images_dir).to_string()
        };
        if !write_line(&mut stdout, &shown) {
            reader_gone = true;
            break;
        }
    }
    let mut printed = failures + successes;
    let mut emit = |end: crate::workers_at_end::EndCall| {
        printed += 1;
        let shown = if text {
            let body = match &end.result {
                Ok(out) => render::text(out, &bound.images_dir),
                Err(e) => format!("error: {e}"),
            };
            let gap = if printed > 1 { "\n" } else { "" };
            format!("{gap}{}\n{}", end.heading, body.trim_end_matches('\n'))
        } else {
            let mut v = render::json_result(&end.result, &bound.images_dir);
            v["after_input"] = serde_json::json!({"tool": end.tool, "args": end.args});
            v.to_string()
        };
        write_line(&mut stdout, &shown)
    };
    let killed = if reader_gone {
        Vec::new()
    } else {
        crate::workers_at_end::wait_for_workers(bound, bound.batch_wait, &mut emit)
            .await
            .killed
    };
    if failures > 0 || !killed.is_empty() {
        TOOL_ERROR
    } else {
        OK
    }
}

/// Write one result; false when nobody reads them any more (`batch | head
/// -1`): the caller stops quietly rather than run calls whose results are
/// lost.
fn write_line(stdout: &mut std::io::Stdout, shown: &str) -> bool {
    match writeln!(stdout, "{shown}").and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("agent-tools batch: cannot write to stdout: {e}");
            }
            false
        }
    }
}
