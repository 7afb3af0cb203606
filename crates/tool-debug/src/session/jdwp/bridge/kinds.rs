//! Breakpoint kinds over JDWP, which has no expression evaluator: a
//! condition compares a variable path with a literal (`i == 3`,
//! `name != null`, `total > 10.5`) or is a boolean path alone; a hit
//! condition is counted here; a logpoint's `{path}`s are read from the
//! stopped frame and its line is sent as logpoint output. The JVM stops on
//! every hit (policy ALL); a hit that does not stop is resumed at once.
//!
//! Invariants: a condition the backend cannot read is refused when the
//! breakpoint is set, never found out at a hit; a condition that cannot
//! be evaluated at a hit (a path gone null) stops, as an IDE does, rather
//! than pass silently; a hit count counts only the hits whose condition
//! held.

use super::inspect::variable_path;
use super::Bridge;
use crate::breakpoint::HitTest;
use serde_json::{json, Value};

/// A condition: a variable path, then optionally an operator and a
/// literal.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Condition {
    path: String,
    test: Option<(&'static str, String)>,
}

/// The operators a condition may use, longest first.
const OPERATORS: &[&str] = &["==", "!=", "<=", ">=", "<", ">"];

/// `text` as a condition; `Err` says what a condition can be.
pub(super) fn condition(text: &str) -> Result<Condition, String> {
    let refuse = || {
        format!(
            "condition `{text}` cannot be read: the java backend has no expression evaluator; a condition is a variable path compared with a literal (`i == 3`, `name != null`, `total > 10.5`, `label == \"x\"`) or a boolean path alone"
        )
    };
    let found = OPERATORS
        .iter()
        .filter_map(|op| text.find(op).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, std::cmp::Reverse(op.len())));
    let (path, test) = match found {
        None => (text.trim(), None),
        Some((i, op)) => {
            let literal = text[i + op.len()..].trim();
            if literal.is_empty() || OPERATORS.iter().any(|o| literal.contains(o)) {
                return Err(refuse());
            }
            (text[..i].trim(), Some((op, literal.to_string())))
        }
    };
    variable_path(path).ok_or_else(refuse)?;
    Ok(Condition {
        path: path.to_string(),
        test,
    })
}

/// Whether `value` (as the backend prints it) passes `op literal`.
fn holds(value: &str, op: &str, literal: &str) -> bool {
    let number = |s: &str| s.trim_matches('\'').parse::<f64>().ok();
    if let (Some(a), Some(b)) = (number(value), number(literal)) {
        // Exactly, as Java's `==` compares numbers.
        use std::cmp::Ordering::{Equal, Greater, Less};
        let order = a.partial_cmp(&b);
        return match op {
            "==" => order == Some(Equal),
            "!=" => order != Some(Equal),
            "<" => order == Some(Less),
            "<=" => matches!(order, Some(Less | Equal)),
            ">" => order == Some(Greater),
            _ => matches!(order, Some(Greater | Equal)),
        };
    }
    // Strings, booleans, null, enum names, characters: by their text.
    let equal = value == literal || value.trim_matches('"') == literal.trim_matches('"');
    match op {
        "==" => equal,
        "!=" => !equal,
        _ => false,
    }
}

/// What a breakpoint asks for besides stopping.
#[derive(Debug, Clone, Default)]
pub(super) struct Kinds {
    pub condition: Option<Condition>,
    pub hit: Option<HitTest>,
    pub log: Option<String>,
    pub hits: u64,
}

impl Kinds {
    /// The kinds of a DAP source breakpoint; `Err` says which cannot be.
    pub(super) fn of(b: &Value) -> Result<Kinds, String> {
        let text = |k: &str| {
            b.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        Ok(Kinds {
            condition: text("condition").map(condition).transpose()?,
            hit: text("hitCondition")
                .map(crate::breakpoint::hit_test)
                .transpose()?,
            log: text("logMessage").map(String::from),
            hits: 0,
        })
    }
}

/// What a hit of a breakpoint comes to.
#[derive(Debug)]
pub(super) enum Outcome {
    Stop,
    Pass,
    /// A logpoint's line, to send as output from `path`:`line`.
    Log {
        path: std::path::PathBuf,
        line: u32,
        message: String,
    },
}

impl Bridge {
    /// A hit of breakpoint request `request` on `thread` (suspended):
    /// whether it stops, passes, or logs.
    pub(super) async fn hit(&self, request: i32, thread: u64) -> Outcome {
        let Some((kinds, path, line)) = self.breakpoint_of(request) else {
            return Outcome::Stop;
        };
        if kinds.condition.is_none() && kinds.hit.is_none() && kinds.log.is_none() {
            return Outcome::Stop;
        }
        let Ok(frame) = self.top_frame(thread).await else {
            return Outcome::Stop;
        };
        if let Some(c) = &kinds.condition {
            let value = self.evaluate_in(frame, &c.path).await;
            let pass = match (&value, &c.test) {
                (Err(_), _) => false,
                (Ok(v), None) => v.text == "false",
                (Ok(v), Some((op, literal))) => !holds(&v.text, op, literal),
            };
            if pass {
                return Outcome::Pass;
            }
        }
        let hits = self.count_hit(request);
        if kinds.hit.is_some_and(|h| !h.stops(hits)) {
            return Outcome::Pass;
        }
        let Some(template) = kinds.log else {
            return Outcome::Stop;
        };
        let mut message = String::new();
        let mut rest = template.as_str();
        while let Some(open) = rest.find('{') {
            message.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let expression = &rest[open + 1..open + close];
            match self.evaluate_in(frame, expression).await {
                // A string reads as its text, as `toString` gives it.
                Ok(v) if v.type_name == "String" && v.text.len() >= 2 => {
                    message.push_str(&v.text[1..v.text.len() - 1]);
                }
                Ok(v) => message.push_str(&v.text),
                Err(why) => message.push_str(&format!("<{expression}: {why}>")),
            }
            rest = &rest[open + close + 1..];
        }
        message.push_str(rest);
        Outcome::Log {
            path,
            line,
            message,
        }
    }

    /// Send a logpoint's line as output.
    pub(super) async fn logged(&self, path: &std::path::Path, line: u32, message: &str) {
        self.dap
            .event(
                "output",
                json!({"category": "stdout", "output": format!("{message}\n"),
                    "source": {"path": path}, "line": line}),
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_compare_a_path_with_a_literal() {
        let c = condition("i == 3").unwrap();
        assert_eq!(c.path, "i");
        assert_eq!(c.test, Some(("==", "3".to_string())));
        assert_eq!(
            condition("xs[0] >= 2").unwrap().test,
            Some((">=", "2".into()))
        );
        assert_eq!(condition("done").unwrap().test, None);
        assert!(condition("a + b > 3")
            .unwrap_err()
            .contains("no expression evaluator"));
        assert!(condition("f(x) == 1").is_err());
        assert!(condition("i == ").is_err());
        assert!(holds("3", "==", "3"));
        assert!(holds("18.0", ">", "17"));
        assert!(holds("\"mean\"", "==", "\"mean\""));
        assert!(holds("null", "!=", "\"x\""));
        assert!(!holds("\"a\"", "<", "\"b\""));
    }
}
