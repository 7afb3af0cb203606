//! Breakpoint kinds as the model asks for them: a line (or a function) with
//! an optional condition, hit condition and log message, and which adapter
//! capability each kind needs.
//!
//! Invariants: a plain line number and `{"line": N}` are the same
//! breakpoint; empty strings are refused, never sent; a kind the adapter
//! does not announce in its `initialize` answer is refused naming the
//! adapter, before anything is sent (an adapter that does not know
//! logpoints would pause on one instead of logging).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// What a breakpoint does besides stopping at its place: all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BreakpointKind {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_message: Option<String>,
}

/// A line breakpoint: a 1-based line and its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineBreakpoint {
    pub line: u32,
    #[serde(flatten)]
    pub kind: BreakpointKind,
}

/// A function breakpoint: a function name and its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionBreakpoint {
    pub name: String,
    #[serde(flatten)]
    pub kind: BreakpointKind,
}

/// A line breakpoint as an object.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineObject {
    /// 1-based line.
    line: u32,
    /// Stop only when this expression is true (in the program's language).
    #[serde(default)]
    condition: Option<String>,
    /// Stop only on this hit (e.g. "5": the fifth time the line is reached).
    #[serde(default)]
    hit_condition: Option<String>,
    /// A logpoint: print this message (`{expr}` is interpolated) and never stop.
    #[serde(default)]
    log_message: Option<String>,
}

/// A function breakpoint as an object.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionObject {
    /// The function's name as the debugger knows it (`main.process`, `mean`).
    name: String,
    /// Stop only when this expression is true.
    #[serde(default)]
    condition: Option<String>,
    /// Stop only on this hit (e.g. "5").
    #[serde(default)]
    hit_condition: Option<String>,
    /// Print this message instead of stopping.
    #[serde(default)]
    log_message: Option<String>,
}

/// The schema of a `lines` entry: a line number, or an object.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum LineEntry {
    Line(u32),
    Object(LineObject),
}

/// The schema of a `functions` entry: a name, or an object.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum FunctionEntry {
    Name(String),
    Object(FunctionObject),
}

/// A plain number, or an object with `line` and the kind's fields.
impl<'de> Deserialize<'de> for LineBreakpoint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::Number(n) => {
                let line = n.as_u64().and_then(|l| u32::try_from(l).ok()).ok_or_else(|| {
                    D::Error::custom(format!("line {n} is not a line number"))
                })?;
                Ok(LineBreakpoint {
                    line,
                    kind: BreakpointKind::default(),
                })
            }
            v @ Value::Object(_) => {
                let o: LineObject = serde_json::from_value(v).map_err(D::Error::custom)?;
                Ok(LineBreakpoint {
                    line: o.line,
                    kind: BreakpointKind {
                        condition: o.condition,
                        hit_condition: o.hit_condition,
                        log_message: o.log_message,
                    },
                })
            }
            other => Err(D::Error::custom(format!(
                "a breakpoint is a line number or an object like {{\"line\": 12, \"condition\": \"x > 3\"}}, not {other}"
            ))),
        }
    }
}

/// A plain name, or an object with `name` and the kind's fields.
impl<'de> Deserialize<'de> for FunctionBreakpoint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::String(name) => Ok(FunctionBreakpoint {
                name,
                kind: BreakpointKind::default(),
            }),
            v @ Value::Object(_) => {
                let o: FunctionObject = serde_json::from_value(v).map_err(D::Error::custom)?;
                Ok(FunctionBreakpoint {
                    name: o.name,
                    kind: BreakpointKind {
                        condition: o.condition,
                        hit_condition: o.hit_condition,
                        log_message: o.log_message,
                    },
                })
            }
            other => Err(D::Error::custom(format!(
                "a function breakpoint is a name or an object like {{\"name\": \"foo\", \"condition\": \"n == 0\"}}, not {other}"
            ))),
        }
    }
}

impl BreakpointKind {
    /// Whether it is a plain breakpoint (no condition, hit count or message).
    pub fn is_plain(&self) -> bool {
        *self == BreakpointKind::default()
    }

    /// Empty strings refused; `what` names the breakpoint in the message.
    pub fn check(&self, what: &str) -> Result<(), String> {
        for (field, v) in [
            ("condition", &self.condition),
            ("hit_condition", &self.hit_condition),
            ("log_message", &self.log_message),
        ] {
            if v.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return Err(format!(
                    "{what}: `{field}` is empty; leave it out, or give it text"
                ));
            }
        }
        Ok(())
    }

    /// The capability each field needs, and the words for the kind.
    fn needs(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        if self.condition.is_some() {
            out.push(("supportsConditionalBreakpoints", "conditional breakpoints"));
        }
        if self.hit_condition.is_some() {
            out.push(("supportsHitConditionalBreakpoints", "hit counts"));
        }
        if self.log_message.is_some() {
            out.push((
                "supportsLogPoints",
                "logpoints (it would stop on the line instead of logging)",
            ));
        }
        out
    }

    /// ` if `x > 3`, on hit 5, logs `x={x}``: the kind in words (empty for
    /// a plain breakpoint).
    pub fn words(&self) -> String {
        let mut out = String::new();
        if let Some(c) = &self.condition {
            out.push_str(&format!(", if `{c}`"));
        }
        if let Some(h) = &self.hit_condition {
            out.push_str(&format!(", on hit {h}"));
        }
        if let Some(m) = &self.log_message {
            out.push_str(&format!(", logs `{m}` without stopping"));
        }
        out
    }
}

/// The refusal when `kinds` need something the adapter (`adapter`, whose
/// `initialize` answer is `capabilities`) does not announce.
pub fn unsupported<'a>(
    adapter: &str,
    capabilities: &Value,
    kinds: impl IntoIterator<Item = &'a BreakpointKind>,
) -> Option<String> {
    let mut missing: Vec<(&str, &str)> = Vec::new();
    for kind in kinds {
        for need in kind.needs() {
            let has = capabilities.get(need.0).and_then(Value::as_bool) == Some(true);
            if !has && !missing.contains(&need) {
                missing.push(need);
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "the {adapter} adapter does not support {} (its `initialize` answer lacks {}); remove them, or use a plain breakpoint",
        missing.iter().map(|m| m.1).collect::<Vec<_>>().join(" or "),
        missing.iter().map(|m| format!("`{}`", m.0)).collect::<Vec<_>>().join(", ")
    ))
}

/// A hit condition (`5`, `>= 5`, `> 2`, `% 3`, `== 5`) as a test on the
/// hit count; `Err` says what it should look like. A bare number stops on
/// that hit only, as debugpy reads it.
pub fn hit_test(condition: &str) -> Result<HitTest, String> {
    let c = condition.trim();
    let (op, number) = ["==", ">=", "<=", ">", "<", "%", "="]
        .iter()
        .find_map(|op| c.strip_prefix(op).map(|rest| (*op, rest.trim())))
        .unwrap_or(("==", c));
    let n: u64 = number.parse().map_err(|_| {
        format!("hit condition `{condition}` is not a count: write 5 (the fifth hit), >= 5, > 5, < 5, <= 5 or % 5 (every fifth)")
    })?;
    Ok(HitTest {
        op: match op {
            "=" => "==",
            other => other,
        },
        n,
    })
}

/// A parsed hit condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HitTest {
    op: &'static str,
    n: u64,
}

impl HitTest {
    /// Whether the `hits`-th hit (1-based) stops.
    pub fn stops(&self, hits: u64) -> bool {
        match self.op {
            ">=" => hits >= self.n,
            "<=" => hits <= self.n,
            ">" => hits > self.n,
            "<" => hits < self.n,
            "%" => self.n != 0 && hits.is_multiple_of(self.n),
            _ => hits == self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_objects_are_line_breakpoints() {
        let got: Vec<LineBreakpoint> = serde_json::from_value(json!([
            7,
            {"line": 8, "condition": "i == 3"},
            {"line": 9, "hit_condition": "4", "log_message": "x={x}"}
        ]))
        .unwrap();
        assert_eq!(got[0].line, 7);
        assert!(got[0].kind.is_plain());
        assert_eq!(got[1].kind.condition.as_deref(), Some("i == 3"));
        assert_eq!(
            got[2].kind.words(),
            ", on hit 4, logs `x={x}` without stopping"
        );
        let err =
            serde_json::from_value::<LineBreakpoint>(json!({"line": 3, "when": "x"})).unwrap_err();
        expect_test::expect!["unknown field `when`, expected one of `line`, `condition`, `hit_condition`, `log_message`"].assert_eq(&err.to_string());
        let err = serde_json::from_value::<LineBreakpoint>(json!("7")).unwrap_err();
        assert!(
            err.to_string().contains("a line number or an object"),
            "{err}"
        );
    }

    #[test]
    fn a_kind_the_adapter_lacks_is_refused_by_name() {
        let logpoint = BreakpointKind {
            log_message: Some("x={x}".into()),
            ..Default::default()
        };
        let caps = json!({"supportsConditionalBreakpoints": true});
        expect_test::expect!["the lldb adapter does not support logpoints (it would stop on the line instead of logging) (its `initialize` answer lacks `supportsLogPoints`); remove them, or use a plain breakpoint"]
            .assert_eq(&unsupported("lldb", &caps, [&logpoint]).unwrap());
        assert_eq!(
            unsupported("lldb", &json!({"supportsLogPoints": true}), [&logpoint]),
            None
        );
    }
}
