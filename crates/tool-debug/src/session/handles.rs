//! The handle table: our numbers for frames and variable references.
//!
//! Invariants: a handle given to the model is never reused; each is tagged
//! with the stop it came from and only the current stop's handles are kept,
//! so a stale one is refused (saying why) instead of answered with another
//! frame's data; a handle of the wrong kind is named as such.

use super::state::RunState;
use std::collections::HashMap;
use tool_core::ToolError;

/// What a handle given to the model stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    Frame,
    Variables,
}

impl HandleKind {
    fn what(self) -> &'static str {
        match self {
            HandleKind::Frame => "frame",
            HandleKind::Variables => "variables reference",
        }
    }

    /// What to call again for a fresh one.
    fn again(self) -> &'static str {
        match self {
            HandleKind::Frame => "call stack again",
            HandleKind::Variables => "call stack and scopes again",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Handle {
    stop_id: u64,
    kind: HandleKind,
    dap_id: u64,
    /// Frames: the thread they belong to.
    thread_id: Option<u64>,
}

/// A resolved handle.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    pub dap_id: u64,
    pub thread_id: Option<u64>,
}

/// Our numbers for frames and variable references.
#[derive(Debug, Default)]
pub(crate) struct HandleTable {
    next: u64,
    entries: HashMap<u64, Handle>,
}

impl HandleTable {
    /// Hand out a new handle for something of stop `stop_id`.
    pub(crate) fn issue(
        &mut self,
        stop_id: u64,
        kind: HandleKind,
        dap_id: u64,
        thread_id: Option<u64>,
    ) -> u64 {
        // Only the current stop's handles are kept; older ones are recognised
        // as stale by being below `next` and absent.
        self.entries.retain(|_, h| h.stop_id == stop_id);
        self.next += 1;
        let id = self.next;
        self.entries.insert(
            id,
            Handle {
                stop_id,
                kind,
                dap_id,
                thread_id,
            },
        );
        id
    }

    /// Look a handle up while the debuggee is in `state`, or say why it
    /// cannot be used.
    pub(crate) fn resolve(
        &self,
        id: u64,
        kind: HandleKind,
        state: &RunState,
    ) -> Result<Resolved, ToolError> {
        let (what, again) = (kind.what(), kind.again());
        let current = match state {
            RunState::Stopped(s) => s.stop_id,
            RunState::Ended(e) => {
                return Err(ToolError::refused(format!(
                    "{what} {id} is from a session that has ended ({}); launch again",
                    e.describe()
                )))
            }
            _ => {
                return Err(ToolError::refused(format!(
                    "{what} {id} is from an earlier stop and the program is running now; call pause (or wait for a breakpoint), then {again}"
                )))
            }
        };
        let stale = || {
            ToolError::refused(format!(
                "that {what} ({id}) is from an earlier stop; the program is now at stop {current}; {again}"
            ))
        };
        match self.entries.get(&id) {
            Some(h) if h.stop_id == current && h.kind == kind => Ok(Resolved {
                dap_id: h.dap_id,
                thread_id: h.thread_id,
            }),
            Some(h) if h.stop_id == current => Err(ToolError::bad_args(format!(
                "{id} is a {}, not a {what}; pass the id from the right listing",
                match h.kind {
                    HandleKind::Frame => "frame id",
                    HandleKind::Variables => "variables reference",
                }
            ))),
            Some(_) => Err(stale()),
            None if id >= 1 && id <= self.next => Err(stale()),
            None => Err(ToolError::bad_args(format!(
                "there is no {what} {id}; take ids from stack, scopes or variables of the current stop"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::StopInfo;

    fn stopped(stop_id: u64) -> RunState {
        RunState::Stopped(StopInfo {
            stop_id,
            reason: "step".into(),
            description: None,
            text: None,
            thread_id: Some(1),
            words: None,
        })
    }

    #[test]
    fn handles_of_an_earlier_stop_or_the_wrong_kind_are_refused_with_why() {
        let mut t = HandleTable::default();
        let frame = t.issue(1, HandleKind::Frame, 1000, Some(1));
        let vars = t.issue(1, HandleKind::Variables, 7, Some(1));
        let r = t.resolve(frame, HandleKind::Frame, &stopped(1)).unwrap();
        assert_eq!((r.dap_id, r.thread_id), (1000, Some(1)));
        let errors = [
            t.resolve(vars, HandleKind::Frame, &stopped(1)),
            t.resolve(99, HandleKind::Frame, &stopped(1)),
            t.resolve(frame, HandleKind::Frame, &stopped(2)),
            t.resolve(vars, HandleKind::Variables, &RunState::Running),
        ]
        .map(|r| r.unwrap_err().to_string());
        expect_test::expect![[r#"
            [
                "bad arguments: 2 is a variables reference, not a frame; pass the id from the right listing",
                "bad arguments: there is no frame 99; take ids from stack, scopes or variables of the current stop",
                "refused: that frame (1) is from an earlier stop; the program is now at stop 2; call stack again",
                "refused: variables reference 2 is from an earlier stop and the program is running now; call pause (or wait for a breakpoint), then call stack and scopes again",
            ]
        "#]]
        .assert_debug_eq(&errors);
        // A new stop drops the old handles; their numbers are not reused.
        let next = t.issue(2, HandleKind::Frame, 1000, Some(1));
        assert_eq!(next, 3);
        assert!(t.resolve(frame, HandleKind::Frame, &stopped(2)).is_err());
    }
}
