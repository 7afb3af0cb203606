//! Every stop explained: what a stop is, in the words the model reads
//! (`paused`, `stopped: uncaught ValueError: …`, `stopped: panic: …`,
//! `stopped: signal SIGSEGV: …`), asked of the adapter once per stop and
//! kept on the stop (`StopInfo::words`) so `status` says it too.
//!
//! Invariants: the adapter's own account comes first (`exceptionInfo` where
//! it offers it, then the stop's description and text, then the adapter's
//! question from [`crate::adapters::stop_question`]); a stop that none of
//! them explains keeps its plain reason, never a guess. A `SIGSTOP` right
//! after our `pause` is the pause (lldb reports it as an exception).

use super::OpContext;
use crate::session::{Session, StopInfo};
use serde_json::{json, Value};

impl OpContext<'_> {
    /// `stop` with its words, recorded on the session's current stop.
    pub(super) async fn explain(
        &self,
        s: &Session,
        stop: &StopInfo,
        after_pause: bool,
    ) -> StopInfo {
        let mut out = stop.clone();
        if out.words.is_some() {
            return out;
        }
        let (reason, words) = match stop.reason.as_str() {
            "pause" => ("pause", "paused".to_string()),
            "exception" | "signal" => {
                let what = self.what_stopped(s, stop).await;
                match what {
                    Some(w) if after_pause && w.contains("SIGSTOP") => {
                        ("pause", "paused".to_string())
                    }
                    Some(w) => (stop.reason.as_str(), format!("stopped: {w}")),
                    None => return out,
                }
            }
            "breakpoint" | "function breakpoint" if !s.default_functions().is_empty() => {
                match self.rust_panic(s, stop).await {
                    Some(w) => ("exception", w),
                    None => return out,
                }
            }
            _ => return out,
        };
        s.explain_stop(stop.stop_id, reason, &words);
        out.reason = reason.to_string();
        out.words = Some(words);
        out
    }

    /// A stop on the default `rust_panic` breakpoint, in words: the panic
    /// message the hook printed just before (`None` for any other stop).
    async fn rust_panic(&self, s: &Session, stop: &StopInfo) -> Option<String> {
        let frame = self.top_frame(s, stop.thread_id?).await?;
        if !frame.name.contains(crate::adapters::lldb::RUST_PANIC) {
            return None;
        }
        // The hook's message may still be on its way through the adapter.
        for _ in 0..10 {
            if let Some(m) = crate::adapters::lldb::panic_message(&s.output_tail(4000)) {
                return Some(format!("stopped: panic: {m}"));
            }
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        }
        Some("stopped: panic (its message was not printed)".to_string())
    }

    /// The exception, panic or signal behind an `exception` stop.
    async fn what_stopped(&self, s: &Session, stop: &StopInfo) -> Option<String> {
        if let Some(thread) = stop.thread_id {
            if s.supports("supportsExceptionInfoRequest") {
                if let Ok(body) = s
                    .request("exceptionInfo", json!({ "threadId": thread }))
                    .await
                {
                    if let Some(w) = exception_words(&body) {
                        return Some(w);
                    }
                }
            }
        }
        let described = [stop.description.as_deref(), stop.text.as_deref()]
            .into_iter()
            .flatten()
            .map(|t| t.trim().trim_matches('"'))
            .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case(&stop.reason))
            .collect::<Vec<_>>();
        if !described.is_empty() {
            return Some(described.join(": "));
        }
        let question = s.adapter_kind().adapter().stop_question()?;
        let frame = self.top_frame(s, stop.thread_id?).await?;
        let body = s
            .request(
                "evaluate",
                json!({"expression": question.expression, "frameId": frame.id, "context": "repl"}),
            )
            .await
            .ok()?;
        (question.read)(body.get("result").and_then(Value::as_str)?)
    }
}

/// `exceptionInfo`'s answer in words: `uncaught ValueError: bad value`,
/// `panic: assignment to entry in nil map`.
fn exception_words(body: &Value) -> Option<String> {
    let field = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .map(|t| t.trim().trim_matches('"').trim())
            .filter(|t| !t.is_empty())
    };
    // debugpy's userUnhandled stop adds to the id `(note: full exception
    // trace is shown but execution is paused at: f)`: the stop's place
    // says where it is paused.
    let id = field("exceptionId").map(|id| id.split("(note:").next().unwrap_or(id).trim());
    let description = field("description");
    let uncaught = matches!(
        body.get("breakMode").and_then(Value::as_str),
        Some("unhandled" | "userUnhandled")
    );
    let name = match id {
        Some(id) if uncaught && id != "panic" && !id.starts_with("fatal") => {
            format!("uncaught {id}")
        }
        Some(id) => id.to_string(),
        None => return description.map(String::from),
    };
    Some(match description {
        // lldb: `signal` / `signal SIGSEGV: invalid address …`
        Some(d) if d.starts_with(id.unwrap_or_default()) => d.to_string(),
        Some(d) if d != name => format!("{name}: {d}"),
        _ => name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exception_info_reads_as_words() {
        assert_eq!(
            exception_words(
                &json!({"exceptionId": "ValueError", "breakMode": "unhandled",
                "description": "invalid literal for int() with base 10: 'x'"})
            )
            .as_deref(),
            Some("uncaught ValueError: invalid literal for int() with base 10: 'x'")
        );
        assert_eq!(
            exception_words(&json!({"exceptionId": "panic", "breakMode": "unhandled",
                "description": "\"assignment to entry in nil map\""}))
            .as_deref(),
            Some("panic: assignment to entry in nil map")
        );
        assert_eq!(
            exception_words(&json!({"exceptionId": "KeyError", "breakMode": "always"})).as_deref(),
            Some("KeyError")
        );
        assert_eq!(
            exception_words(&json!({"exceptionId": "signal", "breakMode": "always",
                "description": "signal SIGSEGV: invalid address (fault address: 0x0)"}))
            .as_deref(),
            Some("signal SIGSEGV: invalid address (fault address: 0x0)")
        );
        assert_eq!(
            exception_words(&json!({"exceptionId": "AssertionError       (note: full exception trace is shown but execution is paused at: test_median)",
                "breakMode": "always", "description": "assert 3 == 2.5"}))
            .as_deref(),
            Some("AssertionError: assert 3 == 2.5")
        );
        assert_eq!(exception_words(&json!({})), None);
    }
}
