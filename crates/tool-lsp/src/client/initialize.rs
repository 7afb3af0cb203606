//! What the client tells a server it can do, in `initialize`: the one
//! place our client capabilities are declared (position encodings, progress,
//! the workspace edits and file operations it applies, the link and
//! hierarchy support the ops read).

use super::StartSpec;
use serde_json::{json, Value};

pub(super) fn initialize_params(spec: &StartSpec, root_uri: &str, root_name: &str) -> Value {
    let kinds = [
        "",
        "quickfix",
        "refactor",
        "refactor.extract",
        "refactor.inline",
        "refactor.rewrite",
        "source",
        "source.organizeImports",
        "source.fixAll",
    ];
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "agent-tools", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "rootPath": spec.root,
        "workspaceFolders": [{"uri": root_uri, "name": root_name}],
        "initializationOptions": spec.initialization_options,
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "applyEdit": true,
                "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]},
                "didChangeWatchedFiles": {"dynamicRegistration": true},
                "fileOperations": {"willRename": true, "didRename": true},
                "symbol": {"dynamicRegistration": false},
            },
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "definition": {"linkSupport": true},
                "typeDefinition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "codeAction": {
                    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": kinds}},
                    "isPreferredSupport": true,
                },
                "rename": {"prepareSupport": true},
                "formatting": {"dynamicRegistration": false},
                "callHierarchy": {"dynamicRegistration": false},
                "typeHierarchy": {"dynamicRegistration": false},
                "signatureHelp": {"signatureInformation": {"activeParameterSupport": true,
                    "documentationFormat": ["plaintext", "markdown"]}},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
            },
            "experimental": {"serverStatusNotification": true},
            "offsetEncoding": ["utf-8", "utf-16"],
        },
    })
}
