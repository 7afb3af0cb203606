//! The servers that check a written file (its own, then each linter beside
//! it), and why a check has no answer.

use crate::supervisor::{LspSupervisor, ServerSlot, Target};
use std::path::Path;
use std::sync::Arc;

/// Why a check of one written file has no answer.
pub(crate) enum Unchecked {
    /// The bound ran out; the wait goes on in the background.
    Pending(String),
    Failed(String),
    /// The server has never delivered diagnostics: said once per run.
    Silent(String),
}

impl Unchecked {
    pub(crate) fn reason(&self) -> &str {
        match self {
            Unchecked::Pending(why) | Unchecked::Failed(why) | Unchecked::Silent(why) => why,
        }
    }
}

/// One server that checks a written file: the file's own, or a linter
/// beside it. Each has its own baseline in the ledger, under its id.
pub(crate) struct Checker {
    /// The catalog entry's id: the ledger's key beside the path.
    pub(crate) id: String,
    /// `(id)` after each of its lines when the file has several checkers.
    pub(crate) label: String,
    /// Its slot and the file's language id there, or why it has none.
    slot: Result<(Arc<ServerSlot>, String), String>,
}

impl Checker {
    /// The file's checkers: its server, then each linter for it that
    /// resolves here (one whose binary or root marker is missing is not
    /// one, as in `lsp` op `diagnostics`).
    pub(crate) fn of(sup: &LspSupervisor, path: &Path) -> Vec<Checker> {
        let Some((entry, _)) = sup.catalog().for_file(path) else {
            return Vec::new();
        };
        let mut out = vec![Checker {
            id: entry.id.clone(),
            label: String::new(),
            slot: sup.server_slot_for(path).map_err(|e| e.to_string()),
        }];
        for (id, slot) in sup.linter_slots_for(path) {
            let Ok(slot) = slot else { continue };
            let language_id = slot.entry.language_of(path).unwrap_or_default();
            out.push(Checker {
                id,
                label: String::new(),
                slot: Ok((slot, language_id)),
            });
        }
        if out.len() > 1 {
            for c in &mut out {
                c.label = c.id.clone();
            }
        }
        out
    }

    /// What its clean answer did not check, when its entry's diagnostics
    /// cover less than a full check (see
    /// [`crate::ServerEntry::partial_cover`]).
    pub(crate) fn partial_cover(&self) -> Option<(String, String)> {
        let (slot, _) = self.slot.as_ref().ok()?;
        let (covers, note) = slot.entry.partial_cover()?;
        Some((covers.to_string(), note))
    }

    /// Whether its server reads a document from the disk when it is opened
    /// (see [`crate::ServerEntry::open_reads_disk`]).
    pub(crate) fn reads_disk_on_open(&self) -> bool {
        self.slot
            .as_ref()
            .is_ok_and(|(slot, _)| slot.entry.open_reads_disk)
    }

    /// Its running server, started if need be.
    pub(crate) async fn target(&self, sup: &LspSupervisor) -> Result<Target, Unchecked> {
        let (slot, language_id) = self.slot.clone().map_err(Unchecked::Failed)?;
        let client = sup
            .ensure_running(&slot)
            .await
            .map_err(|e| Unchecked::Failed(e.to_string()))?;
        Ok(Target {
            client,
            slot,
            language_id,
        })
    }
}
