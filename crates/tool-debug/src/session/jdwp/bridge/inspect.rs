//! What a stop shows, read from the suspended JVM: the frames of a thread
//! (each with its class's source file found in the program's source
//! roots), a frame's locals (`Method.VariableTable` and
//! `StackFrame.GetValues`, `this` first), the children of an object or an
//! array, and the exception a stop is at.
//!
//! Invariant: handles (frame ids, references) are handed out per stop and
//! refused once the program moved.

use super::{Bridge, Handle};
use crate::session::jdwp::values;
use crate::session::jdwp::wire::{Location, Value as JdwpValue};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Frames a stack answer holds at most.
const FRAMES: usize = 100;

impl Bridge {
    fn stopped_thread(&self, args: &Value) -> Result<u64, String> {
        let st = self.st();
        let Some(stop) = &st.stop else {
            return Err("the program is not paused".into());
        };
        Ok(args
            .get("threadId")
            .and_then(Value::as_u64)
            .and_then(|n| st.threads.get((n as usize).checked_sub(1)?).copied())
            .unwrap_or(stop.thread))
    }

    pub(super) async fn stack_trace(&self, args: &Value) -> Result<Value, String> {
        let thread = self.stopped_thread(args)?;
        // Only the frames asked for are read: a deep recursion has
        // thousands.
        let total = self
            .jdwp
            .frame_count(thread)
            .await
            .map_err(|e| e.to_string())?;
        let start =
            (args.get("startFrame").and_then(Value::as_u64).unwrap_or(0) as usize).min(total);
        let levels = match args.get("levels").and_then(Value::as_u64) {
            Some(0) | None => FRAMES,
            Some(n) => (n as usize).min(FRAMES),
        };
        let frames = self
            .jdwp
            .frames(thread, start, levels.min(total - start))
            .await
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for (frame, location) in frames {
            let id = self.st().handle(Handle::Frame {
                thread,
                frame,
                location,
            });
            out.push(self.frame_json(id, &location).await);
        }
        Ok(json!({"stackFrames": out, "totalFrames": total}))
    }

    /// A frame as DAP shows it: `Class.method`, its source and line.
    async fn frame_json(&self, id: u64, location: &Location) -> Value {
        let info = self.class_info(location.class).await.unwrap_or_default();
        let method = self
            .methods(location.class)
            .await
            .unwrap_or_default()
            .into_iter()
            .find(|m| m.id == location.method)
            .map_or_else(|| "?".to_string(), |m| m.name);
        let line = self
            .line_table(location.class, location.method)
            .await
            .line_at(location.index)
            .unwrap_or(0);
        let class = values::type_name(&info.signature);
        let mut frame = json!({"id": id, "name": format!("{class}.{method}"), "line": line,
            "column": 0});
        if let Some(file) = &info.source {
            let source = match self.find_source(&info.signature, file) {
                Some(path) => json!({"name": file, "path": path}),
                None => json!({"name": file}),
            };
            frame["source"] = source;
        }
        frame
    }

    /// The workspace file a class's source file is: its package's folder
    /// under one of the program's source roots.
    fn find_source(&self, signature: &str, file: &str) -> Option<PathBuf> {
        let name = signature.trim_start_matches('L').trim_end_matches(';');
        let folder = name.rsplit_once('/').map_or("", |(p, _)| p);
        self.places
            .source_roots
            .iter()
            .map(|root| root.join(folder).join(file))
            .find(|p| p.is_file())
    }

    pub(super) fn scopes(&self, args: &Value) -> Result<Value, String> {
        let id = args.get("frameId").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut st = self.st();
        if !matches!(
            st.handles.get(id.wrapping_sub(1)),
            Some(Handle::Frame { .. })
        ) {
            return Err(format!("no frame {id} at this stop"));
        }
        let reference = st.handle(Handle::Locals(id - 1));
        Ok(
            json!({"scopes": [{"name": "Locals", "variablesReference": reference,
            "expensive": false}]}),
        )
    }

    pub(super) async fn variables(&self, args: &Value) -> Result<Value, String> {
        let id = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let handle = self.st().handles.get(id.wrapping_sub(1)).cloned();
        let named: Vec<(String, JdwpValue, String)> = match handle {
            Some(Handle::Locals(frame)) => self.locals(frame).await?,
            Some(Handle::Value(of)) => values::children(&self.jdwp, of)
                .await
                .map_err(|e| e.to_string())?,
            _ => return Err(format!("no variables reference {id} at this stop")),
        };
        let mut out = Vec::new();
        for (name, value, declared) in named {
            // One value the VM cannot read does not hide the others.
            let r = values::render(&self.jdwp, &value, &declared, true)
                .await
                .unwrap_or_else(|e| values::Rendered {
                    text: format!("<unreadable: {e}>"),
                    type_name: values::type_name(&declared),
                    expand: None,
                });
            let reference = r.expand.map_or(0, |e| self.st().handle(Handle::Value(e)));
            out.push(json!({"name": name, "value": r.text, "type": r.type_name,
                "variablesReference": reference}));
        }
        Ok(json!({ "variables": out }))
    }

    /// The frame's `this` (when not static) and the locals in scope at its
    /// code index, in slot order.
    async fn locals(
        &self,
        frame_handle: usize,
    ) -> Result<Vec<(String, JdwpValue, String)>, String> {
        let Some(Handle::Frame {
            thread,
            frame,
            location,
        }) = self.st().handles.get(frame_handle).cloned()
        else {
            return Err("that frame is from an earlier stop".into());
        };
        let method = self
            .methods(location.class)
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|m| m.id == location.method);
        let mut out = Vec::new();
        if method.as_ref().is_some_and(|m| m.mod_bits & 0x0008 == 0) {
            let this = self
                .jdwp
                .this_object(thread, frame)
                .await
                .map_err(|e| e.to_string())?;
            if this != 0 {
                out.push((
                    "this".to_string(),
                    JdwpValue {
                        tag: b'L',
                        bits: this,
                    },
                    String::new(),
                ));
            }
        }
        let table = match self
            .jdwp
            .variable_table(location.class, location.method)
            .await
        {
            Ok(t) => t,
            Err(e) if e.code() == Some(101) => {
                let class = self.class_info(location.class).await.unwrap_or_default();
                return Err(format!(
                    "{} has no local variable table (it was compiled without -g); `this` and fields are all there is",
                    values::class_name(&class.signature)
                ));
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut visible: Vec<_> = table
            .into_iter()
            .filter(|v| v.start <= location.index && location.index < v.start + v.length)
            .filter(|v| v.name != "this")
            .collect();
        visible.sort_by_key(|v| v.slot);
        let slots: Vec<(i32, u8)> = visible
            .iter()
            .map(|v| {
                (
                    v.slot,
                    v.signature.as_bytes().first().copied().unwrap_or(b'L'),
                )
            })
            .collect();
        let values = self
            .jdwp
            .frame_values(thread, frame, &slots)
            .await
            .map_err(|e| e.to_string())?;
        for (v, value) in visible.into_iter().zip(values) {
            out.push((v.name, value, v.signature));
        }
        Ok(out)
    }

    /// The exception the program is stopped at: its class and message.
    pub(super) async fn exception_info(&self) -> Result<Value, String> {
        let Some((object, caught)) = self.st().stop.as_ref().and_then(|s| s.exception) else {
            return Err("the program is not stopped at an exception".into());
        };
        let c = &self.jdwp;
        let class = c.object_class(object).await.map_err(|e| e.to_string())?;
        let name = values::class_name(&c.signature(class).await.map_err(|e| e.to_string())?);
        let fields = values::instance_fields(c, class)
            .await
            .map_err(|e| e.to_string())?;
        let mut message = String::new();
        if let Some(f) = fields.iter().find(|f| f.name == "detailMessage") {
            let v = c
                .object_values(object, &[f.id])
                .await
                .map_err(|e| e.to_string())?;
            if let Some(s) = v.first().filter(|v| v.bits != 0) {
                message = c.string_value(s.bits).await.map_err(|e| e.to_string())?;
            }
        }
        let mode = if caught { "always" } else { "unhandled" };
        Ok(json!({"exceptionId": name, "description": message, "breakMode": mode}))
    }
}

/// One step of a variable path: a field (or an array's `length`), or an
/// array element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Field(String),
    Index(usize),
}

/// `stats.name`, `xs[2]`, `this.calls`, `xs.length` as a variable and its
/// steps; `None` for anything else (a call, an operator).
pub(super) fn variable_path(expression: &str) -> Option<(String, Vec<Step>)> {
    let text = expression.trim();
    let ident_end = |s: &str| {
        s.char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
            .map_or(s.len(), |(i, _)| i)
    };
    let first = ident_end(text);
    if first == 0 || text.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (name, mut rest) = text.split_at(first);
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = ident_end(after);
            if end == 0 {
                return None;
            }
            steps.push(Step::Field(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let (index, tail) = after.split_once(']')?;
            steps.push(Step::Index(index.trim().parse().ok()?));
            rest = tail;
        } else {
            return None;
        }
    }
    Some((name.to_string(), steps))
}

impl Bridge {
    /// `evaluate` of a variable path in a frame: JDWP has no expression
    /// evaluator, so a local (or a field of `this`) and its fields and
    /// elements are what can be read; anything else is refused saying so.
    pub(super) async fn evaluate(&self, args: &Value) -> Result<Value, String> {
        let expression = args.get("expression").and_then(Value::as_str).unwrap_or("");
        let frame = if let Some(id) = args.get("frameId").and_then(Value::as_u64) {
            (id as usize)
                .checked_sub(1)
                .filter(|i| matches!(self.st().handles.get(*i), Some(Handle::Frame { .. })))
                .ok_or_else(|| format!("no frame {id} at this stop"))?
        } else {
            let thread = self.stopped_thread(&Value::Null)?;
            self.top_frame(thread).await?
        };
        let r = self.evaluate_in(frame, expression).await?;
        let reference = r.expand.map_or(0, |e| self.st().handle(Handle::Value(e)));
        Ok(json!({"result": r.text, "type": r.type_name, "variablesReference": reference}))
    }

    /// A handle to the top frame of a suspended `thread`.
    pub(super) async fn top_frame(&self, thread: u64) -> Result<usize, String> {
        let frames = self
            .jdwp
            .frames(thread, 0, 1)
            .await
            .map_err(|e| e.to_string())?;
        let (frame, location) = *frames.first().ok_or("the thread has no frames")?;
        Ok(self.st().handle(Handle::Frame {
            thread,
            frame,
            location,
        }) as usize
            - 1)
    }

    /// A variable path read in the frame whose handle is at `frame`.
    pub(super) async fn evaluate_in(
        &self,
        frame: usize,
        expression: &str,
    ) -> Result<values::Rendered, String> {
        let Some((name, steps)) = variable_path(expression) else {
            return Err(format!(
                "the java backend reads variables, their fields and elements (`xs[2]`, `stats.name`, `xs.length`), not `{}`: JDWP has no expression evaluator",
                expression.trim()
            ));
        };
        let locals = self.locals(frame).await?;
        let mut current = match locals.iter().find(|(n, _, _)| *n == name) {
            Some((_, v, sig)) => (*v, sig.clone()),
            None => self.field_of_this(&locals, &name).await?,
        };
        let mut path = name.clone();
        for step in steps {
            current = self.step_into(current, &step, &path).await?;
            match step {
                Step::Field(f) => path = format!("{path}.{f}"),
                Step::Index(i) => path = format!("{path}[{i}]"),
            }
        }
        values::render(&self.jdwp, &current.0, &current.1, true)
            .await
            .map_err(|e| e.to_string())
    }

    /// `name` as a field of the frame's `this`, or why it is neither a
    /// local nor such a field.
    async fn field_of_this(
        &self,
        locals: &[(String, JdwpValue, String)],
        name: &str,
    ) -> Result<(JdwpValue, String), String> {
        if let Some((_, this, _)) = locals.iter().find(|(n, _, _)| n == "this") {
            let fields = values::children(&self.jdwp, values::Expand::Object(this.bits))
                .await
                .map_err(|e| e.to_string())?;
            if let Some((_, v, sig)) = fields.into_iter().find(|(n, _, _)| n == name) {
                return Ok((v, sig));
            }
        }
        let names: Vec<&str> = locals.iter().map(|(n, _, _)| n.as_str()).collect();
        Err(format!(
            "`{name}` is not a local variable of that frame (nor a field of this); its locals: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ))
    }

    /// One step of a variable path from `value` (named `path` so far).
    async fn step_into(
        &self,
        (value, _): (JdwpValue, String),
        step: &Step,
        path: &str,
    ) -> Result<(JdwpValue, String), String> {
        let c = &self.jdwp;
        if !value.is_object() || value.bits == 0 || value.tag == b's' {
            return Err(format!("`{path}` has no fields or elements"));
        }
        match step {
            Step::Field(f) if value.tag == b'[' && f == "length" => {
                let n = c
                    .array_length(value.bits)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok((
                    JdwpValue {
                        tag: b'I',
                        bits: n as u64,
                    },
                    "I".into(),
                ))
            }
            Step::Index(i) if value.tag == b'[' => {
                let n = c
                    .array_length(value.bits)
                    .await
                    .map_err(|e| e.to_string())?;
                if *i >= n {
                    return Err(format!("`{path}` has {n} elements: [{i}] is out of bounds"));
                }
                let class = c
                    .object_class(value.bits)
                    .await
                    .map_err(|e| e.to_string())?;
                let sig = c.signature(class).await.map_err(|e| e.to_string())?;
                let v = c
                    .array_values(value.bits, *i, 1)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok((v[0], sig.get(1..).unwrap_or("").to_string()))
            }
            Step::Field(f) if value.tag != b'[' => {
                let fields = values::children(c, values::Expand::Object(value.bits))
                    .await
                    .map_err(|e| e.to_string())?;
                let names: Vec<String> = fields.iter().map(|(n, _, _)| n.clone()).collect();
                fields
                    .into_iter()
                    .find(|(n, _, _)| n == f)
                    .map(|(_, v, s)| (v, s))
                    .ok_or_else(|| {
                        format!(
                            "`{path}` has no field `{f}`; its fields: {}",
                            names.join(", ")
                        )
                    })
            }
            Step::Field(f) => Err(format!("`{path}` is an array: it has `length`, not `{f}`")),
            Step::Index(_) => Err(format!("`{path}` is not an array")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_paths_are_read_and_calls_are_not() {
        assert_eq!(
            variable_path(" stats.name "),
            Some(("stats".into(), vec![Step::Field("name".into())]))
        );
        assert_eq!(
            variable_path("xs[2]"),
            Some(("xs".into(), vec![Step::Index(2)]))
        );
        assert_eq!(
            variable_path("this.items[0].name"),
            Some((
                "this".into(),
                vec![
                    Step::Field("items".into()),
                    Step::Index(0),
                    Step::Field("name".into())
                ]
            ))
        );
        assert_eq!(variable_path("text.length()"), None);
        assert_eq!(variable_path("a + b"), None);
        assert_eq!(variable_path("2x"), None);
        assert_eq!(variable_path("xs[-1]"), None);
    }
}
