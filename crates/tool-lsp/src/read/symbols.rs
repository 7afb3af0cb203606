//! Op `symbols`' answers read for a model: a file's `textDocument/documentSymbol`
//! as indented `line: kind name` rows, `workspace/symbol` as
//! `path:line  kind name (in container)` rows.
//!
//! Both requests are typed; an answer lsp-types cannot decode (a range
//! without `character`, a location without a range, a name left out) is
//! read from its JSON by the rules used before they were typed, so every
//! server's answer reads as it did (see [`Answer`]).

use crate::client::{text_document, uri_path, Answer, LspClient, RequestError};
use crate::render::{kind_name, show_path, symbol_kind_name, symbol_kind_number};
use lsp_types::request::DocumentSymbolRequest;
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, OneOf, SymbolKind, Url,
    WorkspaceSymbolResponse,
};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tool_core::Workspace;

/// A document symbols answer, typed where it decodes.
pub(crate) type DocumentSymbols = Answer<Option<DocumentSymbolResponse>>;

/// Ask `client` for the symbols of the file at `path`.
pub(crate) async fn document_symbols_of(
    client: &LspClient,
    path: &Path,
    timeout: Duration,
) -> Result<DocumentSymbols, RequestError> {
    let params = DocumentSymbolParams {
        text_document: text_document(path),
        work_done_progress_params: lsp_types::WorkDoneProgressParams::default(),
        partial_result_params: lsp_types::PartialResultParams::default(),
    };
    client
        .request_lenient::<DocumentSymbolRequest>(params, timeout)
        .await
}

/// One row: 0-based line, depth in the tree, `kind name` (and `  detail`
/// when asked for).
type Row = (u32, usize, String);

fn row(line: u32, depth: usize, kind: &str, name: &str, detail: Option<&str>) -> Row {
    let detail = detail
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            format!(
                "  {}",
                tool_core::format::cap_chars(d.lines().next().unwrap_or(""), 100)
            )
        })
        .unwrap_or_default();
    (line, depth, format!("{kind} {name}{detail}"))
}

/// Symbol kinds (LSP numbers) whose children that are variables are the
/// function's own locals and parameters: a method, a constructor, a
/// function.
const FUNCTION_KINDS: [u64; 3] = [6, 9, 12];
/// The LSP number of a variable.
const VARIABLE_KIND: u64 = 13;

/// Whether an outline leaves out a symbol of `kind` under a parent of
/// `parent` kind: a function's variables (basedpyright lists every local
/// and parameter: 444 of the 684 symbols of pallets/click's core.py),
/// unless the signatures are asked for too.
fn local_left_out(parent: Option<u64>, kind: Option<u64>, detail: bool) -> bool {
    !detail && kind == Some(VARIABLE_KIND) && parent.is_some_and(|p| FUNCTION_KINDS.contains(&p))
}

/// Document symbols (a `DocumentSymbol` tree or flat `SymbolInformation`),
/// as indented `line: kind name` rows in source order: an outline, each
/// row with its signature (the server's `detail`) only when `detail`; and
/// how many of a function's own variables (locals, parameters) the outline
/// left out (all are shown with `detail`).
pub(crate) fn document_symbols(answer: &DocumentSymbols, detail: bool) -> (Vec<String>, usize) {
    fn tree(
        symbols: &[DocumentSymbol],
        (depth, parent): (usize, Option<u64>),
        detail: bool,
        out: &mut Vec<Row>,
        left_out: &mut usize,
    ) {
        for s in symbols {
            let number = symbol_kind_number(s.kind);
            if local_left_out(parent, number, detail) {
                *left_out += 1 + count_tree(s.children.as_deref().unwrap_or_default());
                continue;
            }
            let kind = symbol_kind_name(s.kind);
            let line = s.selection_range.start.line;
            let shown = s.detail.as_deref().filter(|_| detail);
            out.push(row(line, depth, kind, &s.name, shown));
            tree(
                s.children.as_deref().unwrap_or_default(),
                (depth + 1, number),
                detail,
                out,
                left_out,
            );
        }
    }
    fn count_tree(symbols: &[DocumentSymbol]) -> usize {
        symbols
            .iter()
            .map(|s| 1 + count_tree(s.children.as_deref().unwrap_or_default()))
            .sum()
    }
    let mut rows = Vec::new();
    let mut left_out = 0;
    match answer {
        Answer::Typed(None) => {}
        Answer::Typed(Some(DocumentSymbolResponse::Nested(symbols))) => {
            tree(symbols, (0, None), detail, &mut rows, &mut left_out);
        }
        Answer::Typed(Some(DocumentSymbolResponse::Flat(infos))) => {
            for s in infos {
                let kind = symbol_kind_name(s.kind);
                rows.push(row(s.location.range.start.line, 0, kind, &s.name, None));
            }
        }
        Answer::Raw(v) => {
            let items = v.as_array().map_or(&[][..], Vec::as_slice);
            raw_document_rows(items, (0, None), detail, &mut rows, &mut left_out);
        }
    }
    // Flat SymbolInformation lists come unordered; a tree is kept in order.
    let flat = rows.iter().all(|(_, d, _)| *d == 0);
    if flat {
        rows.sort_by_key(|(l, _, _)| *l);
    }
    let rows = rows
        .into_iter()
        .map(|(line, depth, text)| format!("{}{}: {text}", "  ".repeat(depth), line + 1))
        .collect();
    (rows, left_out)
}

/// The rows of document symbols lsp-types does not decode: each item's
/// name (`?` when missing), kind, and the first start line among its
/// `selectionRange`, `range` and `location.range` (0 when none has one).
fn raw_document_rows(
    items: &[Value],
    (depth, parent): (usize, Option<u64>),
    detail: bool,
    out: &mut Vec<Row>,
    left_out: &mut usize,
) {
    fn count_raw(items: &[Value]) -> usize {
        items
            .iter()
            .map(|it| {
                1 + it
                    .get("children")
                    .and_then(Value::as_array)
                    .map_or(0, |c| count_raw(c))
            })
            .sum()
    }
    for it in items {
        let number = it.get("kind").and_then(Value::as_u64);
        let children = it.get("children").and_then(Value::as_array);
        if local_left_out(parent, number, detail) {
            *left_out += 1 + children.map_or(0, |c| count_raw(c));
            continue;
        }
        let name = it.get("name").and_then(Value::as_str).unwrap_or("?");
        let kind = kind_name(number);
        let line = it
            .pointer("/selectionRange/start/line")
            .or_else(|| it.pointer("/range/start/line"))
            .or_else(|| it.pointer("/location/range/start/line"))
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32;
        let shown = it.get("detail").and_then(Value::as_str).filter(|_| detail);
        out.push(row(line, depth, kind, name, shown));
        if let Some(children) = children {
            raw_document_rows(children, (depth + 1, number), detail, out, left_out);
        }
    }
}

/// A workspace symbols answer, typed where it decodes.
pub(crate) type WorkspaceSymbols = Answer<Option<WorkspaceSymbolResponse>>;

/// One workspace symbol: shown path, 1-based line, `kind name`, and its
/// container (a package, a class) when the server names one.
pub(crate) type SymbolRow = (String, u32, String, Option<String>);

/// Workspace symbols as rows, sorted; symbols outside files left out.
pub(crate) fn workspace_symbols(ws: &Workspace, answer: &WorkspaceSymbols) -> Vec<SymbolRow> {
    let row = |path: Option<std::path::PathBuf>,
               line: u32,
               kind: &str,
               name: &str,
               container: Option<&str>| {
        let container = container.filter(|c| !c.is_empty()).map(str::to_string);
        Some((
            show_path(ws, &path?),
            line + 1,
            format!("{kind} {name}"),
            container,
        ))
    };
    let mut out: Vec<SymbolRow> = match answer {
        Answer::Typed(response) => typed_workspace_symbols(response.as_ref())
            .into_iter()
            .filter_map(|(uri, line, kind, name, container)| {
                let kind = symbol_kind_name(kind);
                row(uri.to_file_path().ok(), line, kind, name, container)
            })
            .collect(),
        Answer::Raw(v) => v
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|it| {
                let path = it
                    .pointer("/location/uri")
                    .and_then(Value::as_str)
                    .and_then(uri_path);
                let line = it
                    .pointer("/location/range/start/line")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as u32;
                let kind = kind_name(it.get("kind").and_then(Value::as_u64));
                let name = it.get("name").and_then(Value::as_str).unwrap_or("?");
                row(
                    path,
                    line,
                    kind,
                    name,
                    it.get("containerName").and_then(Value::as_str),
                )
            })
            .collect(),
    };
    out.sort();
    out.dedup();
    out
}

/// Workspace symbol rows for a model, what they share said once: the
/// container most of the workspace's rows have (gopls's package; at least
/// two, and more than any other) goes to the header's
/// `in <container>` (returned), the others keep ` (in <container>)`; rows
/// of one file follow its path as `  line: kind name`, a file with one row
/// is `path:line  kind name`. Only when every row names a container: a row
/// without one (a Python module's top-level function) would read as being
/// in the header's.
pub(crate) fn render_workspace_rows(rows: &[SymbolRow]) -> (Option<String>, Vec<String>) {
    // What the workspace's own rows share (a server may add its standard
    // library's, by absolute path), else what all share.
    let own = rows.iter().any(|r| !Path::new(&r.0).is_absolute());
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for (path, _, _, c) in rows {
        if own && Path::new(path).is_absolute() {
            continue;
        }
        if let Some(c) = c {
            *counts.entry(c.as_str()).or_default() += 1;
        }
    }
    // The one most rows share, when at least two do and no other as many.
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
    let every_row_has_one = rows.iter().all(|r| r.3.is_some());
    let common = match ranked.as_slice() {
        [(c, n), rest @ ..]
            if every_row_has_one && *n >= 2 && rest.first().is_none_or(|(_, m)| m < n) =>
        {
            Some((*c).to_string())
        }
        _ => None,
    };
    let text = |(_, _, t, c): &SymbolRow| match c {
        Some(c) if Some(c) != common.as_ref() => format!("{t} (in {c})"),
        _ => t.clone(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let path = &rows[i].0;
        let n = rows[i..].iter().take_while(|r| &r.0 == path).count();
        if n == 1 {
            out.push(format!("{path}:{}  {}", rows[i].1, text(&rows[i])));
        } else {
            out.push(path.clone());
            for r in &rows[i..i + n] {
                out.push(format!("  {}: {}", r.1, text(r)));
            }
        }
        i += n;
    }
    (common, out)
}

/// Each symbol of a typed `workspace/symbol` answer: its file's URI, its
/// 0-based line (0 for a location without a range, a `WorkspaceLocation`),
/// kind, name and container.
fn typed_workspace_symbols(
    response: Option<&WorkspaceSymbolResponse>,
) -> Vec<(&Url, u32, SymbolKind, &str, Option<&str>)> {
    match response {
        None => Vec::new(),
        Some(WorkspaceSymbolResponse::Flat(infos)) => infos
            .iter()
            .map(|s| {
                let l = &s.location;
                (
                    &l.uri,
                    l.range.start.line,
                    s.kind,
                    s.name.as_str(),
                    s.container_name.as_deref(),
                )
            })
            .collect(),
        Some(WorkspaceSymbolResponse::Nested(symbols)) => symbols
            .iter()
            .map(|s| {
                let (uri, line) = match &s.location {
                    OneOf::Left(l) => (&l.uri, l.range.start.line),
                    OneOf::Right(l) => (&l.uri, 0),
                };
                (
                    uri,
                    line,
                    s.kind,
                    s.name.as_str(),
                    s.container_name.as_deref(),
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
