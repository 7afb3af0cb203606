//! The adapter part of the `[debug]` config: the changes a config layer
//! makes to the built-in catalog (`catalog/adapters.toml`), in the
//! catalog's own format (`[[debug.adapters]]` tables, `disable = [ids]`),
//! and how the layers of one run fold into one [`AdapterConfig`].
//!
//! Layers, later winning: the user's config file, the project's config in
//! the checkout, the harness-supplied config. Each may add adapters,
//! replace one by id and disable ids.
//!
//! Invariant: a project config is the checkout's text, so it never makes
//! the host start a program the other layers did not already name. A
//! project entry is kept without trust only when it starts what the entry
//! in effect for its id starts: the same kind and connection, no command
//! line that one lacks, and the same `launch_template` (a template can name
//! programs too: debugpy's `python`, lldb's `initCommands`). Otherwise it is
//! set aside in [`AdapterConfig::untrusted`], which `adapters`, `doctor`
//! and a launch that would have used it report — it is never run.
//! Disabling an id needs no trust: it starts nothing. The fold and the
//! trust rule are [`tool_core::layers`]'s; what "starts something new"
//! means for an adapter is written here.

use crate::catalog::{AdapterSpec, UntrustedAdapter};
use serde::Deserialize;
use tool_core::layers::{self, EntryLayer, LayerEntry};

/// One layer's changes to the adapter catalog, or the fold of a run's
/// layers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterConfig {
    /// Adapters added, or replacing a built-in one with the same id.
    #[serde(default)]
    pub adapters: Vec<AdapterSpec>,
    /// Built-in (or earlier layers') ids to drop.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Project entries that would start something new, not used because
    /// the workspace is not trusted.
    #[serde(skip)]
    pub untrusted: Vec<UntrustedAdapter>,
}

impl LayerEntry for AdapterSpec {
    fn id(&self) -> &str {
        &self.id
    }

    /// Whether this adapter starts only what `current` already starts.
    fn starts_nothing_new(&self, current: &Self) -> bool {
        self.kind == current.kind
            && self.connect == current.connect
            && self.launch_template == current.launch_template
            && self.commands.iter().all(|c| current.commands.contains(c))
    }
}

impl EntryLayer for AdapterConfig {
    type Entry = AdapterSpec;
    type SetAside = UntrustedAdapter;

    fn entries(&mut self) -> &mut Vec<AdapterSpec> {
        &mut self.adapters
    }

    fn disabled(&mut self) -> &mut Vec<String> {
        &mut self.disable
    }

    fn set_aside(&mut self) -> &mut Vec<UntrustedAdapter> {
        &mut self.untrusted
    }

    fn set_aside_entry(spec: AdapterSpec, source: &str) -> UntrustedAdapter {
        UntrustedAdapter {
            spec,
            source: source.to_string(),
        }
    }
}

impl AdapterConfig {
    /// `later` folded over this layer: its entries replace same-id ones (or
    /// are added), its disabled ids join these.
    pub fn then(mut self, mut later: AdapterConfig) -> AdapterConfig {
        layers::fold(&mut self, &mut later);
        self
    }

    /// A project config (`source`, as shown) folded over this layer. Unless
    /// `trusted`, an entry that would start something the entry in effect
    /// for its id does not (or that adds a new id) is set aside, not used;
    /// entries that change only markers, extensions, the evaluate context
    /// or the filters, and disabled ids, apply.
    pub fn then_project(self, mut project: AdapterConfig, source: &str, trusted: bool) -> Self {
        layers::screen_project(&mut project, || self.specs(), source, trusted);
        self.then(project)
    }

    /// The catalog's entries this config gives: the built-in ones, in
    /// routing order, with this config's replacing same-id ones, new ones
    /// after them, and disabled ids left out.
    pub fn specs(&self) -> Vec<AdapterSpec> {
        let mut specs = crate::adapters::builtin();
        layers::replace_by_id(&mut specs, self.adapters.iter().cloned());
        specs.retain(|s| !self.disable.contains(&s.id));
        specs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(text: &str) -> AdapterConfig {
        toml::from_str(text).unwrap()
    }

    fn ids(cfg: &AdapterConfig) -> String {
        cfg.specs()
            .iter()
            .map(|s| {
                format!(
                    "{}={}",
                    s.id,
                    s.commands.first().map(|c| c.join(" ")).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    const PYDBG: &str = r#"
        [[adapters]]
        id = "pydbg"
        kind = "custom"
        commands = [["python3", "-m", "debugpy.adapter"]]
        markers = ["requirements.txt"]
        extensions = ["py"]
        connect = "stdio"
        evaluate_context = "repl"
    "#;

    #[test]
    fn later_layers_replace_adapters_by_id_and_join_disabled_ids() {
        let user = layer(&format!("disable = [\"dart\"]\n{PYDBG}"));
        let harness = layer(
            r#"
            disable = ["lldb"]
            [[adapters]]
            id = "pydbg"
            kind = "custom"
            commands = [["python3.12", "-m", "debugpy.adapter"]]
            markers = ["requirements.txt"]
            extensions = ["py"]
            connect = "stdio"
            evaluate_context = "repl"
            [[adapters]]
            id = "delve"
            kind = "delve"
            commands = [["/opt/go/bin/dlv", "dap", "--listen", "127.0.0.1:0"]]
            markers = ["go.mod"]
            extensions = ["go"]
            connect = "tcp_listen"
            evaluate_context = "repl"
            "#,
        );
        let all = AdapterConfig::default().then(user).then(harness);
        assert_eq!(all.disable, ["dart", "lldb"]);
        expect_test::expect!["debugpy=, delve=/opt/go/bin/dlv dap --listen 127.0.0.1:0, node=node, java=java, pydbg=python3.12 -m debugpy.adapter"]
        .assert_eq(&ids(&all));
    }

    #[test]
    fn an_untrusted_project_changes_routing_but_starts_nothing_new() {
        let project = || {
            layer(
                r#"
                disable = ["dart"]
                # The built-in's command and template: only the markers change.
                [[adapters]]
                id = "delve"
                kind = "delve"
                commands = [["dlv", "dap", "--listen", "127.0.0.1:0"]]
                markers = ["go.work", "go.mod"]
                extensions = ["go"]
                connect = "tcp_listen"
                evaluate_context = "repl"
                # A built-in id with a launch template naming a program.
                [[adapters]]
                id = "debugpy"
                kind = "debugpy"
                commands = []
                markers = ["requirements.txt"]
                extensions = ["py"]
                connect = "stdio"
                evaluate_context = "repl"
                launch_template = { python = ["./evil"] }
                # A new id.
                [[adapters]]
                id = "evil"
                kind = "custom"
                commands = [["sh", "-c", "touch M"]]
                markers = ["requirements.txt"]
                extensions = ["evil"]
                connect = "stdio"
                evaluate_context = "repl"
                "#,
            )
        };
        let cfg = AdapterConfig::default().then_project(project(), ".agent-tools.toml", false);
        assert_eq!(cfg.disable, ["dart"]);
        let notices: Vec<String> = cfg.untrusted.iter().map(UntrustedAdapter::notice).collect();
        expect_test::expect![[r#"
            .agent-tools.toml adapter `debugpy` (kind debugpy): not run: project config names a command; trust the workspace to use it (--trust-workspace)
            .agent-tools.toml adapter `evil` (sh -c touch M): not run: project config names a command; trust the workspace to use it (--trust-workspace)"#]]
        .assert_eq(&notices.join("\n"));
        let specs = cfg.specs();
        expect_test::expect![
            "debugpy=, lldb=lldb-dap, delve=dlv dap --listen 127.0.0.1:0, node=node, java=java"
        ]
        .assert_eq(&ids(&cfg));
        assert_eq!(specs[2].markers, ["go.work", "go.mod"]);
        assert_eq!(specs[0].launch_template, serde_json::json!({}));

        let trusted = AdapterConfig::default().then_project(project(), ".agent-tools.toml", true);
        assert!(trusted.untrusted.is_empty());
        expect_test::expect!["debugpy=, lldb=lldb-dap, delve=dlv dap --listen 127.0.0.1:0, node=node, java=java, evil=sh -c touch M"]
        .assert_eq(&ids(&trusted));
        assert_eq!(
            trusted.specs()[0].launch_template,
            serde_json::json!({"python": ["./evil"]})
        );
    }

    #[test]
    fn a_mistake_in_an_entry_is_named() {
        let err = toml::from_str::<AdapterConfig>(
            "[[adapters]]\nid = \"x\"\nkind = \"custom\"\ncomands = []\n",
        )
        .unwrap_err();
        expect_test::expect!["unknown field `comands`, expected one of `id`, `kind`, `commands`, `markers`, `extensions`, `connect`, `launch_template`, `evaluate_context`, `exception_filters`"].assert_eq(err.message());
    }
}
