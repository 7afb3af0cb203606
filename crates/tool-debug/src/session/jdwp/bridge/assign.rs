//! `setVariable` over JDWP: a local of a frame (`StackFrame.SetValues`), a
//! field of an object (`ObjectReference.SetValues`) or an element of an
//! array (`ArrayReference.SetValues`) gets a literal of its type: a
//! number, `true`/`false`, a `'c'` character, a `"…"` string (made in the
//! JVM with `VirtualMachine.CreateString`) or `null` for a reference.
//!
//! Invariant: a value that is not a literal of the variable's type is
//! refused before anything is written, naming the type.

use super::values::{self, Expand};
use super::{Bridge, Handle};
use crate::session::jdwp::wire::Value as JdwpValue;
use serde_json::{json, Value};

/// Where the variable lives.
enum Place {
    Local { thread: u64, frame: u64, slot: i32 },
    Field { object: u64, field: u64 },
    Element { array: u64, index: usize },
}

/// `text` as a value of the type `signature`; `Err` says what it takes.
pub(super) fn literal(text: &str, signature: &str) -> Result<Option<JdwpValue>, String> {
    let text = text.trim();
    let tag = signature.as_bytes().first().copied().unwrap_or(b'L');
    let refuse = || {
        let name = values::type_name(signature);
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("`{text}` is not {article} {name} literal")
    };
    let integer = |bits: u32| -> Result<u64, String> {
        let n: i64 = text.parse().map_err(|_| refuse())?;
        let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
        if i128::from(n) < min || i128::from(n) > max {
            return Err(format!(
                "{text} does not fit in a {}",
                values::type_name(signature)
            ));
        }
        Ok((n as u64) & (u64::MAX >> (64 - bits)))
    };
    let bits = match tag {
        b'Z' => match text {
            "true" => 1,
            "false" => 0,
            _ => return Err(refuse()),
        },
        b'B' => integer(8)?,
        b'S' => integer(16)?,
        b'I' => integer(32)?,
        b'J' => integer(64)?,
        b'C' => {
            let inner = text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .ok_or_else(refuse)?;
            let mut chars = inner.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if (c as u32) <= 0xFFFF => u64::from(c as u32),
                _ => return Err(refuse()),
            }
        }
        b'F' => u64::from(text.trim_end_matches(['f', 'F']).parse::<f32>().map_err(|_| refuse())?.to_bits()),
        b'D' => text.trim_end_matches(['d', 'D']).parse::<f64>().map_err(|_| refuse())?.to_bits(),
        _ if text == "null" => 0,
        // A string is made in the JVM first: the caller does it.
        _ if signature == "Ljava/lang/String;" => return Ok(None),
        _ => {
            return Err(format!(
                "a {} can be set to null only: the java backend makes numbers, characters, booleans and strings, not objects",
                values::type_name(signature)
            ))
        }
    };
    Ok(Some(JdwpValue { tag, bits }))
}

/// A `"…"` literal's text (`\n`, `\t`, `\"`, `\\` read).
fn string_literal(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            other => other,
        });
    }
    Some(out)
}

impl Bridge {
    pub(super) async fn set_variable(&self, args: &Value) -> Result<Value, String> {
        let reference = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        let text = args.get("value").and_then(Value::as_str).unwrap_or("");
        let handle = self.st().handles.get(reference.wrapping_sub(1)).cloned();
        let (place, signature) = match handle {
            Some(Handle::Locals(frame)) => self.local_place(frame, name).await?,
            Some(Handle::Value(of)) => self.member_place(of, name).await?,
            _ => return Err(format!("no variables reference {reference} at this stop")),
        };
        let c = &self.jdwp;
        let value = if let Some(v) = literal(text, &signature)? {
            v
        } else {
            let s = string_literal(text).ok_or_else(|| {
                format!(
                    "`{}` is not a String literal: write it in double quotes, or null",
                    text.trim()
                )
            })?;
            JdwpValue {
                tag: b's',
                bits: c.create_string(&s).await.map_err(|e| e.to_string())?,
            }
        };
        let written = match place {
            Place::Local {
                thread,
                frame,
                slot,
            } => c.set_frame_value(thread, frame, slot, &value).await,
            Place::Field { object, field } => c.set_field_value(object, field, &value).await,
            Place::Element { array, index } => c.set_element_value(array, index, &value).await,
        };
        written.map_err(|e| e.to_string())?;
        let r = values::render(c, &value, &signature, true)
            .await
            .map_err(|e| e.to_string())?;
        let reference = r.expand.map_or(0, |e| self.st().handle(Handle::Value(e)));
        Ok(json!({"value": r.text, "type": r.type_name, "variablesReference": reference}))
    }

    /// The slot of the local `name` visible in a frame.
    async fn local_place(&self, frame: usize, name: &str) -> Result<(Place, String), String> {
        let Some(Handle::Frame {
            thread,
            frame,
            location,
        }) = self.st().handles.get(frame).cloned()
        else {
            return Err("that frame is from an earlier stop".into());
        };
        if name == "this" {
            return Err("`this` cannot be set; set its fields through its reference".into());
        }
        let table = self
            .jdwp
            .variable_table(location.class, location.method)
            .await
            .map_err(|e| e.to_string())?;
        let v = table
            .into_iter()
            .find(|v| {
                v.name == name && v.start <= location.index && location.index < v.start + v.length
            })
            .ok_or_else(|| format!("no local `{name}` is in scope there"))?;
        Ok((
            Place::Local {
                thread,
                frame,
                slot: v.slot,
            },
            v.signature,
        ))
    }

    /// The field `name` of an object, or the element `[i]` of an array.
    async fn member_place(&self, of: Expand, name: &str) -> Result<(Place, String), String> {
        let c = &self.jdwp;
        match of {
            Expand::Object(object) => {
                let class = c.object_class(object).await.map_err(|e| e.to_string())?;
                let fields = values::instance_fields(c, class)
                    .await
                    .map_err(|e| e.to_string())?;
                let f = fields
                    .into_iter()
                    .find(|f| f.name == name)
                    .ok_or_else(|| format!("the object has no field `{name}`"))?;
                Ok((
                    Place::Field {
                        object,
                        field: f.id,
                    },
                    f.signature,
                ))
            }
            Expand::Array(array) => {
                let index: usize = name
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .map_err(|_| format!("`{name}` is not an element: write [0], [1], …"))?;
                let class = c.object_class(array).await.map_err(|e| e.to_string())?;
                let signature = c.signature(class).await.map_err(|e| e.to_string())?;
                Ok((
                    Place::Element { array, index },
                    signature.get(1..).unwrap_or("").to_string(),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_fit_their_type_or_are_refused() {
        let v = |t: &str, s: &str| literal(t, s).unwrap().unwrap().bits;
        assert_eq!(v("100", "I"), 100);
        assert_eq!(v("-1", "I"), 0xFFFF_FFFF);
        assert_eq!(v("-1", "B"), 0xFF);
        assert_eq!(v("true", "Z"), 1);
        assert_eq!(v("'x'", "C"), u64::from('x'));
        assert_eq!(v("2.5", "D"), 2.5f64.to_bits());
        assert_eq!(v("null", "Ljava/util/List;"), 0);
        assert_eq!(literal("\"hi\"", "Ljava/lang/String;").unwrap(), None);
        assert_eq!(
            literal("300", "B").unwrap_err(),
            "300 does not fit in a byte"
        );
        assert_eq!(literal("x", "I").unwrap_err(), "`x` is not an int literal");
        assert!(literal("new Foo()", "LFoo;")
            .unwrap_err()
            .contains("null only"));
        assert_eq!(string_literal(r#""a\"b\n""#).as_deref(), Some("a\"b\n"));
    }
}
