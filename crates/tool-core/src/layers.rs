//! Config layers over a built-in catalog, folded into one: the rule the
//! `[lsp]` servers and the `[debug]` adapters share, written once.
//!
//! Layers, later winning: the built-in catalog, the user's config file, the
//! project's `.agent-tools.toml`, the harness-supplied config. A layer's
//! entries replace an earlier entry with the same id, in its place, or are
//! added after the others; its `disable` ids join the earlier ones.
//!
//! Invariant (the trust rule): a project layer is the checkout's text, so
//! it never makes the host start a program the layers below did not already
//! name. Unless the workspace is trusted, a project entry that would start
//! something the entry in effect for its id does not start — or that adds a
//! new id — is set aside with the file it came from, to be reported and
//! never run. Disabling an id needs no trust: it starts nothing.
//!
//! This module knows no entry type: [`LayerEntry`] says what the fold needs
//! of an entry, [`EntryLayer`] where a config layer keeps its entries. Each
//! config keeps its own way of building the entries in effect (which order
//! `disable` and replacement apply in), using [`replace_by_id`].

/// What the fold needs of one catalog entry.
pub trait LayerEntry: Clone {
    /// The id a later layer's entry replaces this one by.
    fn id(&self) -> &str;

    /// Whether this entry starts only what `current`, the entry in effect
    /// for the same id, already starts: the trust rule's test.
    fn starts_nothing_new(&self, current: &Self) -> bool;
}

/// The entry part of one config layer, or of the fold of several.
pub trait EntryLayer {
    type Entry: LayerEntry;
    /// How the layer records a project entry set aside (with its source,
    /// for the notice).
    type SetAside;

    /// Entries added, or replacing an earlier one with the same id.
    fn entries(&mut self) -> &mut Vec<Self::Entry>;
    /// Ids to drop.
    fn disabled(&mut self) -> &mut Vec<String>;
    /// Project entries set aside by the trust rule.
    fn set_aside(&mut self) -> &mut Vec<Self::SetAside>;
    /// The record of `entry`, set aside from the project config `source`.
    fn set_aside_entry(entry: Self::Entry, source: &str) -> Self::SetAside;
}

/// `entries` changed by `later`: each replaces the entry with its id, in its
/// place, or is added at the end.
pub fn replace_by_id<E: LayerEntry>(entries: &mut Vec<E>, later: impl IntoIterator<Item = E>) {
    for entry in later {
        match entries.iter_mut().find(|e| e.id() == entry.id()) {
            Some(slot) => *slot = entry,
            None => entries.push(entry),
        }
    }
}

/// `later`'s entry part folded into `earlier`: its entries replace same-id
/// ones (or are added), its disabled ids join these (each once), its
/// set-aside entries follow these. `later`'s entry part is left empty; the
/// caller folds the rest of the layer (timeouts and the like).
pub fn fold<L: EntryLayer>(earlier: &mut L, later: &mut L) {
    replace_by_id(earlier.entries(), std::mem::take(later.entries()));
    for id in std::mem::take(later.disabled()) {
        if !earlier.disabled().contains(&id) {
            earlier.disabled().push(id);
        }
    }
    earlier
        .set_aside()
        .extend(std::mem::take(later.set_aside()));
}

/// The trust rule on a project layer (`source`, as shown), before it is
/// folded: unless `trusted`, each entry that adds an id not among the
/// entries in effect below it (`in_effect`, asked only then), or starts
/// something the entry in effect for its id does not, moves to the layer's
/// set-aside list. Disabled ids stay.
pub fn screen_project<L: EntryLayer>(
    project: &mut L,
    in_effect: impl FnOnce() -> Vec<L::Entry>,
    source: &str,
    trusted: bool,
) {
    if trusted {
        return;
    }
    let in_effect = in_effect();
    let (kept, set_aside): (Vec<L::Entry>, Vec<L::Entry>) = std::mem::take(project.entries())
        .into_iter()
        .partition(|e| {
            in_effect
                .iter()
                .find(|current| current.id() == e.id())
                .is_some_and(|current| e.starts_nothing_new(current))
        });
    *project.entries() = kept;
    project.set_aside().extend(
        set_aside
            .into_iter()
            .map(|entry| L::set_aside_entry(entry, source)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry that starts one command.
    #[derive(Debug, Clone, PartialEq)]
    struct Server {
        id: &'static str,
        command: &'static str,
    }

    impl LayerEntry for Server {
        fn id(&self) -> &str {
            self.id
        }
        fn starts_nothing_new(&self, current: &Self) -> bool {
            self.command == current.command
        }
    }

    #[derive(Debug, Default)]
    struct Layer {
        servers: Vec<Server>,
        disable: Vec<String>,
        untrusted: Vec<String>,
    }

    impl EntryLayer for Layer {
        type Entry = Server;
        type SetAside = String;
        fn entries(&mut self) -> &mut Vec<Server> {
            &mut self.servers
        }
        fn disabled(&mut self) -> &mut Vec<String> {
            &mut self.disable
        }
        fn set_aside(&mut self) -> &mut Vec<String> {
            &mut self.untrusted
        }
        fn set_aside_entry(entry: Server, source: &str) -> String {
            format!("{source}: {} ({})", entry.id, entry.command)
        }
    }

    fn servers(list: &[(&'static str, &'static str)]) -> Vec<Server> {
        list.iter()
            .map(|&(id, command)| Server { id, command })
            .collect()
    }

    fn layer(list: &[(&'static str, &'static str)], disable: &[&str]) -> Layer {
        Layer {
            servers: servers(list),
            disable: disable
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            untrusted: Vec::new(),
        }
    }

    fn shown(layer: &Layer) -> String {
        let servers: Vec<String> = layer
            .servers
            .iter()
            .map(|s| format!("{}={}", s.id, s.command))
            .collect();
        format!(
            "servers [{}] disable [{}] set aside [{}]",
            servers.join(", "),
            layer.disable.join(", "),
            layer.untrusted.join("; ")
        )
    }

    #[test]
    fn a_later_entry_replaces_in_place_a_new_one_is_added_at_the_end() {
        let mut entries = servers(&[("go", "gopls"), ("py", "pyright")]);
        replace_by_id(
            &mut entries,
            servers(&[("zig", "zls"), ("go", "gopls -debug")]),
        );
        assert_eq!(
            entries,
            servers(&[("go", "gopls -debug"), ("py", "pyright"), ("zig", "zls")])
        );
    }

    #[test]
    fn folding_replaces_entries_joins_disabled_ids_once_and_keeps_set_aside_ones() {
        let mut user = layer(&[("zig", "zls"), ("go", "gopls")], &["dart"]);
        user.untrusted.push("earlier".into());
        let mut harness = layer(&[("zig", "zls --debug"), ("c", "clangd")], &["go", "dart"]);
        harness.untrusted.push("later".into());
        fold(&mut user, &mut harness);
        assert_eq!(
            shown(&user),
            "servers [zig=zls --debug, go=gopls, c=clangd] disable [dart, go] set aside [earlier; later]"
        );
        assert_eq!(shown(&harness), "servers [] disable [] set aside []");
    }

    #[test]
    fn an_untrusted_project_keeps_only_entries_that_start_nothing_new() {
        let in_effect = || servers(&[("go", "gopls"), ("py", "pyright")]);
        let project = || {
            layer(
                &[("go", "gopls"), ("py", "./evil"), ("new", "sh -c x")],
                &["dart"],
            )
        };
        let mut untrusted = project();
        screen_project(&mut untrusted, in_effect, ".agent-tools.toml", false);
        assert_eq!(
            shown(&untrusted),
            "servers [go=gopls] disable [dart] \
             set aside [.agent-tools.toml: py (./evil); .agent-tools.toml: new (sh -c x)]"
        );

        let mut trusted = project();
        screen_project(&mut trusted, in_effect, ".agent-tools.toml", true);
        assert_eq!(
            shown(&trusted),
            "servers [go=gopls, py=./evil, new=sh -c x] disable [dart] set aside []"
        );
    }
}
