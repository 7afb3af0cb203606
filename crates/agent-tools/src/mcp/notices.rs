//! The run's notices sent to the client as they are posted, as MCP
//! `notifications/message` log notifications (level `info` or `warning`,
//! logger = the notice's source, data = its text).
//!
//! One forwarding task per session, started once the client has initialized
//! and ended with the run. Notices are also appended to the next tool result
//! by the Registry; this is the push half, for clients that show log
//! messages. A client may raise the level with `logging/setLevel`: notices
//! below it are not sent (they still ride on the next result).
//!
//! MCP logging is deprecated by SEP-2577 for protocol revisions after
//! 2025-11-25; this host negotiates 2025-11-25 at most, where it is part of
//! the protocol, hence the `allow(deprecated)` on this module (and on the
//! host's capability and `set_level`).
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast::error::RecvError;
use tool_core::{CancellationToken, Notice, NoticeBoard, NoticeLevel};

/// The lowest level the client asked to see (default: every notice).
#[derive(Clone, Default)]
pub struct MinimumLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl MinimumLevel {
    pub fn set(&self, level: LoggingLevel) {
        *self.0.lock().expect("level lock") = Some(level);
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        match *self.0.lock().expect("level lock") {
            None => true,
            Some(min) => rank(level) >= rank(min),
        }
    }
}

/// RFC 5424 order, least severe first.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn level_of(notice: &Notice) -> LoggingLevel {
    match notice.level {
        NoticeLevel::Info => LoggingLevel::Info,
        NoticeLevel::Warning => LoggingLevel::Warning,
    }
}

/// Send every notice posted on `board` from now on to `peer`, until `run`
/// is cancelled or the client is gone.
pub fn forward(
    board: &NoticeBoard,
    peer: Peer<RoleServer>,
    minimum: MinimumLevel,
    run: CancellationToken,
) {
    let mut rx = board.subscribe();
    tokio::spawn(async move {
        loop {
            let notice = tokio::select! {
                () = run.cancelled() => break,
                n = rx.recv() => match n {
                    Ok(n) => n,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "notices posted faster than the client reads; some were not sent");
                        continue;
                    }
                    Err(RecvError::Closed) => break,
                },
            };
            let level = level_of(&notice);
            if !minimum.allows(level) {
                continue;
            }
            let param = LoggingMessageNotificationParam::new(
                level,
                serde_json::Value::String(notice.text.clone()),
            )
            .with_logger(notice.source.clone());
            let sent = peer.notify_logging_message(param).await;
            if sent.is_err() {
                break;
            }
        }
    });
}
