//! What the client tells a server it can do, in `initialize`: the one
//! place our client capabilities are declared (position encodings, progress,
//! the workspace edits and file operations it applies, the link and
//! hierarchy support the ops read).
//!
//! The params are lsp-types' `InitializeParams`. The answer is read raw by
//! the caller: its capabilities go to [`super::ServerCaps`], which keeps
//! the JSON for capabilities lsp-types cannot decode.

use lsp_types::{
    ClientCapabilities, ClientInfo, CodeActionClientCapabilities, CodeActionKindLiteralSupport,
    CodeActionLiteralSupport, DiagnosticClientCapabilities,
    DidChangeWatchedFilesClientCapabilities, DocumentSymbolClientCapabilities,
    DynamicRegistrationClientCapabilities, GeneralClientCapabilities, GotoCapability,
    HoverClientCapabilities, InitializeParams, MarkupKind, PositionEncodingKind,
    PublishDiagnosticsClientCapabilities, RenameClientCapabilities, ResourceOperationKind,
    SignatureHelpClientCapabilities, SignatureInformationSettings, TextDocumentClientCapabilities,
    TextDocumentSyncClientCapabilities, Url, WindowClientCapabilities, WorkspaceClientCapabilities,
    WorkspaceEditClientCapabilities, WorkspaceFileOperationsClientCapabilities, WorkspaceFolder,
    WorkspaceSymbolClientCapabilities,
};
use serde_json::{json, Value};
use std::path::Path;

/// The code action kinds the client lists (`""` included: some servers
/// offer only actions with an empty kind to a client that lists it).
const CODE_ACTION_KINDS: [&str; 9] = [
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

/// The `initialize` params for a server rooted at `root`, as sent: the
/// typed [`InitializeParams`] with clangd's `offsetEncoding` (its name for
/// `general.positionEncodings` before LSP 3.17) added to the capabilities.
/// lsp-types has that field only under its `proposed` feature, which
/// changes other types too.
pub(super) fn initialize_params(
    root: &Path,
    root_uri: &str,
    root_name: &str,
    initialization_options: Option<&Value>,
) -> Value {
    let params = typed_params(root, root_uri, root_name, initialization_options);
    let mut params = serde_json::to_value(params).expect("initialize params serialize");
    params["capabilities"]["offsetEncoding"] = json!(POSITION_ENCODINGS);
    params
}

/// The position encodings the client takes, preferred first.
const POSITION_ENCODINGS: [&str; 2] = ["utf-8", "utf-16"];

fn typed_params(
    root: &Path,
    root_uri: &str,
    root_name: &str,
    initialization_options: Option<&Value>,
) -> InitializeParams {
    let root_uri = Url::parse(root_uri).expect("a file URI parses");
    #[allow(deprecated)] // `rootPath`: still read by older servers.
    InitializeParams {
        process_id: Some(std::process::id()),
        client_info: Some(ClientInfo {
            name: "agent-tools".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        root_path: Some(root.to_string_lossy().into_owned()),
        workspace_folders: Some(vec![WorkspaceFolder {
            uri: root_uri.clone(),
            name: root_name.to_string(),
        }]),
        root_uri: Some(root_uri),
        // Sent as `null` when there are none, as it always was.
        initialization_options: Some(initialization_options.cloned().unwrap_or(Value::Null)),
        capabilities: client_capabilities(),
        trace: None,
        locale: None,
    }
}

fn client_capabilities() -> ClientCapabilities {
    let off = Some(DynamicRegistrationClientCapabilities {
        dynamic_registration: Some(false),
    });
    let links = Some(GotoCapability {
        dynamic_registration: None,
        link_support: Some(true),
    });
    let formats = Some(vec![MarkupKind::PlainText, MarkupKind::Markdown]);
    ClientCapabilities {
        general: Some(GeneralClientCapabilities {
            position_encodings: Some(POSITION_ENCODINGS.map(PositionEncodingKind::from).to_vec()),
            ..Default::default()
        }),
        window: Some(WindowClientCapabilities {
            work_done_progress: Some(true),
            ..Default::default()
        }),
        workspace: Some(WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            apply_edit: Some(true),
            workspace_edit: Some(WorkspaceEditClientCapabilities {
                document_changes: Some(true),
                resource_operations: Some(vec![
                    ResourceOperationKind::Create,
                    ResourceOperationKind::Rename,
                    ResourceOperationKind::Delete,
                ]),
                ..Default::default()
            }),
            did_change_watched_files: Some(DidChangeWatchedFilesClientCapabilities {
                dynamic_registration: Some(true),
                ..Default::default()
            }),
            file_operations: Some(WorkspaceFileOperationsClientCapabilities {
                will_rename: Some(true),
                did_rename: Some(true),
                ..Default::default()
            }),
            symbol: Some(WorkspaceSymbolClientCapabilities {
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        }),
        text_document: Some(TextDocumentClientCapabilities {
            synchronization: Some(TextDocumentSyncClientCapabilities {
                did_save: Some(true),
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            hover: Some(HoverClientCapabilities {
                content_format: formats.clone(),
                ..Default::default()
            }),
            definition: links,
            type_definition: links,
            implementation: links,
            references: Some(DynamicRegistrationClientCapabilities::default()),
            document_symbol: Some(DocumentSymbolClientCapabilities {
                hierarchical_document_symbol_support: Some(true),
                ..Default::default()
            }),
            code_action: Some(CodeActionClientCapabilities {
                code_action_literal_support: Some(CodeActionLiteralSupport {
                    code_action_kind: CodeActionKindLiteralSupport {
                        value_set: CODE_ACTION_KINDS.map(String::from).to_vec(),
                    },
                }),
                is_preferred_support: Some(true),
                ..Default::default()
            }),
            rename: Some(RenameClientCapabilities {
                prepare_support: Some(true),
                ..Default::default()
            }),
            formatting: off,
            call_hierarchy: off,
            type_hierarchy: off,
            signature_help: Some(SignatureHelpClientCapabilities {
                signature_information: Some(SignatureInformationSettings {
                    active_parameter_support: Some(true),
                    documentation_format: formats,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                version_support: Some(true),
                related_information: Some(false),
                ..Default::default()
            }),
            diagnostic: Some(DiagnosticClientCapabilities {
                dynamic_registration: Some(true),
                related_document_support: Some(false),
            }),
            ..Default::default()
        }),
        experimental: Some(json!({"serverStatusNotification": true})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The params as JSON are the ones sent before they were typed.
    #[test]
    fn the_typed_params_send_what_the_client_always_sent() {
        let params = |options: Option<&Value>| {
            initialize_params(Path::new("/w/proj"), "file:///w/proj", "proj", options)
        };
        let kinds = CODE_ACTION_KINDS;
        let expected = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "agent-tools", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": "file:///w/proj",
            "rootPath": "/w/proj",
            "workspaceFolders": [{"uri": "file:///w/proj", "name": "proj"}],
            "initializationOptions": null,
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
        });
        assert_eq!(params(None), expected);
        let options = json!({"cache": {"directory": "/tmp/c"}});
        let mut with_options = expected;
        with_options["initializationOptions"] = options.clone();
        assert_eq!(params(Some(&options)), with_options);
    }
}
