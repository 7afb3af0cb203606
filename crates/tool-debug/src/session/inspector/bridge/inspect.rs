//! What a stop shows, answered from the paused call frames: the stack
//! (Node's own frames left out, compiled places read through source
//! maps), scopes with `Locals` as the code sees them, variables,
//! evaluation in a frame, setting a variable, and the exception stopped at.

use super::{frame_url, has_program_frame, Bridge, Handle, State};
use crate::adapters::node::url_path;
use crate::session::inspector::cdp::{self, RemoteObject};
use crate::session::inspector::render;
use serde_json::{json, Value};

/// Variables listed for one object at most.
const VARIABLES_CAP: usize = 1000;

impl Bridge {
    /// The paused call frame a DAP frame id names.
    fn frame(&self, frame_id: u64) -> Result<(usize, cdp::CallFrame), String> {
        let st = self.st();
        let paused = st.paused.as_ref().ok_or("the program is not paused")?;
        let (generation, index) = (frame_id / 10_000, (frame_id % 10_000) as usize);
        if generation != st.stop_generation || index == 0 {
            return Err(format!("frame {frame_id} is from an earlier stop"));
        }
        paused
            .call_frames
            .get(index - 1)
            .cloned()
            .map(|f| (index - 1, f))
            .ok_or_else(|| format!("no frame {frame_id}"))
    }

    pub(super) fn stack_trace(&self, args: &Value) -> Result<Value, String> {
        // Maps are read only once a paused script names one.
        let any_mapped = {
            let st = self.st();
            st.paused.as_ref().is_some_and(|p| {
                p.call_frames
                    .iter()
                    .any(|f| st.mapped_scripts.contains(&f.location.script_id))
            })
        };
        let maps = any_mapped.then(|| self.maps());
        let st = self.st();
        let paused = st.paused.as_ref().ok_or("the program is not paused")?;
        let start = args.get("startFrame").and_then(Value::as_u64).unwrap_or(0) as usize;
        let levels = match args.get("levels").and_then(Value::as_u64).unwrap_or(0) {
            0 => usize::MAX,
            n => n as usize,
        };
        // Node's own frames (`node:internal/…`) are left out, as an IDE
        // skips them: the program's frames are the story. A stop with no
        // frame of the program's (an ES module's uncaught exception is
        // rethrown by Node's loader) shows Node's.
        let shown = |f: &cdp::CallFrame| {
            !frame_url(&st, f).starts_with("node:") || !has_program_frame(&st, paused)
        };
        let frames: Vec<Value> = paused
            .call_frames
            .iter()
            .enumerate()
            .filter(|(_, f)| shown(f))
            .skip(start)
            .take(levels)
            .map(|(i, f)| {
                let url = frame_url(&st, f);
                let mut line = f.location.line_number;
                let mut path = url_path(&url);
                // A compiled script's place as its source's (TypeScript).
                let original = path.as_deref().and_then(|p| {
                    maps.as_deref()?
                        .for_script(p)?
                        .original(line, f.location.column_number.unwrap_or(0))
                });
                if let Some((source_path, source_line)) = original {
                    path = Some(source_path);
                    line = source_line;
                }
                let source = match path {
                    Some(p) => json!({"name": p.file_name().map(|n| n.to_string_lossy().into_owned()), "path": p}),
                    None => json!({"name": url, "presentationHint": "deemphasize"}),
                };
                let name = if !f.function_name.is_empty() {
                    f.function_name.as_str()
                } else if is_module_body(&st, paused, i) {
                    "<module>"
                } else {
                    "(anonymous)"
                };
                json!({
                    "id": st.stop_generation * 10_000 + i as u64 + 1,
                    "name": name,
                    "source": source,
                    "line": line + 1,
                    "column": f.location.column_number.unwrap_or(0) + 1,
                })
            })
            .collect();
        let total = paused.call_frames.iter().filter(|f| shown(f)).count();
        Ok(json!({"stackFrames": frames, "totalFrames": total}))
    }

    fn handle(&self, h: Handle) -> u64 {
        let mut st = self.st();
        st.handles.push(h);
        st.stop_generation * 100_000 + st.handles.len() as u64
    }

    fn resolve(&self, reference: u64) -> Result<Handle, String> {
        let st = self.st();
        let (generation, index) = (reference / 100_000, (reference % 100_000) as usize);
        if generation != st.stop_generation || index == 0 {
            return Err(format!("reference {reference} is from an earlier stop"));
        }
        st.handles
            .get(index - 1)
            .cloned()
            .ok_or_else(|| format!("no reference {reference}"))
    }

    pub(super) fn scopes(&self, args: &Value) -> Result<Value, String> {
        let frame_id = args.get("frameId").and_then(Value::as_u64).unwrap_or(0);
        let (frame, f) = self.frame(frame_id)?;
        // The innermost blocks and the function's (or module's) own scope
        // read as one: what the code at this line sees as its locals.
        let own = f
            .scope_chain
            .iter()
            .position(|s| matches!(s.type_.as_str(), "local" | "module"))
            .unwrap_or(0);
        let own_is_local = f.scope_chain.iter().take(own + 1).all(|s| {
            matches!(
                s.type_.as_str(),
                "local" | "module" | "block" | "catch" | "with"
            )
        });
        let mut scopes = Vec::new();
        let mut rest_from = 0;
        if own_is_local && !f.scope_chain.is_empty() {
            let ids = f
                .scope_chain
                .iter()
                .enumerate()
                .take(own + 1)
                .filter_map(|(n, s)| s.object.object_id.clone().map(|id| (n, id)))
                .collect();
            let r = self.handle(Handle::Scopes { frame, scopes: ids });
            scopes.push(json!({"name": "Locals", "variablesReference": r, "expensive": false}));
            rest_from = own + 1;
        }
        for (n, s) in f.scope_chain.iter().enumerate().skip(rest_from) {
            let Some(id) = s.object.object_id.clone() else {
                continue;
            };
            let mut name = capitalized(&s.type_);
            if let Some(owner) = s.name.as_deref().filter(|n| !n.is_empty()) {
                name = format!("{name} ({owner})");
            }
            let r = self.handle(Handle::Scopes {
                frame,
                scopes: vec![(n, id)],
            });
            scopes.push(json!({"name": name, "variablesReference": r,
                "expensive": s.type_ == "global"}));
        }
        Ok(json!({ "scopes": scopes }))
    }

    async fn properties(&self, object_id: &str) -> Result<cdp::Properties, String> {
        self.cdp
            .call(&cdp::GetProperties {
                object_id: object_id.to_string(),
                own_properties: true,
                generate_preview: true,
            })
            .await
            .map_err(|e| e.to_string())
    }

    fn variable(&self, frame: usize, name: &str, value: &RemoteObject) -> Value {
        let reference = match (&value.object_id, render::expandable(value)) {
            (Some(id), true) => self.handle(Handle::Object {
                frame,
                object_id: id.clone(),
            }),
            _ => 0,
        };
        json!({"name": name, "value": render::value(value), "type": render::type_name(value),
            "variablesReference": reference})
    }

    pub(super) async fn variables(&self, args: &Value) -> Result<Value, String> {
        let reference = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut out = Vec::new();
        match self.resolve(reference)? {
            Handle::Scopes { frame, scopes } => {
                // Inner scopes shadow outer ones; names sorted, as the
                // DAP adapters list a frame's variables.
                let mut seen = std::collections::BTreeMap::new();
                let module_body = {
                    let st = self.st();
                    st.paused
                        .as_ref()
                        .is_some_and(|p| is_module_body(&st, p, frame))
                };
                for (_, id) in scopes {
                    for p in self.properties(&id).await?.result {
                        // A CommonJS module's wrapper parameters are in
                        // every module: noise among its own variables
                        // (evaluate still reaches them).
                        if module_body && COMMONJS_WRAPPER.contains(&p.name.as_str()) {
                            continue;
                        }
                        if let Some(v) = p.value {
                            seen.entry(p.name).or_insert(v);
                        }
                    }
                }
                for (name, v) in &seen {
                    out.push(self.variable(frame, name, v));
                }
            }
            Handle::Object { frame, object_id } => {
                let props = self.properties(&object_id).await?;
                for p in props.result.iter().filter(|p| p.name != "__proto__") {
                    match (&p.value, &p.get) {
                        (Some(v), _) => out.push(self.variable(frame, &p.name, v)),
                        (None, Some(_)) => out.push(json!({"name": p.name, "value": "(getter)",
                            "variablesReference": 0})),
                        _ => {}
                    }
                }
                for p in props
                    .internal_properties
                    .iter()
                    .filter(|p| p.name != "[[Prototype]]")
                {
                    if let Some(v) = &p.value {
                        out.push(self.variable(frame, &p.name, v));
                    }
                }
            }
        }
        out.truncate(VARIABLES_CAP);
        Ok(json!({ "variables": out }))
    }

    /// Evaluate `expression` in a paused frame (or the global scope).
    async fn evaluate_in(
        &self,
        frame: Option<&cdp::CallFrame>,
        expression: &str,
    ) -> Result<RemoteObject, String> {
        let answer = match frame {
            Some(f) => {
                self.cdp
                    .call(&cdp::EvaluateOnCallFrame {
                        call_frame_id: f.call_frame_id.clone(),
                        expression: expression.to_string(),
                        generate_preview: true,
                    })
                    .await
            }
            None => {
                self.cdp
                    .call(&cdp::Evaluate {
                        expression: expression.to_string(),
                        generate_preview: Some(true),
                    })
                    .await
            }
        }
        .map_err(|e| e.to_string())?;
        match answer.exception_details {
            Some(d) => Err(d.message()),
            None => Ok(answer.result),
        }
    }

    pub(super) async fn evaluate(&self, args: &Value) -> Result<Value, String> {
        let expression = args
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let frame = match args.get("frameId").and_then(Value::as_u64) {
            Some(id) => Some(self.frame(id)?),
            None => None,
        };
        let result = self
            .evaluate_in(frame.as_ref().map(|(_, f)| f), expression)
            .await?;
        let v = self.variable(frame.map_or(0, |(i, _)| i), "", &result);
        Ok(
            json!({"result": v["value"], "type": v["type"], "variablesReference": v["variablesReference"]}),
        )
    }

    pub(super) async fn set_variable(&self, args: &Value) -> Result<Value, String> {
        let reference = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
        let expression = args
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let handle = self.resolve(reference)?;
        let frame_index = match &handle {
            Handle::Scopes { frame, .. } | Handle::Object { frame, .. } => *frame,
        };
        let frame = {
            let st = self.st();
            st.paused
                .as_ref()
                .and_then(|p| p.call_frames.get(frame_index).cloned())
                .ok_or("the program is not paused")?
        };
        let new = self.evaluate_in(Some(&frame), expression).await?;
        let set = match handle {
            Handle::Scopes { scopes, .. } => {
                let mut holder = None;
                for (n, id) in &scopes {
                    if self
                        .properties(id)
                        .await?
                        .result
                        .iter()
                        .any(|p| p.name == name)
                    {
                        holder = Some(*n);
                        break;
                    }
                }
                let scope_number = holder.ok_or_else(|| format!("no variable `{name}` here"))?;
                self.cdp
                    .call(&cdp::SetVariableValue {
                        scope_number,
                        variable_name: name.to_string(),
                        new_value: cdp::CallArgument::of(&new),
                        call_frame_id: frame.call_frame_id.clone(),
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                new
            }
            Handle::Object { object_id, .. } => {
                let answer = self
                    .cdp
                    .call(&cdp::CallFunctionOn {
                        function_declaration: "function (k, v) { this[k] = v; return this[k]; }"
                            .into(),
                        object_id,
                        arguments: vec![
                            cdp::CallArgument {
                                value: Some(json!(name)),
                                ..Default::default()
                            },
                            cdp::CallArgument::of(&new),
                        ],
                        generate_preview: true,
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(d) = answer.exception_details {
                    return Err(d.message());
                }
                answer.result
            }
        };
        let v = self.variable(frame_index, name, &set);
        Ok(
            json!({"value": v["value"], "type": v["type"], "variablesReference": v["variablesReference"]}),
        )
    }

    pub(super) fn exception_info(&self) -> Result<Value, String> {
        let st = self.st();
        let e = st
            .exception
            .as_ref()
            .ok_or("the program is not stopped at an exception")?;
        let (id, mut description) = exception_words(e);
        let in_loader = st
            .paused
            .as_ref()
            .is_some_and(|p| !has_program_frame(&st, p));
        if in_loader {
            if let Some(at) = thrown_at(e) {
                description.push_str(&format!(
                    " (thrown at {at}; Node's module loader rethrew it, so the program's frames are gone: set a breakpoint there, or use the `all` filter to stop at the throw)"
                ));
            }
        }
        let mode = if e.uncaught == Some(true) {
            "unhandled"
        } else {
            "always"
        };
        Ok(json!({"exceptionId": id, "description": description, "breakMode": mode}))
    }
}

/// An exception as its class and message: `TypeError` and `x is not a
/// function`; a thrown value that is not an error as its type and value.
fn exception_words(e: &RemoteObject) -> (String, String) {
    if e.subtype.as_deref() == Some("error") || e.type_ == "object" {
        let head = e
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or_default();
        if let Some((name, message)) = head.split_once(": ") {
            if !name.is_empty() && !name.contains(' ') {
                return (name.to_string(), message.to_string());
            }
        }
        if e.subtype.as_deref() == Some("error") {
            return (head.to_string(), String::new());
        }
    }
    (format!("thrown {}", render::type_name(e)), render::value(e))
}

/// The parameters Node's CommonJS loader wraps every module's code in.
const COMMONJS_WRAPPER: [&str; 5] = ["exports", "require", "module", "__filename", "__dirname"];

/// Whether frame `i` is a module's top-level code: a nameless function
/// that Node's module loader called (CommonJS), or a module scope (ESM).
fn is_module_body(st: &State, paused: &cdp::Paused, i: usize) -> bool {
    let Some(f) = paused.call_frames.get(i) else {
        return false;
    };
    if !f.function_name.is_empty() {
        return false;
    }
    let called_by_loader = paused
        .call_frames
        .get(i + 1)
        .is_some_and(|caller| frame_url(st, caller).starts_with("node:internal/modules/"));
    let module_scope = f
        .scope_chain
        .iter()
        .find(|s| s.type_ != "block")
        .is_some_and(|s| s.type_ == "module");
    called_by_loader || module_scope
}

/// Where an exception was thrown, from its stack: `slugify
/// (/w/index.js:44:9)`.
fn thrown_at(e: &RemoteObject) -> Option<String> {
    let frame = e
        .description
        .as_deref()?
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("at "))?;
    Some(frame.replace("file://", ""))
}

fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_read_as_class_and_message() {
        let read = |v: Value| exception_words(&serde_json::from_value(v).unwrap());
        assert_eq!(
            read(
                json!({"type": "object", "subtype": "error", "className": "TypeError",
                "description": "TypeError: x is not a function\n    at f (/w/a.js:1:1)"})
            ),
            ("TypeError".into(), "x is not a function".into())
        );
        assert_eq!(
            read(json!({"type": "string", "value": "boom"})),
            ("thrown string".into(), "\"boom\"".into())
        );
    }
}
