//! Starting a session: connect, assemble the session around the connection,
//! run the handshake, and say why when any of it fails.
//!
//! Invariant: the handshake follows the order real adapters need:
//! initialize → launch/attach (reply not awaited) → `initialized` →
//! setBreakpoints for every file → setExceptionBreakpoints →
//! configurationDone → the launch reply. Every step is bounded, and a failed
//! start shuts down whatever it started.

use super::connect::{self, Sinks};
use super::state::{Ending, RunState, RunStateCell};
use super::{
    dap_to_tool, Background, Inner, LaunchPlan, OutputBuffers, Owned, Session, SessionInfo,
    SessionLimits, StartReport,
};
use crate::transport::DapError;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;
use tool_core::ToolError;

impl Session {
    /// Start the adapter, run the handshake, and return once the launch
    /// reply came (the first stop is waited for by the caller).
    pub async fn start(
        plan: LaunchPlan,
        limits: SessionLimits,
    ) -> Result<(Session, StartReport), ToolError> {
        let io = OutputBuffers::new();
        let adapter_command = plan
            .adapter
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let sinks = Sinks {
            output: &io.output,
            adapter_log: &io.adapter_log,
        };
        let conn = connect::connect(&plan, &limits, &adapter_command, sinks).await?;
        let session = Session::assemble(&plan, limits, adapter_command, io, conn);
        match session.handshake(&plan).await {
            Ok(report) => Ok((session, report)),
            Err(e) => {
                let log = session.adapter_log_tail();
                session
                    .shutdown(Ending::Failed { why: e.to_string() })
                    .await;
                Err(with_adapter_log(e, &log))
            }
        }
    }

    /// The session around a fresh connection, its pump, adapter watch and
    /// TTL timer running.
    fn assemble(
        plan: &LaunchPlan,
        limits: SessionLimits,
        adapter_command: String,
        io: OutputBuffers,
        conn: connect::Connection,
    ) -> Session {
        let adapter_pid = conn
            .child
            .as_ref()
            .map(tool_core::process::ChildProcess::pid);
        let ttl = limits.ttl;
        let (initialized, _) = watch::channel(false);
        let inner = Arc::new(Inner {
            info: SessionInfo {
                attached: plan.request == "attach",
                adapter_id: plan.adapter.spec.id.clone(),
                adapter_kind: plan.adapter.spec.kind,
                label: plan.label.clone(),
                adapter_command,
                evaluate_context: plan.adapter.spec.evaluate_context.clone(),
                started: Instant::now(),
                limits,
            },
            client: conn.client,
            run: RunStateCell::new(),
            initialized,
            io,
            handles: Mutex::new(Default::default()),
            owned: Owned::new(
                conn.child,
                adapter_pid,
                plan.scratch_dir.clone(),
                plan.held_stdin.clone(),
            ),
            breakpoints: Mutex::new(BTreeMap::new()),
            default_functions: plan.default_functions.clone(),
            capabilities: Mutex::new(Value::Null),
            debuggee_pid: Mutex::new(plan.debuggee_pid),
            background: Background::default(),
        });
        let mut tasks = conn.tasks;
        *inner.background.pump.lock().expect("pump lock") = Some(tokio::spawn(
            super::pump::pump_events(conn.events, Arc::downgrade(&inner)),
        ));
        if adapter_pid.is_some() {
            tasks.push(tokio::spawn(super::pump::watch_adapter(Arc::downgrade(
                &inner,
            ))));
        }
        let weak = Arc::downgrade(&inner);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(inner) = weak.upgrade() {
                tracing::info!("debug session TTL ran out");
                Session { inner }.shutdown(Ending::Expired { ttl }).await;
            }
        }));
        inner
            .background
            .tasks
            .lock()
            .expect("tasks lock")
            .extend(tasks);
        Session { inner }
    }

    async fn handshake(&self, plan: &LaunchPlan) -> Result<StartReport, ToolError> {
        let limits = &self.inner.info.limits;
        let client = &self.inner.client;
        let log = || self.adapter_log_tail();
        let caps = client
            .request(
                "initialize",
                json!({
                    "clientID": "agent-tools",
                    "clientName": "agent-tools debug",
                    "adapterID": plan.adapter.spec.id,
                    "locale": "en-US",
                    "linesStartAt1": true,
                    "columnsStartAt1": true,
                    "pathFormat": "path",
                    "supportsVariableType": true,
                    "supportsRunInTerminalRequest": false,
                    "supportsStartDebuggingRequest": false,
                    "supportsProgressReporting": false,
                    "supportsInvalidatedEvent": false,
                }),
                limits.handshake,
            )
            .await
            .map_err(|e| handshake_error(e, log()))?;
        *self.inner.capabilities.lock().expect("caps lock") = caps.clone();

        // Real adapters differ: debugpy sends `initialized` only after it got
        // the launch request and answers launch after configurationDone;
        // lldb answers launch first. So launch is sent and its reply
        // collected at the end.
        let launch = client
            .send(plan.request, plan.arguments.clone())
            .await
            .map_err(|e| handshake_error(e, log()))?;
        let mut launch_reply = Box::pin(launch.wait(limits.handshake));
        let mut launch_result: Option<Result<Value, DapError>> = None;
        let deadline = tokio::time::Instant::now() + limits.handshake;
        let mut init_rx = self.inner.initialized.subscribe();
        loop {
            if *init_rx.borrow_and_update() {
                break;
            }
            if let Some(Err(e)) = &launch_result {
                return Err(self.launch_error(plan, e.clone()));
            }
            if let Some(why) = client.closed() {
                return Err(ToolError::failed(format!(
                    "the adapter ended the connection before it was ready ({why}){}",
                    super::log_suffix(&log())
                )));
            }
            tokio::select! {
                r = &mut launch_reply, if launch_result.is_none() => {
                    if let Err(e) = r {
                        return Err(self.launch_error(plan, e));
                    }
                    launch_result = Some(r);
                }
                changed = init_rx.changed() => {
                    if changed.is_err() { break; }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(ToolError::timed_out(format!(
                        "the adapter did not become ready (no `initialized` event) within {} ms; gave up, and nothing of this session is left running{}",
                        limits.handshake.as_millis(),
                        super::log_suffix(&log())
                    )));
                }
            }
        }

        let mut report = StartReport::default();
        for (file, lines) in &plan.breakpoints {
            let statuses = self
                .set_breakpoints(file, lines)
                .await
                .map_err(|e| match e {
                    ToolError::Refused(why) => ToolError::refused(format!(
                        "cannot launch with the breakpoints of {}: {why}",
                        file.display()
                    )),
                    other => other,
                })?;
            report.breakpoints.insert(file.clone(), statuses);
        }
        if !plan.function_breakpoints.is_empty() || !plan.default_functions.is_empty() {
            report.functions = self
                .set_function_breakpoints(&plan.function_breakpoints)
                .await
                .map_err(|e| match e {
                    ToolError::Refused(why) => ToolError::refused(format!(
                        "cannot {} with the function breakpoints set: {why}",
                        plan.request
                    )),
                    other => other,
                })?;
        }
        if let Some(filters) = &plan.exception_filters {
            self.set_exception_filters(filters)
                .await
                .map_err(|e| match e {
                    ToolError::Refused(why) | ToolError::BadArgs(why) => {
                        ToolError::refused(format!(
                            "cannot {} with the exception breakpoints set: {why}",
                            plan.request
                        ))
                    }
                    other => other,
                })?;
        } else {
            // What an IDE does: the filters the adapter enables by
            // default (debugpy: stop on uncaught exceptions).
            let defaults = super::catch::default_filters(&caps);
            if caps.get("exceptionBreakpointFilters").is_some() {
                let _ = client
                    .request(
                        "setExceptionBreakpoints",
                        json!({ "filters": defaults }),
                        limits.request,
                    )
                    .await;
            }
        }
        if caps
            .get("supportsConfigurationDoneRequest")
            .and_then(Value::as_bool)
            == Some(true)
        {
            client
                .request("configurationDone", json!({}), limits.request)
                .await
                .map_err(|e| handshake_error(e, log()))?;
        }
        let reply = match launch_result {
            Some(r) => r,
            None => launch_reply.await,
        };
        if let Err(e) = reply {
            return Err(self.launch_error(plan, e));
        }
        self.inner
            .run
            .update(|s| (*s == RunState::Starting).then_some(RunState::Running));
        self.record_processes();
        Ok(report)
    }

    fn launch_error(&self, plan: &LaunchPlan, e: DapError) -> ToolError {
        match e {
            DapError::Refused { message, .. } => ToolError::failed(format!(
                "the {} adapter refused to {} {}: {message}",
                plan.adapter.spec.id, plan.request, plan.label
            )),
            other => handshake_error(other, self.adapter_log_tail()),
        }
    }
}

/// A request of the handshake that failed: nothing of the session is left
/// (the caller shuts it down), so the error says so instead of offering a
/// session to go on with.
fn handshake_error(e: DapError, log_tail: String) -> ToolError {
    match e {
        DapError::Timeout { .. } => ToolError::timed_out(format!(
            "{e}; gave up, and nothing of this session is left running; check the adapter and the debuggee, then try again (a larger timeout_seconds waits longer)"
        )),
        other => dap_to_tool(other, log_tail),
    }
}

/// A failed start's error, with the adapter's log unless it says it already.
fn with_adapter_log(e: ToolError, log: &str) -> ToolError {
    if let ToolError::Refused(_) = e {
        // Refused before the adapter was asked for anything: its log has
        // nothing to add.
        return e;
    }
    let mut msg = match &e {
        ToolError::TimedOut(m) | ToolError::BadArgs(m) | ToolError::Failed(m) => m.clone(),
        other => other.to_string(),
    };
    if !msg.contains("adapter log") {
        msg.push_str(&super::log_suffix(log));
    }
    match e {
        ToolError::TimedOut(_) => ToolError::TimedOut(msg),
        ToolError::BadArgs(_) => ToolError::BadArgs(msg),
        _ => ToolError::Failed(msg),
    }
}
