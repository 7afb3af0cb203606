//! What a server said it offers, in its `initialize` answer: decoded as
//! [`lsp_types::ServerCapabilities`], with the raw JSON kept.
//!
//! Some servers answer with capabilities lsp-types cannot decode (a value of
//! an unexpected shape somewhere, a field it requires left out): then every
//! question is answered from the raw JSON, by the same rule as before there
//! was a typed view: a capability is offered when its key is present and is
//! neither `null` nor `false`. Keys lsp-types 0.94 does not know
//! (`typeHierarchyProvider`) are looked up in the raw JSON too.

use lsp_types::{
    CallHierarchyServerCapability, CodeActionProviderCapability, HoverProviderCapability,
    ImplementationProviderCapability, OneOf, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncSaveOptions, TypeDefinitionProviderCapability,
};
use serde_json::Value;

/// A server's capabilities: typed when they decode, and as sent.
#[derive(Debug, Clone, Default)]
pub struct ServerCaps {
    typed: Option<ServerCapabilities>,
    raw: Value,
}

impl ServerCaps {
    pub fn new(raw: Value) -> ServerCaps {
        let typed = match serde_json::from_value::<ServerCapabilities>(raw.clone()) {
            Ok(typed) => Some(typed),
            Err(error) => {
                tracing::debug!(%error, "capabilities not decoded; read from the raw JSON");
                None
            }
        };
        ServerCaps { typed, raw }
    }

    /// The capabilities as the server sent them.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The decoded capabilities, unless lsp-types could not decode them.
    pub fn typed(&self) -> Option<&ServerCapabilities> {
        self.typed.as_ref()
    }

    /// Whether the server offers the capability named `key` (its LSP name,
    /// as `hoverProvider`).
    pub fn offers(&self, key: &str) -> bool {
        match self.typed.as_ref().and_then(|t| typed_offers(t, key)) {
            Some(offered) => offered,
            None => self
                .raw
                .get(key)
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false)),
        }
    }

    /// Whether rename checks the position first (`prepareRename`).
    pub fn rename_prepares(&self) -> bool {
        match &self.typed {
            Some(t) => matches!(
                &t.rename_provider,
                Some(OneOf::Right(o)) if o.prepare_provider == Some(true)
            ),
            None => self.raw_bool("/renameProvider/prepareProvider"),
        }
    }

    /// Whether a code action's edit can be asked for later
    /// (`codeAction/resolve`).
    pub fn code_action_resolves(&self) -> bool {
        match &self.typed {
            Some(t) => matches!(
                &t.code_action_provider,
                Some(CodeActionProviderCapability::Options(o)) if o.resolve_provider == Some(true)
            ),
            None => self.raw_bool("/codeActionProvider/resolveProvider"),
        }
    }

    /// The code action kinds the server lists, if it lists them.
    pub fn code_action_kinds(&self) -> Option<Vec<String>> {
        match &self.typed {
            Some(t) => match &t.code_action_provider {
                Some(CodeActionProviderCapability::Options(o)) => o
                    .code_action_kinds
                    .as_ref()
                    .map(|k| k.iter().map(|k| k.as_str().to_string()).collect()),
                _ => None,
            },
            None => self.raw_strings("/codeActionProvider/codeActionKinds"),
        }
    }

    /// The characters that trigger signature help, if it offers it with them.
    pub fn signature_triggers(&self) -> Option<Vec<String>> {
        match &self.typed {
            Some(t) => t
                .signature_help_provider
                .as_ref()
                .and_then(|s| s.trigger_characters.clone()),
            None => self.raw_strings("/signatureHelpProvider/triggerCharacters"),
        }
    }

    /// Whether it wants `workspace/willRenameFiles` (it updates imports).
    pub fn will_rename_files(&self) -> bool {
        match &self.typed {
            Some(t) => file_operations(t).is_some_and(|f| f.will_rename.is_some()),
            None => self.raw_present("/workspace/fileOperations/willRename"),
        }
    }

    /// Whether it asks for `workspace/didRenameFiles`.
    pub fn did_rename_files(&self) -> bool {
        match &self.typed {
            Some(t) => file_operations(t).is_some_and(|f| f.did_rename.is_some()),
            None => self.raw_present("/workspace/fileOperations/didRename"),
        }
    }

    /// Whether it offers `workspace/executeCommand` for `command`.
    pub fn offers_command(&self, command: &str) -> bool {
        match &self.typed {
            Some(t) => t
                .execute_command_provider
                .as_ref()
                .is_some_and(|e| e.commands.iter().any(|c| c == command)),
            None => self
                .raw_strings("/executeCommandProvider/commands")
                .is_some_and(|c| c.iter().any(|c| c == command)),
        }
    }

    /// Whether it offers pull diagnostics (`textDocument/diagnostic`) in
    /// its capabilities (it may also register them later).
    pub fn pulls_diagnostics(&self) -> bool {
        match &self.typed {
            Some(t) => t.diagnostic_provider.is_some(),
            None => self.raw_present("/diagnosticProvider"),
        }
    }

    /// Whether `didSave` carries the document's text.
    pub fn save_includes_text(&self) -> bool {
        match &self.typed {
            Some(t) => matches!(
                &t.text_document_sync,
                Some(TextDocumentSyncCapability::Options(o))
                    if matches!(
                        &o.save,
                        Some(TextDocumentSyncSaveOptions::SaveOptions(s)) if s.include_text == Some(true)
                    )
            ),
            None => self.raw_bool("/textDocumentSync/save/includeText"),
        }
    }

    fn raw_bool(&self, pointer: &str) -> bool {
        self.raw.pointer(pointer).and_then(Value::as_bool) == Some(true)
    }

    fn raw_present(&self, pointer: &str) -> bool {
        self.raw.pointer(pointer).is_some_and(|v| !v.is_null())
    }

    fn raw_strings(&self, pointer: &str) -> Option<Vec<String>> {
        let items = self.raw.pointer(pointer)?.as_array()?;
        Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
        )
    }
}

fn file_operations(
    t: &ServerCapabilities,
) -> Option<&lsp_types::WorkspaceFileOperationsServerCapabilities> {
    t.workspace.as_ref()?.file_operations.as_ref()
}

/// Whether the typed capabilities offer `key`; `None` for a key this does
/// not know (it is looked up in the raw JSON).
fn typed_offers(t: &ServerCapabilities, key: &str) -> Option<bool> {
    fn one<T>(v: &Option<OneOf<bool, T>>) -> bool {
        matches!(v, Some(OneOf::Left(true) | OneOf::Right(_)))
    }
    Some(match key {
        "definitionProvider" => one(&t.definition_provider),
        "referencesProvider" => one(&t.references_provider),
        "documentSymbolProvider" => one(&t.document_symbol_provider),
        "workspaceSymbolProvider" => one(&t.workspace_symbol_provider),
        "renameProvider" => one(&t.rename_provider),
        "documentFormattingProvider" => one(&t.document_formatting_provider),
        "hoverProvider" => !matches!(
            t.hover_provider,
            None | Some(HoverProviderCapability::Simple(false))
        ),
        "typeDefinitionProvider" => !matches!(
            t.type_definition_provider,
            None | Some(TypeDefinitionProviderCapability::Simple(false))
        ),
        "implementationProvider" => !matches!(
            t.implementation_provider,
            None | Some(ImplementationProviderCapability::Simple(false))
        ),
        "callHierarchyProvider" => !matches!(
            t.call_hierarchy_provider,
            None | Some(CallHierarchyServerCapability::Simple(false))
        ),
        "codeActionProvider" => !matches!(
            t.code_action_provider,
            None | Some(CodeActionProviderCapability::Simple(false))
        ),
        "signatureHelpProvider" => t.signature_help_provider.is_some(),
        "diagnosticProvider" => t.diagnostic_provider.is_some(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_and_raw_answers_agree() {
        let raw = json!({
            "hoverProvider": true,
            "definitionProvider": {},
            "referencesProvider": false,
            "renameProvider": {"prepareProvider": true},
            "codeActionProvider": {"codeActionKinds": ["quickfix"], "resolveProvider": true},
            "executeCommandProvider": {"commands": ["a.b"]},
            "textDocumentSync": {"openClose": true, "save": {"includeText": true}},
            "typeHierarchyProvider": true,
            "workspace": {"fileOperations": {"willRename": {"filters": []}}},
        });
        let typed = ServerCaps::new(raw.clone());
        assert!(typed.typed().is_some());
        // The same JSON with one field lsp-types rejects: read raw.
        let mut odd = raw;
        odd["completionProvider"] = json!("yes");
        let odd = ServerCaps::new(odd);
        assert!(odd.typed().is_none());
        for caps in [&typed, &odd] {
            let offered: Vec<bool> = [
                "hoverProvider",
                "definitionProvider",
                "referencesProvider",
                "typeHierarchyProvider",
                "callHierarchyProvider",
            ]
            .iter()
            .map(|k| caps.offers(k))
            .collect();
            assert_eq!(offered, [true, true, false, true, false]);
            assert!(caps.rename_prepares());
            assert!(caps.code_action_resolves());
            assert_eq!(caps.code_action_kinds(), Some(vec!["quickfix".to_string()]));
            assert_eq!(caps.signature_triggers(), None);
            assert!(caps.will_rename_files());
            assert!(!caps.did_rename_files());
            assert!(caps.offers_command("a.b"));
            assert!(!caps.offers_command("c"));
            assert!(caps.save_includes_text());
        }
    }
}
