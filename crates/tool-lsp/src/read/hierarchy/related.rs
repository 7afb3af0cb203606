//! The hierarchy requests, typed, and their answers as the ops read them:
//! each item related to the prepared one (a caller, a callee, a super- or
//! subtype), with the ranges of the calls between them.
//!
//! The prepared items are sent back in the follow-up requests as decoded.
//! An answer lsp-types cannot decode is read from its JSON by the rules
//! used before the requests were typed (see [`Answer`]), and the follow-ups
//! of items that did not decode send each item back exactly as the server
//! sent it. lsp-types 0.94 reads a `TypeHierarchyItem`'s `tags` as one tag
//! where LSP 3.17 sends a list, so a type item with tags takes that way.

use crate::args::Op;
use crate::client::{uri_path, Answer, LspClient, RequestError};
use crate::positioning::Positioned;
use crate::render::symbol_kind_number;
use crate::supervisor::Timeouts;
use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare, Request,
    TypeHierarchyPrepare, TypeHierarchySubtypes, TypeHierarchySupertypes,
};
use lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyIncomingCallsParams, CallHierarchyItem,
    CallHierarchyOutgoingCall, CallHierarchyOutgoingCallsParams, CallHierarchyPrepareParams,
    PartialResultParams, Position, Range, SymbolKind, TypeHierarchyItem,
    TypeHierarchyPrepareParams, TypeHierarchySubtypesParams, TypeHierarchySupertypesParams, Url,
    WorkDoneProgressParams,
};
use serde_json::{json, Value};
use std::path::PathBuf;

/// What the ops read of one hierarchy item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    pub name: String,
    /// Its LSP `SymbolKind` number.
    pub kind: Option<u64>,
    /// Its file; None for a URI that names no file.
    pub path: Option<PathBuf>,
    /// The start of its name (`selectionRange`, else `range`).
    pub start: Option<Position>,
}

/// An item related to the prepared one, with the start (line, character)
/// of each call between them as sent (none for a type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Related {
    pub item: Item,
    pub from_ranges: Vec<(Option<u32>, Option<u32>)>,
}

fn item(name: &str, kind: SymbolKind, uri: &Url, selection: Range) -> Item {
    Item {
        name: name.to_string(),
        kind: symbol_kind_number(kind),
        path: uri.to_file_path().ok(),
        start: Some(selection.start),
    }
}

fn call_item(i: &CallHierarchyItem) -> Item {
    item(&i.name, i.kind, &i.uri, i.selection_range)
}

fn type_item(i: &TypeHierarchyItem) -> Item {
    item(&i.name, i.kind, &i.uri, i.selection_range)
}

fn call(i: &CallHierarchyItem, ranges: &[Range]) -> Related {
    Related {
        item: call_item(i),
        from_ranges: ranges
            .iter()
            .map(|r| (Some(r.start.line), Some(r.start.character)))
            .collect(),
    }
}

fn related_type(i: &TypeHierarchyItem) -> Related {
    Related {
        item: type_item(i),
        from_ranges: Vec::new(),
    }
}

/// An item read from JSON: name `?` when missing, its start only when
/// its `selectionRange` (else `range`) has a line and a character.
fn raw_item(v: &Value) -> Item {
    let number = |r: &Value, at: &str| Some(r.pointer(at)?.as_u64()? as u32);
    let start = v
        .get("selectionRange")
        .or_else(|| v.get("range"))
        .and_then(|r| {
            Some(Position::new(
                number(r, "/start/line")?,
                number(r, "/start/character")?,
            ))
        });
    Item {
        name: v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        kind: v.get("kind").and_then(Value::as_u64),
        path: v.get("uri").and_then(Value::as_str).and_then(uri_path),
        start,
    }
}

/// The related items of an answer read from JSON: each element's `end`
/// (`from`, `to`; elements without it skipped) and its `fromRanges`, or
/// each element itself (`end` None: a list of type items).
pub(super) fn raw_related(answer: &Value, end: Option<&str>) -> Vec<Related> {
    let number = |r: &Value, at: &str| r.pointer(at).and_then(Value::as_u64).map(|n| n as u32);
    let one = |e: &Value| {
        let item = match end {
            Some(key) => e.get(key)?,
            None => e,
        };
        let from_ranges = e
            .get("fromRanges")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| (number(r, "/start/line"), number(r, "/start/character")))
            .collect();
        Some(Related {
            item: raw_item(item),
            from_ranges,
        })
    };
    answer
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(one)
        .collect()
}

/// The items `prepare` answered, typed or as sent.
pub(super) enum Prepared {
    Calls(Vec<CallHierarchyItem>),
    Types(Vec<TypeHierarchyItem>),
    Raw(Vec<Value>),
}

impl Prepared {
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Prepared::Calls(items) => items.is_empty(),
            Prepared::Types(items) => items.is_empty(),
            Prepared::Raw(items) => items.is_empty(),
        }
    }

    fn raw(answer: &Value) -> Prepared {
        Prepared::Raw(answer.as_array().cloned().unwrap_or_default())
    }
}

/// Prepare the call (`IncomingCalls`, `OutgoingCalls`) or type hierarchy
/// item at the position.
pub(super) async fn prepare(
    t: &Timeouts,
    p: &Positioned,
    op: Op,
) -> Result<Prepared, RequestError> {
    let client = &p.target.client;
    let text_document_position_params = p.text_document_position();
    let work_done_progress_params = WorkDoneProgressParams::default();
    if matches!(op, Op::IncomingCalls | Op::OutgoingCalls) {
        let params = CallHierarchyPrepareParams {
            text_document_position_params,
            work_done_progress_params,
        };
        let calls = |items: Option<_>| Prepared::Calls(items.unwrap_or_default());
        ask_prepare::<CallHierarchyPrepare>(t, client, params, calls).await
    } else {
        let params = TypeHierarchyPrepareParams {
            text_document_position_params,
            work_done_progress_params,
        };
        let types = |items: Option<_>| Prepared::Types(items.unwrap_or_default());
        ask_prepare::<TypeHierarchyPrepare>(t, client, params, types).await
    }
}

/// One prepare request: its typed answer as `typed` reads it, else raw.
async fn ask_prepare<R: Request>(
    t: &Timeouts,
    client: &LspClient,
    params: R::Params,
    typed: impl FnOnce(R::Result) -> Prepared,
) -> Result<Prepared, RequestError> {
    Ok(
        match client.request_lenient::<R>(params, t.request).await? {
            Answer::Typed(items) => typed(items),
            Answer::Raw(v) => Prepared::raw(&v),
        },
    )
}

/// The items related to each prepared one, in order: callers, callees,
/// supertypes or subtypes as `op` asks. Stops at the first failed request.
pub(super) async fn follow(
    t: &Timeouts,
    client: &LspClient,
    op: Op,
    prepared: &Prepared,
) -> Result<Vec<Related>, RequestError> {
    let mut out = Vec::new();
    match prepared {
        Prepared::Calls(items) => {
            for i in items {
                out.extend(follow_call(t, client, op, i.clone()).await?);
            }
        }
        Prepared::Types(items) => {
            for i in items {
                out.extend(follow_type(t, client, op, i.clone()).await?);
            }
        }
        Prepared::Raw(items) => {
            let (method, end) = follow_method(op);
            for i in items {
                let answer = client
                    .request(method, json!({"item": i}), t.request)
                    .await?;
                out.extend(raw_related(&answer, end));
            }
        }
    }
    Ok(out)
}

/// The follow-up method of `op`, and the key of the related item in each
/// element of its answer (None: the element is the item).
pub(super) fn follow_method(op: Op) -> (&'static str, Option<&'static str>) {
    match op {
        Op::IncomingCalls => (CallHierarchyIncomingCalls::METHOD, Some("from")),
        Op::OutgoingCalls => (CallHierarchyOutgoingCalls::METHOD, Some("to")),
        Op::Supertypes => (TypeHierarchySupertypes::METHOD, None),
        _ => (TypeHierarchySubtypes::METHOD, None),
    }
}

/// The callers (`IncomingCalls`) or callees of one typed call item.
async fn follow_call(
    t: &Timeouts,
    client: &LspClient,
    op: Op,
    item: CallHierarchyItem,
) -> Result<Vec<Related>, RequestError> {
    let work_done_progress_params = WorkDoneProgressParams::default();
    let partial_result_params = PartialResultParams::default();
    if op == Op::IncomingCalls {
        let params = CallHierarchyIncomingCallsParams {
            item,
            work_done_progress_params,
            partial_result_params,
        };
        let answer = client.request_lenient::<CallHierarchyIncomingCalls>(params, t.request);
        Ok(incoming_calls(&answer.await?))
    } else {
        let params = CallHierarchyOutgoingCallsParams {
            item,
            work_done_progress_params,
            partial_result_params,
        };
        let answer = client.request_lenient::<CallHierarchyOutgoingCalls>(params, t.request);
        Ok(outgoing_calls(&answer.await?))
    }
}

/// The supertypes (`Supertypes`) or subtypes of one typed type item.
async fn follow_type(
    t: &Timeouts,
    client: &LspClient,
    op: Op,
    item: TypeHierarchyItem,
) -> Result<Vec<Related>, RequestError> {
    let work_done_progress_params = WorkDoneProgressParams::default();
    let partial_result_params = PartialResultParams::default();
    let answer = if op == Op::Supertypes {
        let params = TypeHierarchySupertypesParams {
            item,
            work_done_progress_params,
            partial_result_params,
        };
        client
            .request_lenient::<TypeHierarchySupertypes>(params, t.request)
            .await?
    } else {
        let params = TypeHierarchySubtypesParams {
            item,
            work_done_progress_params,
            partial_result_params,
        };
        client
            .request_lenient::<TypeHierarchySubtypes>(params, t.request)
            .await?
    };
    Ok(related_types(&answer))
}

/// The callers of an `incomingCalls` answer.
fn incoming_calls(answer: &Answer<Option<Vec<CallHierarchyIncomingCall>>>) -> Vec<Related> {
    calls(answer, "from", |c| (&c.from, &c.from_ranges))
}

/// The callees of an `outgoingCalls` answer.
fn outgoing_calls(answer: &Answer<Option<Vec<CallHierarchyOutgoingCall>>>) -> Vec<Related> {
    calls(answer, "to", |c| (&c.to, &c.from_ranges))
}

/// The other end of each call in a calls answer: `end` names it in the
/// JSON, `parts` picks it and the call's ranges from a typed call.
fn calls<C>(
    answer: &Answer<Option<Vec<C>>>,
    end: &str,
    parts: impl Fn(&C) -> (&CallHierarchyItem, &Vec<Range>),
) -> Vec<Related> {
    match answer {
        Answer::Typed(calls) => calls
            .iter()
            .flatten()
            .map(|c| {
                let (item, ranges) = parts(c);
                call(item, ranges)
            })
            .collect(),
        Answer::Raw(v) => raw_related(v, Some(end)),
    }
}

/// The types of a `supertypes` or `subtypes` answer.
fn related_types(answer: &Answer<Option<Vec<TypeHierarchyItem>>>) -> Vec<Related> {
    match answer {
        Answer::Typed(types) => types.iter().flatten().map(related_type).collect(),
        Answer::Raw(v) => raw_related(v, None),
    }
}

#[cfg(test)]
mod tests;
