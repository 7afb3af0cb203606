//! Ops `incoming_calls`, `outgoing_calls` (call hierarchy) and `supertypes`,
//! `subtypes` (type hierarchy): prepare the item at a position given by line
//! and symbol, then ask for its callers, callees or related types.
//!
//! Invariants: a server that does not advertise the hierarchy is refused by
//! name before anything is asked; an empty answer says the server is ready
//! and found none (never "no callers" for "not asked"); every list is capped
//! with the rest counted. The requests are typed, their answers read
//! leniently ([`related`]).

use crate::args::{LspArgs, Op, REFERENCES_CAP};
use crate::client::RequestError;
use crate::positioning::{position, Positioned};
use crate::read::enclosing;
use crate::render::{self, Loc};
use crate::supervisor::{LspSupervisor, Timeouts};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use tool_core::format::plural;
use tool_core::{ToolError, ToolOutput};

mod related;
use related::{Item, Related};

/// What each op needs and asks, as its messages name them: the
/// capability, the follow-up request (the requests themselves are in
/// [`related`]).
struct Ask {
    capability: &'static str,
    what: &'static str,
    follow: &'static str,
    alternative: &'static str,
}

fn ask(op: Op) -> Ask {
    let (follow, _) = related::follow_method(op);
    if matches!(op, Op::IncomingCalls | Op::OutgoingCalls) {
        Ask {
            capability: "callHierarchyProvider",
            what: "call hierarchy",
            follow,
            alternative: "op `references` lists every use instead",
        }
    } else {
        Ask {
            capability: "typeHierarchyProvider",
            what: "type hierarchy",
            follow,
            alternative:
                "op `implementation` (subtypes) or `hover` (the declaration) may answer instead",
        }
    }
}

/// The start of an item's name as a location in its file.
fn item_loc(sup: &LspSupervisor, item: &Item) -> Option<Loc> {
    let path = item.path.as_ref()?;
    let start = item.start?;
    Some(Loc {
        shown: render::show_path(sup.workspace(), path),
        path: path.clone(),
        line: start.line,
        character: start.character,
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
) -> Result<Option<Vec<Related>>, ToolError> {
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
    Ok(Some(related::raw_related(
        v.get(key).unwrap_or(&Value::Null),
        None,
    )))
}

/// Run one of the four hierarchy ops.
pub(crate) async fn run(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let ask = ask(args.op);
    let p = position(sup, t, args).await?;
    let client = &p.target.client;
    crate::read::capabilities::require(client, ask.capability, ask.what, ask.alternative)?;
    let head = format!(
        "lsp {}  `{}` at {}:{}",
        args.op.name(),
        p.symbol,
        p.file.shown,
        p.spot.line + 1
    );
    let prepared = related::prepare(t, &p, args.op).await;
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
            if items.is_empty() {
                return Ok(ToolOutput::text(none_here(&head, &ask, &p)));
            }
            match related::follow(t, client, args.op, &items).await {
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
                answers => answers.map_err(|e| e.into_tool_error(&client.name))?,
            }
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
    calls: &[Related],
) -> Result<ToolOutput, ToolError> {
    // Call sites by line: two calls on one line are one row, counted. A
    // call is counted once however often the server's answer repeats it
    // (jdtls 1.59 gave both calls of a caller that makes two twice).
    let mut sites: BTreeMap<(String, u32), (Loc, String, BTreeSet<u32>)> = BTreeMap::new();
    for call in calls {
        let caller = call.item.name.as_str();
        let Some(path) = &call.item.path else {
            continue;
        };
        let found: Vec<Loc> = if call.from_ranges.is_empty() {
            item_loc(sup, &call.item).into_iter().collect()
        } else {
            call.from_ranges
                .iter()
                .filter_map(|&(line, character)| {
                    Some(Loc {
                        shown: render::show_path(sup.workspace(), path),
                        path: path.clone(),
                        line: line?,
                        character: character?,
                    })
                })
                .collect()
        };
        for loc in found {
            let site = sites
                .entry((loc.shown.clone(), loc.line))
                .or_insert_with(|| (loc.clone(), caller.to_string(), BTreeSet::new()));
            site.2.insert(loc.character);
        }
    }
    if sites.is_empty() {
        return Ok(ToolOutput::text(format!(
            "{head}\nno callers found (the server is ready and answered with none)"
        )));
    }
    let calls_total: usize = sites.values().map(|s| s.2.len()).sum();
    let (locs, callers): (Vec<Loc>, Vec<(String, usize)>) = sites
        .into_values()
        .map(|(l, c, n)| (l, (c, n.len())))
        .unzip();
    // The caller as the file's symbols name it (`Greeter/say`), else as the
    // server's call hierarchy does.
    let scoped = enclosing::names(sup, t, &p.target, &locs, REFERENCES_CAP).await;
    let scoped: Vec<String> = callers
        .iter()
        .zip(scoped.into_iter().chain(std::iter::repeat(None)))
        .map(|((caller, _), scoped)| scoped.unwrap_or(caller.clone()))
        .collect();
    // Callers are told apart by file and scoped name: jdtls's item for each
    // call site is its own, and two classes' `main` share a name.
    let distinct: BTreeSet<(&std::path::Path, &String)> = locs
        .iter()
        .zip(&scoped)
        .map(|(l, c)| (l.path.as_path(), c))
        .collect();
    let suffixes: Vec<Option<String>> = callers
        .iter()
        .zip(&scoped)
        .map(|((_, n), scoped)| {
            let times = if *n > 1 {
                format!(", {n} calls")
            } else {
                String::new()
            };
            Some(format!("(in {scoped}{times})"))
        })
        .collect();
    let summary = format!(
        "{} from {}",
        plural(calls_total, "call", "calls"),
        plural(distinct.len(), "caller", "callers")
    );
    let rows = render::render_locations_with(
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
fn outgoing(sup: &LspSupervisor, p: &Positioned, head: &str, calls: &[Related]) -> ToolOutput {
    let mut callees: BTreeMap<Loc, (String, Vec<u32>)> = BTreeMap::new();
    for call in calls {
        let Some(loc) = item_loc(sup, &call.item) else {
            continue;
        };
        let entry = callees
            .entry(loc)
            .or_insert_with(|| (call.item.name.clone(), Vec::new()));
        entry.1.extend(
            call.from_ranges
                .iter()
                .filter_map(|&(line, _)| Some(line? + 1)),
        );
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
    let rows = render::render_locations_with(
        &locs,
        &suffixes,
        REFERENCES_CAP,
        "look at the body with op `symbols`",
    );
    ToolOutput::text(format!("{head} — {summary}\n{}", rows.join("\n")))
}

/// Supertypes or subtypes: each type where it is declared, with its kind.
fn types(sup: &LspSupervisor, op: Op, head: &str, types: &[Related]) -> ToolOutput {
    let mut found: BTreeMap<Loc, String> = BTreeMap::new();
    for Related { item, .. } in types {
        let Some(loc) = item_loc(sup, item) else {
            continue;
        };
        found.insert(
            loc,
            format!("({} {})", render::kind_name(item.kind), item.name),
        );
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
    let rows = render::render_locations_with(
        &locs,
        &suffixes,
        REFERENCES_CAP,
        "narrow to a more specific type",
    );
    ToolOutput::text(format!("{head} — {summary}\n{}", rows.join("\n")))
}
