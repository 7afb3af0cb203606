//! The `[lsp]` config: the changes a config layer makes to the built-in
//! catalog (`catalog/servers.toml`), in the catalog's own format, and how
//! the layers of one run fold into one [`CatalogConfig`].
//!
//! Layers, later winning: the user's config file, the project's config in
//! the checkout, the harness-supplied config. Each may add entries, replace
//! one by id, disable ids and set the timeouts.
//!
//! Invariant: a project config is the checkout's text, so it never makes
//! the host start a program the other layers did not already name. A
//! project entry whose command lines (server or checker) differ from the
//! entry in effect is kept only when the workspace is trusted; otherwise it
//! is set aside in [`CatalogConfig::untrusted`], which `status`, `doctor` and
//! a call for one of its files report — it is never run. The same holds for
//! a project's `[lsp.format_on_write]` formatter command (see
//! [`crate::format_on_write`]): kept only in a trusted workspace, else set
//! aside in [`CatalogConfig::untrusted_formatters`]. The fold of the
//! servers and the trust rule on them are [`tool_core::layers`]'s.

pub use crate::catalog::Untrusted;
use crate::catalog::{commands_of, Catalog, ServerEntry};
use crate::format_setting::FormatSetting;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use tool_core::layers::{self, EntryLayer, LayerEntry};

/// One layer's changes to the catalog (the `[lsp]` config section), or the
/// fold of a run's layers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogConfig {
    /// Entries added, or replacing a built-in one with the same id.
    #[serde(default)]
    pub servers: Vec<ServerEntry>,
    /// Built-in ids to drop.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Request timeout in milliseconds.
    #[serde(default)]
    pub request_timeout_ms: Option<u64>,
    /// How long a query waits for indexing, in milliseconds.
    #[serde(default)]
    pub index_wait_ms: Option<u64>,
    /// How long the write wrapper waits for diagnostics, in milliseconds.
    #[serde(default)]
    pub diagnostics_wait_ms: Option<u64>,
    /// A server unused this long is stopped (default 600000: 10 minutes);
    /// the next call that needs it starts it again.
    #[serde(default)]
    pub idle_timeout_ms: Option<u64>,
    /// A server whose processes' resident memory passes this many MiB is
    /// stopped, with a notice; the next call that needs it starts it afresh
    /// (default 8192; an entry's own `memory_ceiling_mb` wins).
    #[serde(default)]
    pub memory_ceiling_mb: Option<u64>,
    /// Whether a long run (`mcp`, `batch`) on a surface that writes starts
    /// the root's servers as it binds (default true).
    #[serde(default)]
    pub warm_up: Option<bool>,
    /// Whether the run's servers are shared with the other runs on the
    /// same checkout through the user's broker (default false: each run
    /// starts its own).
    #[serde(default)]
    pub shared: Option<bool>,
    /// Format on write, per LSP language id (`python = true`, or a table
    /// naming a `command` or a `server`); off for a language not named.
    #[serde(default)]
    pub format_on_write: BTreeMap<String, FormatSetting>,
    /// Project entries naming a command, not used because the workspace is
    /// not trusted.
    #[serde(skip)]
    pub untrusted: Vec<Untrusted>,
    /// Project formatter commands, not used because the workspace is not
    /// trusted.
    #[serde(skip)]
    pub untrusted_formatters: Vec<UntrustedFormatter>,
}

/// A project config's `[lsp.format_on_write]` entry naming a command, set
/// aside.
#[derive(Debug, Clone, PartialEq)]
pub struct UntrustedFormatter {
    /// The LSP language id it is for.
    pub language: String,
    pub command: Vec<String>,
    /// The project config file, as shown to the model.
    pub source: String,
}

impl UntrustedFormatter {
    /// The notice `doctor` and the first write of one of its files give.
    pub fn notice(&self) -> String {
        format!(
            "{} format_on_write.{} ({}): not run: project config names a command; trust the workspace to use it \
             (--trust-workspace)",
            self.source,
            self.language,
            self.command.join(" ")
        )
    }
}

impl LayerEntry for ServerEntry {
    fn id(&self) -> &str {
        &self.id
    }

    /// Whether this entry starts only command lines `current` already
    /// starts.
    fn starts_nothing_new(&self, current: &Self) -> bool {
        commands_of(self).all(|c| commands_of(current).any(|d| d == c))
    }
}

impl EntryLayer for CatalogConfig {
    type Entry = ServerEntry;
    type SetAside = Untrusted;

    fn entries(&mut self) -> &mut Vec<ServerEntry> {
        &mut self.servers
    }

    fn disabled(&mut self) -> &mut Vec<String> {
        &mut self.disable
    }

    fn set_aside(&mut self) -> &mut Vec<Untrusted> {
        &mut self.untrusted
    }

    fn set_aside_entry(entry: ServerEntry, source: &str) -> Untrusted {
        Untrusted {
            entry,
            source: source.to_string(),
        }
    }
}

impl CatalogConfig {
    /// `later` folded over this layer: its entries replace same-id ones (or
    /// are added), its disabled ids join these, its timeouts win.
    pub fn then(mut self, mut later: CatalogConfig) -> CatalogConfig {
        layers::fold(&mut self, &mut later);
        self.request_timeout_ms = later.request_timeout_ms.or(self.request_timeout_ms);
        self.index_wait_ms = later.index_wait_ms.or(self.index_wait_ms);
        self.diagnostics_wait_ms = later.diagnostics_wait_ms.or(self.diagnostics_wait_ms);
        self.idle_timeout_ms = later.idle_timeout_ms.or(self.idle_timeout_ms);
        self.warm_up = later.warm_up.or(self.warm_up);
        self.shared = later.shared.or(self.shared);
        self.memory_ceiling_mb = later.memory_ceiling_mb.or(self.memory_ceiling_mb);
        // Per language, the later setting replaces the earlier one whole.
        self.format_on_write.extend(later.format_on_write);
        self.untrusted_formatters.extend(later.untrusted_formatters);
        self
    }

    /// A project config (`source`, as shown) folded over this layer. Unless
    /// `trusted`, an entry naming a command line the entry in effect for its
    /// id does not already start (or that adds a new id) is set aside, not
    /// used; settings-only changes (no new command) and disabled ids apply.
    pub fn then_project(self, mut project: CatalogConfig, source: &str, trusted: bool) -> Self {
        layers::screen_project(&mut project, || self.in_effect(), source, trusted);
        if !trusted {
            // A formatter command is kept only when the layers below
            // already run the same one for that language.
            let formatters = std::mem::take(&mut project.format_on_write);
            for (language, setting) in formatters {
                let current = self
                    .format_on_write
                    .get(&language)
                    .and_then(|s| s.command.as_ref());
                match &setting.command {
                    Some(command) if Some(command) != current => {
                        project.untrusted_formatters.push(UntrustedFormatter {
                            language,
                            command: command.clone(),
                            source: source.to_string(),
                        });
                    }
                    _ => {
                        project.format_on_write.insert(language, setting);
                    }
                }
            }
        }
        self.then(project)
    }

    /// The catalog for a run whose surface may not run the project's code
    /// (the read surface): built-in servers that would run it by default
    /// are started with that switched off. Today that is rust-analyzer
    /// (build scripts and proc macros while indexing, `cargo check` on
    /// save). An entry the user configured for the same id is kept as
    /// given: the user chose it.
    pub fn without_project_code(mut self) -> Self {
        let user_has = |id: &str| self.servers.iter().any(|e| e.id == id);
        if !user_has("rust") && !self.disable.iter().any(|d| d == "rust") {
            if let Some(mut rust) = crate::catalog::builtin()
                .into_iter()
                .find(|e| e.id == "rust")
            {
                rust.initialization_options = Some(rust_analyzer_without_project_code());
                rust.save_check_progress = None;
                self.servers.push(rust);
            }
        }
        self
    }
}

/// rust-analyzer's settings that keep it from running the project's code:
/// no build scripts, no proc-macro expansion, no `cargo check` on save.
pub fn rust_analyzer_without_project_code() -> Value {
    serde_json::json!({
        "cargo": {"buildScripts": {"enable": false}},
        "procMacro": {"enable": false},
        "checkOnSave": false
    })
}

/// The catalog a configuration makes (its impl lives here, beside the
/// configuration, so the catalog does not depend on it).
impl Catalog {
    /// The built-ins changed by `config`.
    pub fn with_config(config: &CatalogConfig) -> Self {
        Catalog::with_untrusted(config.in_effect(), config.untrusted.clone())
            .with_sharing(config.shared == Some(true))
    }
}

impl CatalogConfig {
    /// The entries in effect: the built-ins less the disabled ids, then
    /// changed by this config's entries (so an entry given for a disabled
    /// id is kept).
    fn in_effect(&self) -> Vec<ServerEntry> {
        let mut entries: Vec<ServerEntry> = crate::catalog::builtin()
            .into_iter()
            .filter(|e| !self.disable.contains(&e.id))
            .collect();
        layers::replace_by_id(&mut entries, self.servers.iter().cloned());
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(v: Value) -> CatalogConfig {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn later_layers_replace_entries_join_disabled_ids_and_win_timeouts() {
        let user = layer(json!({
            "disable": ["dart"], "request_timeout_ms": 5000,
            "servers": [{"id": "zig", "extensions": {"zig": "zig"}, "commands": [["zls"]], "root_markers": ["build.zig"]}]
        }));
        let harness = layer(json!({
            "disable": ["go"], "index_wait_ms": 100,
            "servers": [{"id": "zig", "extensions": {"zig": "zig"}, "commands": [["zls", "--debug"]], "root_markers": ["build.zig"]}]
        }));
        let all = user.then(harness);
        assert_eq!(all.disable, ["dart", "go"]);
        assert_eq!(
            (all.request_timeout_ms, all.index_wait_ms),
            (Some(5000), Some(100))
        );
        assert_eq!(all.servers.len(), 1);
        assert_eq!(all.servers[0].commands, [["zls", "--debug"]]);
    }

    #[test]
    fn an_untrusted_project_changes_settings_but_names_no_command() {
        let project = || {
            layer(json!({
                "disable": ["dart"], "request_timeout_ms": 7000,
                "servers": [
                    // Same command as the built-in: a settings change.
                    {"id": "go", "extensions": {"go": "go"}, "commands": [["gopls"]], "root_markers": ["go.mod"],
                     "settings": {"gopls": {"staticcheck": true}}},
                    // A new command for a built-in id.
                    {"id": "python", "extensions": {"py": "python"}, "commands": [["./evil"]], "root_markers": ["x"]},
                    // A new id.
                    {"id": "evil", "extensions": {"evil": "evil"}, "commands": [["sh", "-c", "touch M"]], "root_markers": ["x"]}
                ]
            }))
        };
        let cfg = CatalogConfig::default().then_project(project(), ".agent-tools.toml", false);
        assert_eq!(cfg.disable, ["dart"]);
        assert_eq!(cfg.request_timeout_ms, Some(7000));
        let kept: Vec<&str> = cfg.servers.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(kept, ["go"]);
        let notices: Vec<String> = cfg.untrusted.iter().map(Untrusted::notice).collect();
        expect_test::expect![[r#"
            .agent-tools.toml server `python` (./evil): not run: project config names a command; trust the workspace to use it (--trust-workspace)
            .agent-tools.toml server `evil` (sh -c touch M): not run: project config names a command; trust the workspace to use it (--trust-workspace)"#]]
        .assert_eq(&notices.join("\n"));
        let cat = Catalog::with_config(&cfg);
        assert_eq!(
            cat.get("python").unwrap().commands[0],
            ["basedpyright-langserver", "--stdio"]
        );
        assert!(cat.get("evil").is_none());

        let trusted = CatalogConfig::default().then_project(project(), ".agent-tools.toml", true);
        assert!(trusted.untrusted_formatters.is_empty());
        assert!(trusted.untrusted.is_empty());
        let cat = Catalog::with_config(&trusted);
        assert_eq!(cat.get("python").unwrap().commands, [["./evil"]]);
        assert!(cat.get("evil").is_some());
    }

    #[test]
    fn format_on_write_is_per_language_later_layers_win_and_an_untrusted_project_names_no_command()
    {
        let user = layer(json!({"format_on_write": {
            "python": true,
            "go": {"command": ["gofmt"]},
            "c": {"server": "c"}
        }}));
        let harness = layer(json!({"format_on_write": {"c": false}}));
        let cfg = user.then(harness);
        let shown = |cfg: &CatalogConfig| format!("{:?}", cfg.format_on_write);
        expect_test::expect![[r#"{"c": FormatSetting { enabled: false, command: None, server: None, timeout_ms: None }, "go": FormatSetting { enabled: true, command: Some(["gofmt"]), server: None, timeout_ms: None }, "python": FormatSetting { enabled: true, command: None, server: None, timeout_ms: None }}"#]]
        .assert_eq(&shown(&cfg));

        let project = || {
            layer(json!({"format_on_write": {
                // The same command as in effect, and no command at all: kept.
                "go": {"command": ["gofmt"], "timeout_ms": 500},
                "typescript": true,
                // A new command: set aside.
                "python": {"command": ["sh", "-c", "touch M"]}
            }}))
        };
        let untrusted = cfg
            .clone()
            .then_project(project(), ".agent-tools.toml", false);
        expect_test::expect![[r#"{"c": FormatSetting { enabled: false, command: None, server: None, timeout_ms: None }, "go": FormatSetting { enabled: true, command: Some(["gofmt"]), server: None, timeout_ms: Some(500) }, "python": FormatSetting { enabled: true, command: None, server: None, timeout_ms: None }, "typescript": FormatSetting { enabled: true, command: None, server: None, timeout_ms: None }}"#]]
        .assert_eq(&shown(&untrusted));
        let notices: Vec<String> = untrusted
            .untrusted_formatters
            .iter()
            .map(UntrustedFormatter::notice)
            .collect();
        expect_test::expect![[r#"
            .agent-tools.toml format_on_write.python (sh -c touch M): not run: project config names a command; trust the workspace to use it (--trust-workspace)"#]]
        .assert_eq(&notices.join("\n"));

        let trusted = cfg.then_project(project(), ".agent-tools.toml", true);
        assert!(trusted.untrusted_formatters.is_empty());
        assert_eq!(
            trusted.format_on_write["python"].command,
            Some(vec!["sh".into(), "-c".into(), "touch M".into()])
        );
    }
}
