//! The event pump: the adapter's events, applied in order to the session,
//! and the watch on the adapter process.
//!
//! Invariants: events are applied in the order the adapter sent them; a
//! stream that ends, or an adapter process that exits, ends the session
//! with why (its last words included) unless something ended it first; the
//! processes a stop or a `process` event reveals are recorded, so they are
//! killed with the session.

use super::lines::Stream;
use super::state::{Ending, RunState, StopInfo};
use super::{Inner, Session};
use crate::protocol::AdapterEvent;
use dap_types::OutputEventCategory;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Apply the adapter's events, in order, to the session's state.
pub(super) async fn pump_events(
    mut events: tokio::sync::mpsc::UnboundedReceiver<AdapterEvent>,
    session: Weak<Inner>,
) {
    let mut stops: u64 = 0;
    let mut exit_code: Option<i64> = None;
    while let Some(event) = events.recv().await {
        let Some(inner) = session.upgrade() else {
            return;
        };
        match event {
            AdapterEvent::Initialized => {
                inner.initialized.send_replace(true);
            }
            AdapterEvent::Stopped(s) => {
                stops += 1;
                inner.owned.record_tree();
                inner.run.set(RunState::Stopped(StopInfo {
                    stop_id: stops,
                    reason: s.reason,
                    description: s.description,
                    text: s.text,
                    thread_id: s.thread_id,
                    words: None,
                }));
            }
            AdapterEvent::Continued { .. } => {
                inner
                    .run
                    .update(|s| matches!(s, RunState::Stopped(_)).then_some(RunState::Running));
            }
            AdapterEvent::Exited { exit_code: code } => {
                exit_code = code.or(exit_code);
                inner.run.set(RunState::Exiting { code: exit_code });
            }
            AdapterEvent::Terminated => {
                inner
                    .run
                    .set(RunState::Ended(Ending::Exited { code: exit_code }));
                let s = Session {
                    inner: inner.clone(),
                };
                tokio::spawn(async move { s.shutdown(Ending::Exited { code: exit_code }).await });
            }
            AdapterEvent::Output(o) => match o.category {
                Some(c @ (OutputEventCategory::Stdout | OutputEventCategory::Stderr)) => {
                    let text = o.output.replace("\r\n", "\n");
                    // debugpy sends a logpoint's message as stdout with a
                    // `source`: a stream of its own, so it never splits a
                    // line of the program's.
                    let stream = match (o.source.is_some() || o.line.is_some(), c) {
                        (true, _) => Stream::Logpoint,
                        (false, OutputEventCategory::Stderr) => Stream::Stderr,
                        (false, _) => Stream::Stdout,
                    };
                    inner.io.push_output(stream, text.as_bytes());
                }
                Some(OutputEventCategory::Telemetry) => {}
                _ => {
                    if let Some(code) = crate::adapters::delve::exit_status_line(&o.output) {
                        exit_code = Some(code);
                        // Delve says this after `terminated`.
                        inner.run.update(|s| {
                            (*s == RunState::Ended(Ending::Exited { code: None }))
                                .then_some(RunState::Ended(Ending::Exited { code: Some(code) }))
                        });
                    }
                    inner.io.push_log(o.output.as_bytes());
                }
            },
            AdapterEvent::Process(p) => {
                if let Some(pid) = p.system_process_id {
                    *inner.debuggee_pid.lock().expect("pid lock") = Some(pid as u32);
                    // A debuggee someone else started is not ours to kill.
                    if !inner.info.attached {
                        inner.owned.add(pid as u32);
                    }
                }
            }
            AdapterEvent::Breakpoint(b) => {
                let Some(id) = b.breakpoint.id else { continue };
                let mut all = inner.breakpoints.lock().expect("bp lock");
                for status in all.values_mut().flatten() {
                    if status.id == Some(id) {
                        status.verified = b.breakpoint.verified;
                        if let Some(line) = b.breakpoint.line {
                            status.line = Some(line as u32);
                        }
                        if let Some(path) =
                            b.breakpoint.source.as_ref().and_then(|s| s.path.as_deref())
                        {
                            status.file = Some(std::path::PathBuf::from(path));
                        }
                        if b.breakpoint.message.is_some() {
                            status.message = b.breakpoint.message.clone();
                        }
                    }
                }
            }
            AdapterEvent::Thread(_) | AdapterEvent::Other { .. } => {}
        }
    }
    // The stream ended. If nothing ended the session first, the adapter died.
    if let Some(inner) = session.upgrade() {
        adapter_died(inner).await;
    }
}

/// The adapter process can exit while a child of it still holds its stdout
/// open (a debuggee inherits it), so the stream alone does not tell; poll
/// the process too.
pub(super) async fn watch_adapter(session: Weak<Inner>) {
    // A JVM under its JDWP agent is the debuggee: its backend hangs up
    // once the JVM's socket and pipes have ended, and the stream's end
    // says so (a poll here could come before its last output).
    if session
        .upgrade()
        .is_some_and(|s| s.info.adapter_kind.adapter().process_is_debuggee())
    {
        return;
    }
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let Some(inner) = session.upgrade() else {
            return;
        };
        let exited = match inner.owned.child.lock().expect("child lock").as_mut() {
            None => return, // shut down
            Some(c) => c.try_wait().ok().flatten(),
        };
        if let Some(status) = exited {
            // Ended first, then the waiters woken: they read why.
            adapter_died(inner.clone()).await;
            inner.client.close(&format!(
                "the adapter process ended ({})",
                tool_core::process::describe_exit(status)
            ));
            return;
        }
    }
}

/// How long a closed stream waits for the adapter's exit status, so the
/// answer can say how it ended (its process tree is reaped first).
const EXIT_STATUS_GRACE: Duration = Duration::from_secs(1);

/// End a session whose adapter is gone, unless something ended it first.
async fn adapter_died(inner: Arc<Inner>) {
    let s = Session { inner };
    if s.is_ended() {
        return;
    }
    let try_status = |s: &Session| {
        s.inner
            .owned
            .child
            .lock()
            .expect("child lock")
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    };
    let waited = std::time::Instant::now();
    let mut status = try_status(&s);
    while status.is_none() && waited.elapsed() < EXIT_STATUS_GRACE && !s.is_ended() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        status = try_status(&s);
    }
    if s.is_ended() {
        return;
    }
    if s.inner.info.adapter_kind.adapter().process_is_debuggee() {
        if let Some(st) = status {
            // The program's own exit: its status is its exit code.
            let code = st.code().map(i64::from).or_else(|| {
                std::os::unix::process::ExitStatusExt::signal(&st).map(|n| -i64::from(n))
            });
            let ending = Ending::Exited { code };
            s.inner.run.set_ended(ending.clone());
            tokio::spawn(async move { s.shutdown(ending).await });
            return;
        }
    }
    let mut why = match status {
        Some(st) => format!("it ended ({})", tool_core::process::describe_exit(st)),
        None => s
            .inner
            .client
            .closed()
            .unwrap_or_else(|| "its connection closed".into()),
    };
    let log = s.adapter_log_tail();
    if !log.trim().is_empty() {
        why.push_str(&format!(
            "; its last words: {}",
            tool_core::format::cap_chars(log.trim(), 600)
        ));
    }
    tracing::warn!(%why, "debug adapter died");
    let ending = Ending::AdapterDied { why };
    // Mark it now so the call that is waiting sees why at once.
    s.inner.run.set_ended(ending.clone());
    tokio::spawn(async move { s.shutdown(ending).await });
}
