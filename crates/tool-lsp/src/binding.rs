//! [`LspBinding`]: how a run's language-server supervisor brings `lsp`,
//! `lsp_rename` and `lsp_code_action` into the registry (and `resolve`,
//! through the run's staging link, when no other binding did), wraps the
//! harness's write tools (and `resolve`, which writes staged changes) with
//! diagnostics on write, and sets the run's preview hook: the diagnostics
//! delta of staged changes. Each wrapped tool names the files a call
//! writes itself ([`tool_core::Tool::writes`]). The harness's own write
//! tools (not `resolve` or `lsp_code_action`, whose previews showed the
//! exact text) also format on write where the config turns it on.

use crate::catalog::{self, Catalog, Resolution, Role};
use crate::config::CatalogConfig;
use crate::edit::file_move::ResolveAnnouncingMoves;
use crate::edit::preview::ServerPreview;
use crate::on_write::{DiagnosticsOnWrite, FormatOnWrite, RunLedger};
use crate::supervisor::{LspSupervisor, Timeouts};
use crate::tools::{LspCodeActionTool, LspRenameTool, LspTool};
use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tool_core::{Binding, Registry, RegistryError, RunContext, StagingLink};

/// The harness's write tools: wrapped with diagnostics on write, and
/// formatted on write.
pub(crate) const HARNESS_WRITE_TOOLS: [&str; 3] = ["write", "edit", "apply_patch"];

/// This run's tools that write what a preview showed: wrapped with
/// diagnostics on write, never formatted.
const STAGED_WRITE_TOOLS: [&str; 2] = ["resolve", "lsp_code_action"];

/// A run's language-server supervisor, bound.
pub struct LspBinding {
    config: CatalogConfig,
    path_env: Option<OsString>,
    supervisor: OnceLock<Arc<LspSupervisor>>,
    ledger: Arc<RunLedger>,
    /// The run's staging link, when the host gave one.
    link: Mutex<Option<StagingLink>>,
}

impl LspBinding {
    pub fn new(config: CatalogConfig) -> Self {
        LspBinding {
            config,
            path_env: std::env::var_os("PATH"),
            supervisor: OnceLock::new(),
            ledger: Arc::default(),
            link: Mutex::default(),
        }
    }

    /// `$PATH` to find and run servers with (default: this process's).
    pub fn with_path(mut self, path: Option<OsString>) -> Self {
        self.path_env = path;
        self
    }

    fn timeouts(&self) -> Timeouts {
        let mut t = Timeouts::default();
        if let Some(ms) = self.config.request_timeout_ms {
            t.request = Duration::from_millis(ms);
        }
        if let Some(ms) = self.config.index_wait_ms {
            t.index_wait = Duration::from_millis(ms);
        }
        if let Some(ms) = self.config.diagnostics_wait_ms {
            t.diagnostics = Duration::from_millis(ms);
        }
        if let Some(ms) = self.config.idle_timeout_ms {
            t.idle = Duration::from_millis(ms.max(1));
        }
        t
    }

    /// The run's staging link (a private one when the host gave none).
    fn staging_link(&self) -> StagingLink {
        self.link
            .lock()
            .expect("link lock")
            .get_or_insert_with(StagingLink::default)
            .clone()
    }

    /// The supervisor, once registered.
    pub fn supervisor(&self) -> Option<&Arc<LspSupervisor>> {
        self.supervisor.get()
    }

    fn supervisor_for(&self, run: &RunContext) -> Arc<LspSupervisor> {
        self.supervisor
            .get_or_init(|| {
                Arc::new(
                    LspSupervisor::new(run.workspace.clone(), Catalog::with_config(&self.config))
                        .with_path(self.path_env.clone())
                        .with_timeouts(self.timeouts())
                        .with_memory_ceiling_mb(
                            self.config
                                .memory_ceiling_mb
                                .unwrap_or(crate::supervisor::MEMORY_CEILING_MB),
                        ),
                )
            })
            .clone()
    }
}

impl Binding for LspBinding {
    fn resource(&self) -> &'static str {
        "language-server supervisor"
    }

    fn link_staging(&self, link: &StagingLink) {
        *self.link.lock().expect("link lock") = Some(link.clone());
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        let sup = self.supervisor_for(run);
        let link = self.staging_link();
        // Staged renames, moves and code actions are resolved by the run's
        // `resolve`, whichever other families are bound.
        link.register_resolve(&run.workspace, registry)?;
        link.set_hook(Arc::new(ServerPreview::new(
            sup.clone(),
            self.ledger.clone(),
        )));
        registry.register(Arc::new(LspTool::new(sup.clone())))?;
        registry.register(Arc::new(
            LspRenameTool::new(sup.clone()).with_link(link.clone()),
        ))?;
        registry.register(Arc::new(LspCodeActionTool::new(sup, link)))?;
        Ok(())
    }

    fn after_all(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        let sup = self.supervisor_for(run);
        self.ledger.set_notice_board(registry.notices());
        sup.set_notice_board(registry.notices());
        let format = Arc::new(FormatOnWrite {
            settings: self.config.format_on_write.clone(),
            untrusted: self.config.untrusted_formatters.clone(),
        });
        if registry.contains("resolve") {
            // Inside diagnostics on write: the servers learn of a move
            // before the moved files are synced into them.
            let (sup, link, ledger) = (sup.clone(), self.staging_link(), self.ledger.clone());
            registry.wrap("resolve", move |inner| {
                Arc::new(ResolveAnnouncingMoves::new(inner, sup, link, ledger))
            })?;
        }
        for name in HARNESS_WRITE_TOOLS.into_iter().chain(STAGED_WRITE_TOOLS) {
            if registry.contains(name) {
                let (sup, ledger) = (sup.clone(), self.ledger.clone());
                let format = HARNESS_WRITE_TOOLS.contains(&name).then(|| format.clone());
                registry.wrap(name, move |inner| {
                    let wrapped = DiagnosticsOnWrite::new(inner, sup, ledger);
                    Arc::new(match format {
                        Some(f) => wrapped.with_format(f),
                        None => wrapped,
                    })
                })?;
            }
        }
        Ok(())
    }

    fn warm_up(&self, run: &RunContext) {
        if self.config.warm_up == Some(false) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Held weakly until the walk is done: a run dropped meanwhile is not
        // kept alive by its warm-up.
        let sup = Arc::downgrade(&self.supervisor_for(run));
        runtime.spawn(async move {
            let Some(sup) = sup.upgrade() else { return };
            let started = sup.warm_up().await;
            tracing::info!(servers = ?started, "lsp warm-up: servers running");
        });
    }

    /// A line each for the entries of the languages this checkout has files
    /// of, those a config added and those that could not be looked at the
    /// usual way; the others share one line per reason (`doctor --all`
    /// lists every one).
    fn doctor(&self, run: &RunContext) -> Vec<String> {
        self.doctor_lines(run, false)
    }

    fn doctor_all(&self, run: &RunContext) -> Vec<String> {
        self.doctor_lines(run, true)
    }
}

impl LspBinding {
    fn doctor_lines(&self, run: &RunContext, all: bool) -> Vec<String> {
        let cat = Catalog::with_config(&self.config);
        let root = run.workspace.root();
        let present = crate::source_walk::first_file_per_name(root);
        // An entry a config added or changed gets a line of its own.
        let builtin = catalog::builtin();
        let (mut usable_no_files, mut no_project, mut not_installed) =
            (Vec::new(), Vec::new(), Vec::new());
        let lines: Vec<String> = cat
            .entries()
            .iter()
            .filter_map(|e| {
                let r = catalog::resolve(e, root, root, self.path_env.as_ref());
                let own_line = all || e.first_file_in(&present).is_some() || !builtin.contains(e);
                if !own_line {
                    let group = match &r {
                        Resolution::Ready { .. } => &mut usable_no_files,
                        Resolution::NoMarker { .. } => &mut no_project,
                        Resolution::NoBinary { .. } => &mut not_installed,
                    };
                    group.push(e.id.clone());
                    return None;
                }
                Some(self.doctor_line(run, e, &r))
            })
            .collect();
        let groups = [
            ("usable, no files of theirs here", usable_no_files),
            ("no project of theirs here", no_project),
            ("not installed, no files of theirs here", not_installed),
        ];
        let grouped = groups.iter().any(|(_, ids)| !ids.is_empty());
        lines
            .into_iter()
            .chain(
                groups
                    .into_iter()
                    .filter(|(_, ids)| !ids.is_empty())
                    .map(|(why, ids)| format!("lsp — {why} ({}): {}", ids.len(), ids.join(", "))),
            )
            .chain(grouped.then(|| {
                "lsp — `agent-tools doctor --all` gives each of those a line, with why".to_string()
            }))
            .chain(
                cat.untrusted()
                    .iter()
                    .map(|u| format!("lsp {}", u.notice())),
            )
            .chain(
                self.config
                    .untrusted_formatters
                    .iter()
                    .map(|u| format!("lsp {}", u.notice())),
            )
            .chain(
                lsp_session::broker::doctor_lines(self.config.shared == Some(true))
                    .into_iter()
                    .map(|l| format!("lsp — {l}")),
            )
            .collect()
    }

    /// `"; runs on JDK 25.0.3 at /usr/lib/jvm/…"` for a server that needs
    /// a JDK (see [`catalog::ServerEntry::jdk`]), or why it cannot start.
    fn jdk_note(&self, e: &catalog::ServerEntry) -> String {
        let Some(min) = e.jdk else {
            return String::new();
        };
        let java_home = std::env::var_os("JAVA_HOME");
        match tool_core::jdk::find(min, java_home.as_ref(), self.path_env.as_ref()) {
            Ok(jdk) => {
                let build = tool_core::jdk::candidates(java_home.as_ref(), self.path_env.as_ref())
                    .into_iter()
                    .next()
                    .filter(|b| b.home != jdk.home)
                    .map(|b| {
                        format!(
                            ", the project's build on JDK {} at {}",
                            b.version,
                            b.home.display()
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "; runs on JDK {} at {} (needs {min}+){build}",
                    jdk.version,
                    jdk.home.display()
                )
            }
            Err(why) => format!("; cannot start: it {why}"),
        }
    }

    /// The line of one entry: where it starts, or why it cannot here.
    fn doctor_line(&self, run: &RunContext, e: &catalog::ServerEntry, r: &Resolution) -> String {
        let name = match e.role {
            Role::Server => e.id.clone(),
            Role::Linter => format!("{} (linter)", e.id),
        };
        let untested = match (e.tested, &e.untested_reason) {
            (Some(false), Some(why)) => format!("; untested: {why}"),
            (Some(false), None) => "; untested: no test here drives this server".to_string(),
            _ => String::new(),
        };
        match (r, r.why_not(e, &|p| run.workspace.relative(p))) {
            (
                Resolution::Ready {
                    root,
                    command,
                    program,
                },
                _,
            ) => format!(
                "lsp {name}: usable, starts at {} ({} → {}{}){}{untested}{}",
                run.workspace.relative(root),
                command.join(" "),
                program.display(),
                catalog::project_local_note(program, run.workspace.root()),
                self.jdk_note(e),
                e.partial_cover()
                    .map(|(_, note)| format!("; {note}"))
                    .unwrap_or_default()
            ),
            (_, Some(why)) => {
                format!("lsp {name}: not usable at the workspace root: {why}{untested}")
            }
            (_, None) => unreachable!(),
        }
    }
}
