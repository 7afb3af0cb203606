//! Ops `incoming_calls`, `outgoing_calls` (call hierarchy) and `supertypes`,
//! `subtypes` (type hierarchy): prepare the item at a position given by line
//! and symbol, then ask for its callers, callees or related types.
//!
//! Invariants: a server that does not advertise the hierarchy is refused by
//! name before anything is asked; an empty answer says the server is ready
//! and found none (never "no callers" for "not asked"); every list is capped
//! with the rest counted.

use crate::args::{LspArgs, Op, REFERENCES_CAP};
use crate::client::RequestError;
use crate::enclosing;
use crate::format::{self, Loc};
use crate::request::{position, Positioned};
use crate::supervisor::{LspSupervisor, Timeouts};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tool_core::format::plural;
use tool_core::{ToolError, ToolOutput};

/// What each op asks: the capability, the prepare request, the follow-up.
struct Ask {
    capability: &'static str,
    what: &'static str,
    prepare: &'static str,
    follow: &'static str,
    alternative: &'static str,
}

fn ask(op: Op) -> Ask {
    let calls = |follow| Ask {
        capability: "callHierarchyProvider",
        what: "call hierarchy",
        prepare: "textDocument/prepareCallHierarchy",
        follow,
        alternative: "op `references` lists every use instead",
    };
    let types = |follow| Ask {
        capability: "typeHierarchyProvider",
        what: "type hierarchy",
        prepare: "textDocument/prepareTypeHierarchy",
        follow,
        alternative:
            "op `implementation` (subtypes) or `hover` (the declaration) may answer instead",
    };
    match op {
        Op::IncomingCalls => calls("callHierarchy/incomingCalls"),
        Op::OutgoingCalls => calls("callHierarchy/outgoingCalls"),
        Op::Supertypes => types("typeHierarchy/supertypes"),
        _ => types("typeHierarchy/subtypes"),
    }
}

/// The start of an item's name (`selectionRange`) as a location.
fn item_loc(sup: &LspSupervisor, item: &Value, range_key: &str) -> Option<Loc> {
    let path = item
        .get("uri")
        .and_then(Value::as_str)
        .and_then(crate::client::uri_path)?;
    range_loc(
        sup,
        &path,
        item.get(range_key).or_else(|| item.get("range"))?,
    )
}

fn range_loc(sup: &LspSupervisor, path: &std::path::Path, range: &Value) -> Option<Loc> {
    Some(Loc {
        shown: format::show_path(sup.workspace(), path),
        path: path.to_path_buf(),
        line: range.pointer("/start/line")?.as_u64()? as u32,
        character: range.pointer("/start/character")?.as_u64()? as u32,
    })
}

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

fn none_here(head: &str, ask: &Ask, p: &Positioned) -> String {
    format!(
        "{head}\nno {} item here: the server is ready and `{}` is not a {} it knows",
        ask.what,
        p.symbol,
        if ask.capability == "callHierarchyProvider" {
            "function or method"
        } else {
            "type"
        }
    )
}

/// clangd's own `textDocument/typeHierarchy` (before LSP 3.17's): one
/// request resolving one level of parents (direction 1) or children (0).
/// None when there is no type at the position.
async fn legacy_types(
    t: &Timeouts,
    p: &Positioned,
    op: Op,
) -> Result<Option<Vec<Value>>, ToolError> {
    let client = &p.target.client;
    let (direction, key) = if op == Op::Supertypes {
        (1, "parents")
    } else {
        (0, "children")
    };
    let v = client
        .request(
            "textDocument/typeHierarchy",
            json!({"textDocument": {"uri": p.uri}, "position": p.position, "resolve": 1, "direction": direction}),
            t.request,
        )
        .await
        .map_err(|e| e.into_tool_error(&client.name))?;
    if v.is_null() {
        return Ok(None);
    }
    Ok(Some(
        v.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    ))
}

/// Run one of the four hierarchy ops.
pub async fn run(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let ask = ask(args.op);
    let p = position(sup, t, args).await?;
    let client = &p.target.client;
    crate::capabilities::require(client, ask.capability, ask.what, ask.alternative)?;
    let head = format!(
        "lsp {}  `{}` at {}:{}",
        args.op.name(),
        p.symbol,
        p.file.shown,
        p.spot.line + 1
    );
    let prepared = client
        .request(
            ask.prepare,
            json!({"textDocument": {"uri": p.uri}, "position": p.position}),
            t.request,
        )
        .await;
    let answers = match prepared {
        // clangd before 17 advertises its own, older type hierarchy.
        Err(RequestError::Rpc {
            code: METHOD_NOT_FOUND,
            ..
        }) if ask.capability == "typeHierarchyProvider" => {
            match legacy_types(t, &p, args.op).await? {
                Some(types) => types,
                None => return Ok(ToolOutput::text(none_here(&head, &ask, &p))),
            }
        }
        prepared => {
            let items = prepared.map_err(|e| e.into_tool_error(&client.name))?;
            let items: Vec<Value> = items.as_array().cloned().unwrap_or_default();
            if items.is_empty() {
                return Ok(ToolOutput::text(none_here(&head, &ask, &p)));
            }
            let mut answers = Vec::new();
            for item in &items {
                let v = match client
                    .request(ask.follow, json!({"item": item}), t.request)
                    .await
                {
                    // clangd before 20 advertises call hierarchy with incoming calls only.
                    Err(RequestError::Rpc {
                        code: METHOD_NOT_FOUND,
                        ..
                    }) => {
                        return Err(ToolError::unavailable(format!(
                            "{} advertises {} but does not implement `{}` (method not found); {}",
                            client.name, ask.what, ask.follow, ask.alternative
                        )))
                    }
                    v => v.map_err(|e| e.into_tool_error(&client.name))?,
                };
                answers.extend(v.as_array().cloned().unwrap_or_default());
            }
            answers
        }
    };
    match args.op {
        Op::IncomingCalls => incoming(sup, t, &p, &head, &answers).await,
        Op::OutgoingCalls => Ok(outgoing(sup, &p, &head, &answers)),
        _ => Ok(types(sup, args.op, &head, &answers)),
    }
}

/// Callers: each call site, with the caller that holds it.
async fn incoming(
    sup: &LspSupervisor,
    t: &Timeouts,
    p: &Positioned,
    head: &str,
    calls: &[Value],
) -> Result<ToolOutput, ToolError> {
    // Call sites by line: two calls on one line are one row, counted.
    let mut sites: BTreeMap<(String, u32), (Loc, String, usize)> = BTreeMap::new();
    for call in calls {
        let Some(from) = call.get("from") else {
            continue;
        };
        let caller = from.get("name").and_then(Value::as_str).unwrap_or("?");
        let Some(path) = from
            .get("uri")
            .and_then(Value::as_str)
            .and_then(crate::client::uri_path)
        else {
            continue;
        };
        let ranges = call
            .get("fromRanges")
            .and_then(Value::as_array)
            .filter(|r| !r.is_empty());
        let found: Vec<Loc> = match ranges {
            Some(ranges) => ranges
                .iter()
                .filter_map(|r| range_loc(sup, &path, r))
                .collect(),
            None => item_loc(sup, from, "selectionRange").into_iter().collect(),
        };
        for loc in found {
            let site = sites
                .entry((loc.shown.clone(), loc.line))
                .or_insert_with(|| (loc.clone(), caller.to_string(), 0));
            site.2 += 1;
        }
    }
    if sites.is_empty() {
        return Ok(ToolOutput::text(format!(
            "{head}\nno callers found (the server is ready and answered with none)"
        )));
    }
    let calls_total: usize = sites.values().map(|s| s.2).sum();
    let (locs, callers): (Vec<Loc>, Vec<(String, usize)>) =
        sites.into_values().map(|(l, c, n)| (l, (c, n))).unzip();
    // The caller as the file's symbols name it (`Greeter/say`), else as the
    // server's call hierarchy does.
    let scoped = enclosing::names(sup, t, &p.target, &locs, REFERENCES_CAP).await;
    let suffixes: Vec<Option<String>> = callers
        .iter()
        .zip(scoped.into_iter().chain(std::iter::repeat(None)))
        .map(|((caller, n), scoped)| {
            let times = if *n > 1 {
                format!(", {n} calls")
            } else {
                String::new()
            };
            Some(format!("(in {}{times})", scoped.unwrap_or(caller.clone())))
        })
        .collect();
    let distinct: std::collections::BTreeSet<&String> = callers.iter().map(|(c, _)| c).collect();
    let summary = format!(
        "{} from {}",
        plural(calls_total, "call", "calls"),
        plural(distinct.len(), "caller", "callers")
    );
    let rows = format::render_locations_with(
        &locs,
        &suffixes,
        REFERENCES_CAP,
        "narrow to one caller's file with op `references`",
    );
    Ok(ToolOutput::text(format!(
        "{head} — {summary}\n{}",
        rows.join("\n")
    )))
}

/// Callees: each function called, where it is declared, and where it is
/// called from in the symbol's body.
fn outgoing(sup: &LspSupervisor, p: &Positioned, head: &str, calls: &[Value]) -> ToolOutput {
    let mut callees: BTreeMap<Loc, (String, Vec<u32>)> = BTreeMap::new();
    for call in calls {
        let Some(to) = call.get("to") else { continue };
        let Some(loc) = item_loc(sup, to, "selectionRange") else {
            continue;
        };
        let name = to.get("name").and_then(Value::as_str).unwrap_or("?");
        let entry = callees
            .entry(loc)
            .or_insert_with(|| (name.to_string(), Vec::new()));
        for r in call
            .get("fromRanges")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(l) = r.pointer("/start/line").and_then(Value::as_u64) {
                entry.1.push(l as u32 + 1);
            }
        }
    }
    if callees.is_empty() {
        return ToolOutput::text(format!(
            "{head}\nno calls found (the server is ready and answered with none)"
        ));
    }
    let (locs, named): (Vec<Loc>, Vec<(String, Vec<u32>)>) = callees.into_iter().unzip();
    let suffixes: Vec<Option<String>> = named
        .into_iter()
        .map(|(name, mut lines)| {
            lines.sort_unstable();
            lines.dedup();
            let at: Vec<String> = lines
                .iter()
                .map(|l| format!("{}:{l}", p.file.shown))
                .collect();
            Some(if at.is_empty() {
                format!("({name})")
            } else {
                format!("({name}, called at {})", at.join(", "))
            })
        })
        .collect();
    let summary = plural(locs.len(), "callee", "callees");
    let rows = format::render_locations_with(
        &locs,
        &suffixes,
        REFERENCES_CAP,
        "look at the body with op `symbols`",
    );
    ToolOutput::text(format!("{head} — {summary}\n{}", rows.join("\n")))
}

/// Supertypes or subtypes: each type where it is declared, with its kind.
fn types(sup: &LspSupervisor, op: Op, head: &str, items: &[Value]) -> ToolOutput {
    let mut found: BTreeMap<Loc, String> = BTreeMap::new();
    for item in items {
        let Some(loc) = item_loc(sup, item, "selectionRange") else {
            continue;
        };
        let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
        let kind = format::kind_name(item.get("kind").and_then(Value::as_u64));
        found.insert(loc, format!("({kind} {name})"));
    }
    if found.is_empty() {
        let what = if op == Op::Supertypes {
            "supertypes"
        } else {
            "subtypes"
        };
        return ToolOutput::text(format!(
            "{head}\nno {what} found (the server is ready and answered with none)"
        ));
    }
    let (locs, names): (Vec<Loc>, Vec<String>) = found.into_iter().unzip();
    let suffixes: Vec<Option<String>> = names.into_iter().map(Some).collect();
    let summary = plural(locs.len(), "type", "types");
    let rows = format::render_locations_with(
        &locs,
        &suffixes,
        REFERENCES_CAP,
        "narrow to a more specific type",
    );
    ToolOutput::text(format!("{head} — {summary}\n{}", rows.join("\n")))
}
