//! The five tools. Each holds a weak reference to its roster: the tools in
//! the Registry never keep a finished run's workers alive.

use crate::format;
use crate::roster::RosterInner;
use crate::{WorkerSnapshot, WorkerState, WorkerTier};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tool_core::tool::paragraph;
use tool_core::{
    parse_args, schema_for, CallContext, Tier, Tool, ToolDecl, ToolError, ToolOutput, ToolSpec,
};

/// `vibe_spawn` starts a worker, an external agent process.
pub(crate) const VIBE_SPAWN: ToolDecl =
    ToolDecl::new("vibe_spawn", Tier::Read).hints(false, false, true);
/// `vibe_send` instructs a worker, an external agent process.
pub(crate) const VIBE_SEND: ToolDecl =
    ToolDecl::new("vibe_send", Tier::Read).hints(false, false, true);
pub(crate) const VIBE_WAIT: ToolDecl = ToolDecl::new("vibe_wait", Tier::Read);
pub(crate) const VIBE_KILL: ToolDecl = ToolDecl::new("vibe_kill", Tier::Read);
pub(crate) const VIBE_LIST: ToolDecl = ToolDecl::new("vibe_list", Tier::Read);

/// The five tools, in the order they are registered.
pub const TOOLS: [ToolDecl; 5] = [VIBE_SPAWN, VIBE_SEND, VIBE_WAIT, VIBE_KILL, VIBE_LIST];

/// The names of the five tools, in the order they are registered.
pub const TOOL_NAMES: [&str; 5] = [
    VIBE_SPAWN.name,
    VIBE_SEND.name,
    VIBE_WAIT.name,
    VIBE_KILL.name,
    VIBE_LIST.name,
];

const DEFAULT_WAIT: u64 = 60;
const MAX_WAIT: u64 = 600;

/// Arguments of `vibe_spawn`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    /// The whole task for the worker: what to do, where, and what "done" means.
    pub brief: String,
    /// A short name for the worker in lists.
    pub label: String,
    /// `fast` (default: mechanical work with a clear spec) or `good` (design,
    /// judgement, reviewing a fast worker's output).
    #[serde(default)]
    pub tier: Option<WorkerTier>,
}

/// Arguments of `vibe_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// The worker's id, like `w1`.
    pub worker_id: String,
    /// What to add to its brief; the worker re-runs with it.
    pub message: String,
}

/// Arguments of `vibe_wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// The worker's id, like `w1`.
    pub worker_id: String,
    /// How long to wait for it to settle: default 60, at most 600.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// Arguments of `vibe_kill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// The worker's id, like `w1`.
    pub worker_id: String,
}

/// `vibe_list` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

#[derive(Clone, Copy)]
enum Op {
    Spawn,
    Send,
    Wait,
    Kill,
    List,
}

struct VibeTool {
    op: Op,
    roster: Weak<RosterInner>,
}

pub(crate) fn all(roster: Weak<RosterInner>) -> Vec<Arc<dyn Tool>> {
    [Op::Spawn, Op::Send, Op::Wait, Op::Kill, Op::List]
        .into_iter()
        .map(|op| {
            Arc::new(VibeTool {
                op,
                roster: roster.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

fn nonempty(field: &str, value: &str, what: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        Err(ToolError::bad_args(format!("`{field}` is empty; {what}")))
    } else {
        Ok(())
    }
}

fn structured(w: &WorkerSnapshot) -> Value {
    serde_json::to_value(w).unwrap_or(Value::Null)
}

#[async_trait]
impl Tool for VibeTool {
    fn spec(&self) -> ToolSpec {
        let (decl, description, schema) = match self.op {
            Op::Spawn => (
                VIBE_SPAWN,
                paragraph(include_str!("../descriptions/vibe_spawn.md")),
                schema_for::<SpawnArgs>(),
            ),
            Op::Send => (
                VIBE_SEND,
                paragraph(include_str!("../descriptions/vibe_send.md")),
                schema_for::<SendArgs>(),
            ),
            Op::Wait => (
                VIBE_WAIT,
                paragraph(include_str!("../descriptions/vibe_wait.md")),
                schema_for::<WaitArgs>(),
            ),
            Op::Kill => (
                VIBE_KILL,
                "Stop a worker and every process it started; a queued worker is taken out of \
                 the queue and never starts."
                    .to_string(),
                schema_for::<KillArgs>(),
            ),
            Op::List => (
                VIBE_LIST,
                paragraph(include_str!("../descriptions/vibe_list.md")),
                schema_for::<ListArgs>(),
            ),
        };
        decl.spec(description, schema)
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let roster = self.roster.upgrade().ok_or_else(|| {
            ToolError::unavailable("this run's vibe roster has ended; there are no workers")
        })?;
        roster.check_on()?;
        match self.op {
            Op::Spawn => spawn(&roster, parse_args(args)?).await,
            Op::Send => send(&roster, parse_args(args)?).await,
            Op::Wait => wait(&roster, cx, parse_args(args)?).await,
            Op::Kill => kill(&roster, parse_args(args)?).await,
            Op::List => {
                let _: ListArgs = parse_args(args)?;
                let workers = roster.snapshots();
                let o = roster.occupancy();
                Ok(
                    ToolOutput::text(format::list(&workers, o)).with_structured(json!({
                        "running": o.running,
                        "queued": o.queued,
                        "max_workers": o.max_workers,
                        "workers": workers.iter().map(structured).collect::<Vec<_>>()
                    })),
                )
            }
        }
    }
}

async fn spawn(roster: &Arc<RosterInner>, args: SpawnArgs) -> Result<ToolOutput, ToolError> {
    // Depth 1: a worker's process (and anything it starts) carries the
    // marker, so whatever path leads here from inside a worker is refused.
    if let Some(worker) = std::env::var_os(crate::WORKER_MARKER) {
        return Err(ToolError::refused(format!(
            "this process runs inside vibe worker {} (${} is set): workers cannot start workers; \
             do the work yourself, or report back and let the director spawn another",
            worker.to_string_lossy(),
            crate::WORKER_MARKER
        )));
    }
    nonempty("brief", &args.brief, "write the task the worker should do")?;
    nonempty("label", &args.label, "give the worker a short name")?;
    let tiers = roster.tiers();
    let tier = match args.tier {
        Some(t) => t,
        // fast is the default; a run with only a good command uses that.
        None if tiers.contains(&WorkerTier::Fast) || tiers.is_empty() => WorkerTier::Fast,
        None => tiers[0],
    };
    if !tiers.contains(&tier) {
        let have: Vec<&str> = tiers.iter().map(|t| t.as_str()).collect();
        return Err(ToolError::unavailable(format!(
            "no `{tier}` worker command is configured in this run (configured: {}); use tier {} \
             or ask the operator to start with --vibe-{tier}",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            },
            have.first().copied().unwrap_or("fast"),
        )));
    }
    let _control = roster.control().await;
    roster.check_on()?;
    let w = roster.spawn(
        args.label.trim().to_string(),
        tier,
        args.brief.trim().to_string(),
    );
    let text = if w.state == WorkerState::Queued {
        format!(
            "spawned {}; queued (#{} in line; {}): it starts when a running worker ends — \
             vibe_wait {} waits through the queue for its result",
            format::who(&w),
            w.queue_position.unwrap_or(1),
            format::occupancy(roster.occupancy()),
            w.id
        )
    } else {
        format!(
            "spawned {}; it runs in the background — vibe_wait {} for its result, vibe_send to \
             steer it",
            format::who(&w),
            w.id
        )
    };
    Ok(ToolOutput::text(text).with_structured(structured(&w)))
}

async fn send(roster: &Arc<RosterInner>, args: SendArgs) -> Result<ToolOutput, ToolError> {
    nonempty(
        "message",
        &args.message,
        "write what the worker should add to its brief",
    )?;
    let _control = roster.control().await;
    let id = roster.resolve(&args.worker_id)?;
    if let Some(w) = roster.append_if_queued(id, &args.message) {
        return Ok(ToolOutput::text(format!(
            "{} is queued (#{} in line): appended the message to its brief; it runs with it when \
             it starts (vibe_wait {} for its result)",
            w.id,
            w.queue_position.unwrap_or(1),
            w.id
        ))
        .with_structured(json!({
            "stopped_running_run": false,
            "worker": structured(&w),
        })));
    }
    // A run replaced by a longer brief is not news: this answer tells it.
    let stopped = roster.stop(id, WorkerState::Killed, false).await;
    let before = stopped.snapshot;
    let w = roster.rerun(id, &args.message);
    let text = if w.state == WorkerState::Queued {
        format!(
            "{} was {}: its new run (run {}) is queued (#{} in line; {}); vibe_wait {} waits \
             through the queue",
            w.id,
            if stopped.was_running {
                "still running: stopped its current run, and".to_string()
            } else {
                before.state.to_string()
            },
            w.runs,
            w.queue_position.unwrap_or(1),
            format::occupancy(roster.occupancy()),
            w.id
        )
    } else if stopped.was_running {
        format!(
            "{} was still running: stopped its current run (run {}, after {}) and re-ran it \
             with the message appended (run {}); vibe_wait {} for the new result",
            w.id,
            before.runs,
            format::elapsed(before.elapsed),
            w.runs,
            w.id
        )
    } else {
        format!(
            "{} was {}: re-running it with the message appended (run {}); vibe_wait {} for the \
             new result",
            w.id, before.state, w.runs, w.id
        )
    };
    Ok(ToolOutput::text(text).with_structured(json!({
        "stopped_running_run": stopped.was_running,
        "worker": structured(&w),
    })))
}

async fn wait(
    roster: &Arc<RosterInner>,
    cx: &CallContext,
    args: WaitArgs,
) -> Result<ToolOutput, ToolError> {
    let secs = args.timeout_seconds.unwrap_or(DEFAULT_WAIT);
    if secs > MAX_WAIT {
        return Err(ToolError::bad_args(format!(
            "`timeout_seconds` is {secs}, more than the maximum {MAX_WAIT}; wait in steps of at \
             most {MAX_WAIT} s"
        )));
    }
    let id = roster.resolve(&args.worker_id)?;
    let timeout = Duration::from_secs(secs);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut changes = roster.watch(id);
    loop {
        let w = roster.snapshot_of(id);
        if w.state.is_settled() {
            // This answer is the news its notice would carry.
            roster.withdraw(&w);
            return Ok(ToolOutput::text(format::settled(&w)).with_structured(structured(&w)));
        }
        let woke = tokio::select! {
            r = tokio::time::timeout_at(deadline, changes.changed()) => r,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::Cancelled(format!("stopped waiting; {} is still running", w.id)));
            }
        };
        match woke {
            Ok(Ok(())) => continue,
            // The worker's record is gone (its roster ended).
            Ok(Err(_)) => {
                return Err(ToolError::unavailable(format!(
                    "{} ended with its roster",
                    w.id
                )))
            }
            Err(_) => {
                let w = roster.snapshot_of(id);
                if w.state.is_settled() {
                    continue;
                }
                return Ok(
                    ToolOutput::text(unsettled(roster, &w, secs)).with_structured(structured(&w))
                );
            }
        }
    }
}

/// A worker still queued or running when a wait ran out: where it stands,
/// and a running one's processes.
fn unsettled(roster: &RosterInner, w: &WorkerSnapshot, secs: u64) -> String {
    if w.state == WorkerState::Queued {
        return format!(
            "{} still queued after waiting {secs} s (#{} in line; {}); vibe_wait again, or \
             vibe_kill it to take it out of the queue",
            format::who(w),
            w.queue_position.unwrap_or(1),
            format::occupancy(roster.occupancy())
        );
    }
    let mut text = format!(
        "{} still running after waiting {secs} s (this run has run {}); vibe_wait again, \
         vibe_send to steer it, or vibe_kill it",
        format::who(w),
        format::elapsed(w.elapsed)
    );
    if !w.processes.is_empty() {
        text.push_str(&format!(
            "\nits processes:\n{}",
            format::processes(w, "  ").trim_end()
        ));
    }
    text
}

async fn kill(roster: &Arc<RosterInner>, args: KillArgs) -> Result<ToolOutput, ToolError> {
    let _control = roster.control().await;
    let id = roster.resolve(&args.worker_id)?;
    let stopped = roster.stop(id, WorkerState::Killed, true).await;
    // Its slot is free.
    roster.start_queued();
    let w = &stopped.snapshot;
    // Announced (an MCP client's log shows it); this answer tells the model.
    roster.withdraw(w);
    let text = if let Some(place) = stopped.was_queued {
        format!(
            "killed {} while it was queued (#{place} in line): taken out of the queue, it never \
             started",
            format::who(w)
        )
    } else if stopped.was_running {
        let mut text = format!(
            "killed {} after {}",
            format::who(w),
            format::elapsed(w.elapsed)
        );
        if let Some(n) = stopped.killed {
            text.push_str(&format!(
                ": {n} process{} stopped (the worker command and every process it started)",
                if n == 1 { "" } else { "es" }
            ));
        }
        if !stopped.survivors.is_empty() {
            text.push_str(&format!(
                "; still running despite the kill: {:?}",
                stopped.survivors
            ));
        }
        text
    } else {
        format!("{} was already {}; nothing to stop", w.id, w.state)
    };
    Ok(ToolOutput::text(text).with_structured(json!({
        "stopped_running_run": stopped.was_running,
        "was_queued": stopped.was_queued.is_some(),
        "processes_killed": stopped.killed,
        "survivors": stopped.survivors,
        "worker": structured(w),
    })))
}
