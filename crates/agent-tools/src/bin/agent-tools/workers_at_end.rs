//! What `batch` does when its input ends while vibe workers are still
//! running or queued: it waits for them, bounded by `[vibe]
//! batch_wait_seconds`, printing each one's end as the result of a
//! `vibe_wait`, and kills those still unfinished at the bound, printing the
//! `vibe_kill` results and saying so on stderr. Ending the process would
//! kill them anyway, silently; this way their results are not lost.
//!
//! It works through the vibe tools themselves, so it knows nothing of the
//! roster's types, and does nothing when the vibe tools are not registered.

use crate::run::BoundRun;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;
use tool_core::{CallContext, ToolError, ToolOutput};

/// vibe_wait's own maximum per call.
const WAIT_STEP: u64 = 600;

/// One call batch makes after the input ended, for the printer.
pub(crate) struct EndCall {
    pub tool: &'static str,
    pub args: Value,
    /// A transcript heading: `after the input ended: vibe_wait w1`.
    pub heading: String,
    pub result: Result<ToolOutput, ToolError>,
}

/// How waiting for the workers ended.
#[derive(Debug, Default)]
pub(crate) struct EndOfWorkers {
    /// Workers killed at the bound, by id.
    pub killed: Vec<String>,
}

async fn call(bound: &BoundRun, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    bound
        .toolset
        .registry()
        .call(bound.surface, tool, args, CallContext::new())
        .await
}

fn state_of(result: &Result<ToolOutput, ToolError>) -> Option<String> {
    let out = result.as_ref().ok()?;
    Some(out.structured.as_ref()?["state"].as_str()?.to_string())
}

fn unfinished(state: &str) -> bool {
    matches!(state, "running" | "queued")
}

/// Wait up to `limit` for every worker still running or queued, then kill
/// the rest. `emit` prints each call's result; it returns false when nobody
/// reads the output any more, and then nothing more is waited for (the
/// workers die with the process).
pub(crate) async fn wait_for_workers(
    bound: &BoundRun,
    limit: Duration,
    emit: &mut dyn FnMut(EndCall) -> bool,
) -> EndOfWorkers {
    let mut end = EndOfWorkers::default();
    if !bound.toolset.registry().contains("vibe_list") {
        return end;
    }
    let Ok(list) = call(bound, "vibe_list", json!({})).await else {
        return end;
    };
    let pending: Vec<(String, String)> = list
        .structured
        .as_ref()
        .and_then(|s| s["workers"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|w| {
            let (id, state) = (w["id"].as_str()?, w["state"].as_str()?);
            unfinished(state).then(|| (id.to_string(), state.to_string()))
        })
        .collect();
    if pending.is_empty() {
        return end;
    }
    let named: Vec<String> = pending.iter().map(|(id, s)| format!("{id} {s}")).collect();
    eprintln!(
        "agent-tools batch: the input ended with {} not finished ({}); waiting up to {} s for \
         them ([vibe] batch_wait_seconds), then killing what still runs",
        tool_core::format::plural(pending.len(), "worker", "workers"),
        named.join(", "),
        limit.as_secs()
    );
    let deadline = Instant::now() + limit;
    let mut left = Vec::new();
    for (id, _) in pending {
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let secs = (remaining.as_secs_f64().ceil() as u64).min(WAIT_STEP);
            let args = json!({"worker_id": id, "timeout_seconds": secs});
            let result = call(bound, "vibe_wait", args.clone()).await;
            let still = state_of(&result).is_some_and(|s| unfinished(&s));
            if still && Instant::now() < deadline {
                continue;
            }
            if still {
                left.push(id.clone());
            } else if !emit(EndCall {
                tool: "vibe_wait",
                args,
                heading: format!("after the input ended: vibe_wait {id}"),
                result,
            }) {
                return end;
            }
            break;
        }
    }
    for id in left {
        let args = json!({"worker_id": id});
        let result = call(bound, "vibe_kill", args.clone()).await;
        end.killed.push(id.clone());
        let shown = emit(EndCall {
            tool: "vibe_kill",
            args,
            heading: format!(
                "after the input ended: vibe_kill {id} (not finished after {} s)",
                limit.as_secs()
            ),
            result,
        });
        if !shown {
            break;
        }
    }
    if !end.killed.is_empty() {
        eprintln!(
            "agent-tools batch: killed {} still unfinished after waiting {} s: {}",
            tool_core::format::plural(end.killed.len(), "worker", "workers"),
            limit.as_secs(),
            end.killed.join(", ")
        );
    }
    end
}
