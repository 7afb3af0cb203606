//! Op `signature_help`: the signature of the call at a position, with the
//! active parameter marked `«…»`.
//!
//! Positions: `symbol` is either the called name (`greet` in `greet("x")`:
//! the server is asked just inside the parenthesis that follows it, so the
//! first parameter is active) or an argument (asked at the argument, so the
//! parameter it fills is active).
//!
//! Invariants: a server without `signatureHelpProvider` is refused by name;
//! a null answer says the position is not inside a call the server knows,
//! never an empty signature; at most [`SIGNATURES_CAP`] overloads are shown.

use crate::args::LspArgs;
use crate::position::{lines, PositionEncoding};
use crate::positioning::position;
use crate::supervisor::{LspSupervisor, Timeouts};
use serde_json::{json, Value};
use tool_core::{ToolError, ToolOutput};

pub(crate) const SIGNATURES_CAP: usize = 10;

/// The byte range of parameter `param` in signature label `label`: a
/// string label is found after the opening parenthesis, an offset pair is
/// in UTF-16 units (the protocol's).
fn param_range(label: &str, param: &Value) -> Option<(usize, usize)> {
    match param.get("label")? {
        Value::String(p) if !p.is_empty() => {
            let from = label.find('(').map_or(0, |i| i + 1);
            let at = label[from..].find(p.as_str())? + from;
            Some((at, at + p.len()))
        }
        Value::Array(pair) => {
            let s = pair.first()?.as_u64()? as u32;
            let e = pair.get(1)?.as_u64()? as u32;
            let enc = PositionEncoding::Utf16;
            Some((enc.byte_of(label, s), enc.byte_of(label, e)))
        }
        _ => None,
    }
}

fn doc_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(d) => crate::render::plain_text(&crate::render::raw_hover_contents(d)),
    }
}

/// One signature as text: its label with the active parameter marked, the
/// active parameter's own documentation, then the signature's.
pub(crate) fn render_signature(sig: &Value, active: Option<u64>) -> Vec<String> {
    let label = sig.get("label").and_then(Value::as_str).unwrap_or("?");
    let params = sig
        .get("parameters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let active = sig
        .get("activeParameter")
        .and_then(Value::as_u64)
        .or(active);
    let mut out = Vec::new();
    let marked = active
        .and_then(|i| params.get(i as usize))
        .and_then(|p| Some((p, param_range(label, p)?)));
    if let Some((param, (s, e))) = marked {
        out.push(format!("{}«{}»{}", &label[..s], &label[s..e], &label[e..]));
        let doc = doc_text(param.get("documentation"));
        let line = format!("active parameter: {}", &label[s..e]);
        out.push(if doc.is_empty() {
            line
        } else {
            format!("{line} — {}", doc.replace('\n', " "))
        });
    } else {
        out.push(label.to_string());
        if !params.is_empty() {
            out.push("no active parameter (the position is past the last one)".into());
        }
    }
    let doc = doc_text(sig.get("documentation"));
    if !doc.is_empty() {
        out.push(doc);
    }
    out
}

/// Give a signature the label `named` (its old label prefixed with the
/// callee's name, `shift` bytes), moving offset-pair parameter labels along.
fn name_callee(sig: &mut Value, named: &str, shift: usize) {
    let shift16 = named[..shift].encode_utf16().count() as u64;
    if let Some(params) = sig.get_mut("parameters").and_then(Value::as_array_mut) {
        for param in params {
            if let Some(pair) = param.get_mut("label").and_then(Value::as_array_mut) {
                for n in pair.iter_mut() {
                    if let Some(v) = n.as_u64() {
                        *n = json!(v + shift16);
                    }
                }
            }
        }
    }
    sig["label"] = json!(named);
}

/// Run `signature_help`.
pub(crate) async fn run(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let p = position(sup, t, args).await?;
    let client = &p.target.client;
    crate::read::capabilities::require(
        client,
        "signatureHelpProvider",
        "signature help",
        "op `hover` on the called name shows its signature",
    )?;
    // A called name: ask just inside its parenthesis.
    let line_text = lines(&p.text)[p.spot.line as usize];
    let end = p.spot.byte + p.spot.len;
    let rest = &line_text[end..];
    let called = rest.trim_start().starts_with('(');
    let byte = if called {
        end + (rest.len() - rest.trim_start().len()) + 1
    } else {
        p.spot.byte
    };
    let position =
        json!({"line": p.spot.line, "character": client.encoding.column_of(line_text, byte)});
    let v = client
        .request(
            "textDocument/signatureHelp",
            json!({"textDocument": {"uri": p.uri}, "position": position,
                   "context": {"triggerKind": 1, "isRetrigger": false}}),
            t.request,
        )
        .await
        .map_err(|e| e.into_tool_error(&client.name))?;
    let head = format!(
        "lsp signature_help  `{}` at {}:{}",
        p.symbol,
        p.file.shown,
        p.spot.line + 1
    );
    let mut sigs = v
        .get("signatures")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // basedpyright's labels start at the parenthesis: name the callee.
    if called {
        for sig in &mut sigs {
            let bare = sig
                .get("label")
                .and_then(Value::as_str)
                .filter(|l| l.starts_with('('));
            if let Some(label) = bare {
                name_callee(sig, &format!("{}{label}", p.symbol), p.symbol.len());
            }
        }
    }
    if sigs.is_empty() {
        return Ok(ToolOutput::text(format!(
            "{head}\nno signature here: the server is ready and `{}` is not a call's name or argument it knows (give the called name followed by `(`, or an argument)",
            p.symbol
        )));
    }
    let active_sig = v
        .get("activeSignature")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    let active_param = v.get("activeParameter").and_then(Value::as_u64);
    let mut out = vec![head];
    if sigs.len() == 1 {
        out.extend(render_signature(&sigs[0], active_param));
    } else {
        out[0].push_str(&format!(" — {} overloads", sigs.len()));
        for (i, sig) in sigs.iter().take(SIGNATURES_CAP).enumerate() {
            let mark = if i == active_sig { " (active)" } else { "" };
            out.push(format!("{}.{mark}", i + 1));
            out.extend(render_signature(
                sig,
                active_param.filter(|_| i == active_sig),
            ));
        }
        if sigs.len() > SIGNATURES_CAP {
            out.push(tool_core::format::capped_note(
                SIGNATURES_CAP,
                sigs.len(),
                "",
            ));
        }
    }
    Ok(ToolOutput::text(out.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_parameter_is_marked_by_string_or_offsets() {
        let sig = json!({"label": "greet(name: str, times: int) -> str",
            "parameters": [{"label": "name: str"}, {"label": [17, 27], "documentation": "How often."}],
            "documentation": {"kind": "markdown", "value": "Say hello."}});
        assert_eq!(
            render_signature(&sig, Some(0)),
            vec![
                "greet(«name: str», times: int) -> str",
                "active parameter: name: str",
                "Say hello."
            ]
        );
        assert_eq!(
            render_signature(&sig, Some(1)),
            vec![
                "greet(name: str, «times: int») -> str",
                "active parameter: times: int — How often.",
                "Say hello."
            ]
        );
        assert_eq!(
            render_signature(&sig, Some(5))[1],
            "no active parameter (the position is past the last one)"
        );
    }
}
