//! Enclosing symbols: which class, function or method a location sits in,
//! named as a path (`Session/request`, `_basic_auth_str`), from the server's
//! document symbols — so an agent reading a `references` answer knows which
//! function uses a name without a second call.
//!
//! Invariants:
//! - A name comes only from the answering server's own document symbols of
//!   the file as it is now; a file it cannot open or answer for gets no name,
//!   never a guessed one. No other server is started for it.
//! - Only files inside the workspace are opened. A file opened for its
//!   symbols stays open (as rename's do): closing it again made basedpyright
//!   report an analysis that never ended, and the next query waited for it.
//! - A file's symbols are asked once per (server process, text): the
//!   [`SymbolCache`] keeps at most [`SYMBOL_CACHE_FILES`] files, oldest out.
//! - Variables and fields are scopes only when they hold other symbols (a
//!   `const handler = () => {…}`); a plain variable never names a location.

use crate::client::Answer;
use crate::client::{file_uri, LspClient};
use crate::read::symbols::DocumentSymbols;
use crate::render::symbol_kind_number;
use crate::render::Loc;
use crate::supervisor::{LspSupervisor, Target, Timeouts};
pub(crate) use crate::symbol_cache::Scope;
use lsp_types::{DocumentSymbol, DocumentSymbolResponse, Position, Range};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Symbol kinds that are scopes only when they have children: variable,
/// constant, field, property, enum member, string … (LSP `SymbolKind`).
fn is_leaf_kind(kind: u64) -> bool {
    matches!(
        kind,
        7 | 8 | 13 | 14 | 15 | 16 | 17 | 18 | 20 | 21 | 22 | 26
    )
}

/// The scopes of a `textDocument/documentSymbol` answer: a `DocumentSymbol`
/// tree (names joined with `/` down the tree) or flat `SymbolInformation`
/// (joined to its `containerName`).
pub(crate) fn scopes(answer: &DocumentSymbols) -> Vec<Scope> {
    fn tree(symbols: &[DocumentSymbol], prefix: &str, out: &mut Vec<Scope>) {
        for s in symbols {
            let path = scope_path(prefix, None, &s.name);
            let children = s.children.as_deref().filter(|c| !c.is_empty());
            let kind = symbol_kind_number(s.kind).unwrap_or(0);
            push_scope(out, &path, Some(s.range), children.is_some(), kind);
            if let Some(children) = children {
                tree(children, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    match answer {
        Answer::Typed(None) => {}
        Answer::Typed(Some(DocumentSymbolResponse::Nested(symbols))) => tree(symbols, "", &mut out),
        Answer::Typed(Some(DocumentSymbolResponse::Flat(infos))) => {
            for s in infos {
                let path = scope_path("", s.container_name.as_deref(), &s.name);
                let kind = symbol_kind_number(s.kind).unwrap_or(0);
                push_scope(&mut out, &path, Some(s.location.range), false, kind);
            }
        }
        Answer::Raw(v) => raw_scopes(v.as_array().map_or(&[], Vec::as_slice), "", &mut out),
    }
    out
}

/// A symbol's path: under its parent's, else under its flat container.
fn scope_path(prefix: &str, container: Option<&str>, name: &str) -> String {
    match (prefix, container.filter(|c| !c.is_empty())) {
        ("", Some(c)) => format!("{c}/{name}"),
        ("", None) => name.to_string(),
        (p, _) => format!("{p}/{name}"),
    }
}

/// A symbol with a range is a scope unless it is of a leaf kind and holds
/// nothing.
fn push_scope(out: &mut Vec<Scope>, path: &str, range: Option<Range>, parent: bool, kind: u64) {
    if let Some(r) = range {
        if parent || !is_leaf_kind(kind) {
            out.push(Scope {
                name: path.to_string(),
                start: (r.start.line, r.start.character),
                end: (r.end.line, r.end.character),
            });
        }
    }
}

/// [`scopes`] of an answer lsp-types does not decode, read by the JSON
/// rules used before it was typed: items without a name are skipped, a
/// range lacking a line or character makes no scope (its children still
/// do), a missing kind counts as a scope kind.
fn raw_scopes(items: &[Value], prefix: &str, out: &mut Vec<Scope>) {
    let point = |v: Option<&Value>| {
        let v = v?;
        Some(Position::new(
            v.get("line")?.as_u64()? as u32,
            v.get("character")?.as_u64()? as u32,
        ))
    };
    for it in items {
        let Some(name) = it.get("name").and_then(Value::as_str) else {
            continue;
        };
        let children = it
            .get("children")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        let kind = it.get("kind").and_then(Value::as_u64).unwrap_or(0);
        let container = it.get("containerName").and_then(Value::as_str);
        let path = scope_path(prefix, container, name);
        let range = it.get("range").or_else(|| it.pointer("/location/range"));
        let range =
            range.and_then(|r| Some(Range::new(point(r.get("start"))?, point(r.get("end"))?)));
        push_scope(out, &path, range, children.is_some(), kind);
        if let Some(children) = children {
            raw_scopes(children, &path, out);
        }
    }
}

/// The innermost scope holding the position (the one that starts last
/// among those whose range contains it), by name.
pub(crate) fn innermost(scopes: &[Scope], line: u32, character: u32) -> Option<&str> {
    let at = (line, character);
    scopes
        .iter()
        .filter(|s| s.start <= at && at <= s.end)
        .max_by_key(|s| (s.start, std::cmp::Reverse(s.end)))
        .map(|s| s.name.as_str())
}

fn text_hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The scopes of one file as `client` sees it now, from the cache or asked.
async fn file_scopes(
    sup: &LspSupervisor,
    t: &Timeouts,
    target: &Target,
    path: &Path,
) -> Option<Arc<Vec<Scope>>> {
    let client: &LspClient = &target.client;
    if !client.has_capability("documentSymbolProvider") {
        return None;
    }
    let uri = file_uri(path);
    let doc = client.sync_file(path, &target.language_id).await.ok()?;
    let key = (client.pid(), uri.clone(), text_hash(&doc.text));
    let cached = sup.symbol_cache().get(&key);
    let scopes = if let Some(s) = cached {
        Some(s)
    } else {
        let asked = crate::read::symbols::document_symbols_of(client, path, t.request).await;
        asked.ok().map(|answer| {
            let s = Arc::new(scopes(&answer));
            sup.symbol_cache().put(key, s.clone());
            s
        })
    };
    scopes
}

/// The enclosing symbol of each of the first `cap` locations (None where
/// there is none or the file is not the answering server's).
pub(crate) async fn names(
    sup: &LspSupervisor,
    t: &Timeouts,
    target: &Target,
    locs: &[Loc],
    cap: usize,
) -> Vec<Option<String>> {
    let mut by_file: BTreeMap<PathBuf, Option<Arc<Vec<Scope>>>> = BTreeMap::new();
    for loc in locs.iter().take(cap) {
        if by_file.contains_key(&loc.path) {
            continue;
        }
        let same_server = sup.workspace().contains(&loc.path)
            && sup
                .server_slot_for(&loc.path)
                .is_ok_and(|(slot, _)| Arc::ptr_eq(&slot, &target.slot));
        let scopes = if same_server {
            file_scopes(sup, t, target, &loc.path).await
        } else {
            None
        };
        by_file.insert(loc.path.clone(), scopes);
    }
    locs.iter()
        .take(cap)
        .map(|loc| {
            let scopes = by_file.get(&loc.path)?.as_ref()?;
            innermost(scopes, loc.line, loc.character).map(str::to_string)
        })
        .collect()
}

/// [`names`] as the suffix a location line shows: `(in Session/request)`.
pub(crate) async fn labels(
    sup: &LspSupervisor,
    t: &Timeouts,
    target: &Target,
    locs: &[Loc],
    cap: usize,
) -> Vec<Option<String>> {
    names(sup, t, target, locs, cap)
        .await
        .into_iter()
        .map(|n| n.map(|n| format!("(in {n})")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The scopes of an answer, typed where it decodes; the raw reader,
    /// which read every answer before, must agree.
    fn read(answer: &Value, typed: bool) -> Vec<Scope> {
        let decoded: DocumentSymbols =
            Answer::decode("textDocument/documentSymbol", answer.clone());
        assert_eq!(matches!(decoded, Answer::Typed(_)), typed, "{answer}");
        let s = scopes(&decoded);
        assert_eq!(scopes(&Answer::Raw(answer.clone())), s, "{answer}");
        s
    }

    fn sym(name: &str, kind: u64, (a, b): (u32, u32), children: Vec<Value>) -> Value {
        json!({"name": name, "kind": kind,
               "range": {"start": {"line": a, "character": 0}, "end": {"line": b, "character": 9}},
               "selectionRange": {"start": {"line": a, "character": 4}, "end": {"line": a, "character": 8}},
               "children": children})
    }

    #[test]
    fn the_innermost_scope_names_a_position_by_its_path() {
        let tree = json!([
            sym(
                "Session",
                5,
                (0, 20),
                vec![
                    sym("request", 6, (2, 10), vec![sym("resp", 13, (4, 4), vec![])]),
                    sym("send", 6, (12, 18), vec![]),
                ]
            ),
            sym("TIMEOUT", 14, (22, 22), vec![]),
            sym("_basic_auth_str", 12, (24, 30), vec![]),
        ]);
        let s = read(&tree, true);
        let at = |l| innermost(&s, l, 5);
        assert_eq!(at(4), Some("Session/request"));
        assert_eq!(at(13), Some("Session/send"));
        assert_eq!(at(11), Some("Session"));
        assert_eq!(at(22), None, "a constant is not a scope");
        assert_eq!(at(26), Some("_basic_auth_str"));
        assert_eq!(at(40), None);
    }

    #[test]
    fn flat_symbol_information_joins_its_container() {
        let flat = json!([
            {"name": "Greeter", "kind": 5, "location": {"uri": "file:///a.py", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}}},
            {"name": "say", "kind": 6, "containerName": "Greeter", "location": {"uri": "file:///a.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 8, "character": 0}}}}
        ]);
        let s = read(&flat, true);
        assert_eq!(innermost(&s, 7, 2), Some("Greeter/say"));
        assert_eq!(innermost(&s, 2, 2), Some("Greeter"));
    }

    #[test]
    fn symbols_lsp_types_rejects_name_scopes_as_before() {
        // A range without `character` is no scope (its children still
        // are), an item without a name is skipped, a missing kind is a
        // scope's, a tree item's `containerName` is its flat container.
        let odd = json!([
            {"name": "Outer", "kind": 5, "range": {"start": {"line": 0}, "end": {"line": 9}},
             "children": [sym("inner", 6, (2, 4), vec![])]},
            {"kind": 12, "range": {"start": {"line": 10, "character": 0}, "end": {"line": 12, "character": 0}}},
            {"name": "run", "containerName": "Job", "range": {"start": {"line": 20, "character": 0}, "end": {"line": 22, "character": 0}}},
        ]);
        let s = read(&odd, false);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Outer/inner", "Job/run"]);
        assert_eq!(innermost(&s, 3, 1), Some("Outer/inner"));
        assert_eq!(innermost(&s, 11, 1), None);
        assert_eq!(innermost(&s, 21, 1), Some("Job/run"));
        assert_eq!(read(&Value::Null, true), vec![]);
    }
}
