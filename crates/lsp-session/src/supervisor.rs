//! The run's language-server supervisor: one client per (server, root),
//! started lazily on the first call that needs it, restarted with backoff
//! after a crash up to a limit, stopped when unused for the idle timeout
//! (the next call starts it again), and stopped with the run.

use crate::catalog::{self, Catalog, Resolution, RootRule, ServerEntry};
use crate::client::{LspClient, StartSpec};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tool_core::notices::{NoticeBoard, NoticeLevel};
use tool_core::{ToolError, Workspace};

/// Every bound the supervisor keeps.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// One request.
    pub request: Duration,
    /// Starting a server through `initialize`.
    pub startup: Duration,
    /// How long a query waits for indexing before answering "still indexing".
    pub index_wait: Duration,
    /// How long diagnostics may take to become fresh.
    pub diagnostics: Duration,
    /// A project checker (`diagnostics "*"`).
    pub checker: Duration,
    /// A server unused this long is stopped.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            request: Duration::from_secs(20),
            startup: Duration::from_secs(30),
            index_wait: Duration::from_mins(1),
            diagnostics: Duration::from_secs(10),
            checker: Duration::from_mins(3),
            idle: Duration::from_mins(10),
        }
    }
}

/// A server's memory ceiling in MiB unless the config says otherwise: far
/// above what a large project needs (rust-analyzer or tsserver on a big
/// monorepo take a few GiB), far below a runaway (a tsserver at 61.5 GB was
/// reported of a peer harness).
pub const MEMORY_CEILING_MB: u64 = 8192;

/// After this many crashes in a row a server is not restarted until `reload`.
pub const MAX_RESTARTS: u32 = 5;

fn backoff(crashes: u32) -> Duration {
    let ms = 200u64.saturating_mul(1 << crashes.saturating_sub(1).min(5));
    Duration::from_millis(ms.min(5_000))
}

#[derive(Default)]
struct SlotState {
    client: Option<Arc<LspClient>>,
    crashes: u32,
    last_crash: Option<(Instant, String)>,
    /// When a call last asked for the client.
    last_used: Option<Instant>,
    /// When the idle timeout stopped it (until it starts again).
    stopped_idle: Option<Instant>,
    /// The last time it passed its memory ceiling: when, its MiB, the
    /// ceiling's; and how many times in all.
    over_ceiling: Option<(Instant, u64, u64)>,
    times_over_ceiling: u32,
}

impl SlotState {
    /// Move a client that died on its own into the crash record, and one
    /// whose shared server the broker stopped over its ceiling or for
    /// another run's `reload` into its own: what the run is told of that
    /// (once: the client is dropped here).
    fn observe(&mut self, slot: &ServerSlot) -> Option<String> {
        use crate::broker_link::ServerEnd;
        let c = self.client.as_ref()?;
        let why = c.gone()?;
        let told = match c.ended_by_broker() {
            Some(ServerEnd::OverCeiling { rss_mb, ceiling_mb }) => {
                self.over_ceiling = Some((Instant::now(), rss_mb, ceiling_mb));
                self.times_over_ceiling += 1;
                Some(format!(
                    "lsp: {} at {} (shared, pid {}) used {rss_mb} MiB, over its memory ceiling of {ceiling_mb} MiB: the broker stopped it for every run attached; the next call that needs it starts it afresh",
                    slot.entry.id, slot.shown_root, c.pid()
                ))
            }
            Some(ServerEnd::Reloaded) => Some(format!(
                "lsp: {} at {} (shared, pid {}) was restarted by another run's `reload`; the next call attaches to the new one",
                slot.entry.id, slot.shown_root, c.pid()
            )),
            _ if c.crashed() => {
                self.crashes += 1;
                self.last_crash = Some((Instant::now(), why));
                None
            }
            _ => None,
        };
        self.client = None;
        told
    }
}

/// Post `text` on the run's board, if one is bound.
fn tell(board: &Mutex<Option<NoticeBoard>>, text: Option<String>) {
    if let (Some(text), Some(board)) = (text, board.lock().expect("board").as_ref()) {
        board.post("lsp", NoticeLevel::Warning, text);
    }
}

/// One (server, root).
pub struct ServerSlot {
    pub entry: ServerEntry,
    pub root: PathBuf,
    /// The root as the model reads it (relative to the workspace).
    shown_root: String,
    pub command: Vec<String>,
    pub program: PathBuf,
    state: tokio::sync::Mutex<SlotState>,
}

/// A server the call can use, with what the call needs to know of the file.
#[derive(Clone)]
pub struct Target {
    pub client: Arc<LspClient>,
    pub slot: Arc<ServerSlot>,
    pub language_id: String,
}

impl ServerSlot {
    /// The command as `status` shows it.
    pub fn display(&self) -> String {
        self.command.join(" ")
    }

    /// Its client, if it is running (never starts it).
    pub async fn running_client(&self) -> Option<Arc<LspClient>> {
        self.state.lock().await.client.clone()
    }
}

type SlotMap = BTreeMap<(String, PathBuf), Arc<ServerSlot>>;

/// What the keeper of a run's servers needs: the idle timeout, the memory
/// ceiling, and where to post what it did.
#[derive(Clone)]
struct Upkeep {
    idle: Duration,
    ceiling_mb: u64,
    board: Arc<Mutex<Option<NoticeBoard>>>,
    sharing: Arc<Mutex<Sharing>>,
}

/// The broker is gone or cannot be reached: the run's own servers from now
/// on, and a notice on `board` saying so (once).
fn lose_broker(sharing: &Mutex<Sharing>, board: &Mutex<Option<NoticeBoard>>, why: &str) {
    let mut sharing = sharing.lock().expect("sharing");
    if matches!(*sharing, Sharing::On(_)) {
        *sharing = Sharing::Lost(why.to_string());
        drop(sharing);
        let text = format!(
            "lsp: the shared-server broker is gone ({why}); this run starts servers of its own from now on"
        );
        if let Some(board) = board.lock().expect("board").as_ref() {
            board.post("lsp", NoticeLevel::Warning, text);
        }
    }
}

/// Until the supervisor is gone: stop every server of `slots` unused for
/// the idle timeout (and not in use by a call: nobody else holds its
/// client), and every server whose processes' resident memory passed its
/// ceiling (in use or not), with a notice.
async fn keep_servers(slots: std::sync::Weak<Mutex<SlotMap>>, upkeep: Upkeep) {
    let tick = (upkeep.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    loop {
        tokio::time::sleep(tick).await;
        let Some(slots) = slots.upgrade() else {
            return;
        };
        let all: Vec<Arc<ServerSlot>> = slots.lock().expect("slots").values().cloned().collect();
        drop(slots);
        for slot in all {
            let Ok(mut state) = slot.state.try_lock() else {
                continue;
            };
            if let Some(c) = state.client.as_ref().filter(|c| c.broker_lost()) {
                lose_broker(
                    &upkeep.sharing,
                    &upkeep.board,
                    &c.gone().unwrap_or_default(),
                );
            }
            // A shared server the broker stopped is told now, not only at
            // the next call.
            if state
                .client
                .as_ref()
                .is_some_and(|c| c.ended_by_broker().is_some())
            {
                let told = state.observe(&slot);
                tell(&upkeep.board, told);
            }
            let ceiling_mb = slot.entry.memory_ceiling_mb.unwrap_or(upkeep.ceiling_mb);
            // A shared server is not the run's to stop: detaching would
            // only attach again to the same process.
            let rss_mb = match &state.client {
                Some(c) if c.gone().is_none() && c.attached().is_none() => {
                    tool_core::process::group_rss_kib(c.pid()) / 1024
                }
                _ => 0,
            };
            if rss_mb > ceiling_mb {
                if let Some(c) = state.client.take() {
                    c.stop().await;
                    state.over_ceiling = Some((Instant::now(), rss_mb, ceiling_mb));
                    state.times_over_ceiling += 1;
                    let text = format!(
                        "lsp: {} at {} used {rss_mb} MiB, over its memory ceiling of {ceiling_mb} MiB: stopped; the next call that needs it starts it afresh",
                        slot.entry.id,
                        slot.shown_root
                    );
                    if let Some(board) = upkeep.board.lock().expect("board").as_ref() {
                        board.post("lsp", NoticeLevel::Warning, text);
                    }
                }
                continue;
            }
            let unused = state.last_used.is_some_and(|t| t.elapsed() >= upkeep.idle);
            let in_use = state
                .client
                .as_ref()
                .is_some_and(|c| Arc::strong_count(c) > 1);
            if unused && !in_use {
                if let Some(c) = state.client.take() {
                    c.stop().await;
                    state.stopped_idle = Some(Instant::now());
                }
            }
        }
    }
}

/// What `status` says of a server that passed its memory ceiling.
fn over_ceiling(state: &SlotState) -> Option<String> {
    let (at, rss, ceiling) = state.over_ceiling?;
    let times = match state.times_over_ceiling {
        1 => String::new(),
        n => format!(" ×{n}"),
    };
    Some(format!(
        "went over its memory ceiling{times} (last {} s ago: {rss} MiB > {ceiling} MiB)",
        at.elapsed().as_secs()
    ))
}

/// The run's language servers.
pub struct LspSupervisor {
    workspace: Workspace,
    catalog: Catalog,
    path_env: Option<OsString>,
    pub timeouts: Timeouts,
    slots: Arc<Mutex<SlotMap>>,
    /// The task stopping idle servers, started with the first server.
    reaper: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A server's memory ceiling in MiB, unless its entry has its own.
    memory_ceiling_mb: u64,
    /// Where the keeper posts what it did (the run's board, once bound).
    board: Arc<Mutex<Option<NoticeBoard>>>,
    /// Entries that could not start, by (id, where it was looked for): why.
    refusals: Mutex<BTreeMap<(String, PathBuf), String>>,
    /// Document symbols asked for naming enclosing scopes.
    symbols: crate::symbol_cache::SymbolCache,
    /// Whether servers are shared through the broker, and whether the
    /// broker was lost.
    sharing: Arc<Mutex<Sharing>>,
}

/// Whether a run's servers are shared through the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharing {
    /// Each server is the run's own (`[lsp] shared = false`, the default).
    Off,
    /// Attached to the broker's servers.
    On(crate::broker_link::BrokerRoute),
    /// The broker could not be reached or went away: the run starts its
    /// own servers from then on. Why.
    Lost(String),
}

impl LspSupervisor {
    pub fn new(workspace: Workspace, catalog: Catalog) -> Self {
        LspSupervisor {
            workspace,
            catalog,
            path_env: std::env::var_os("PATH"),
            timeouts: Timeouts::default(),
            slots: Arc::default(),
            reaper: Mutex::default(),
            memory_ceiling_mb: MEMORY_CEILING_MB,
            board: Arc::default(),
            refusals: Mutex::default(),
            symbols: Default::default(),
            sharing: Arc::new(Mutex::new(Sharing::Off)),
        }
    }

    /// Share the servers through the broker at `route` (tests).
    pub fn with_broker(self, route: crate::broker_link::BrokerRoute) -> Self {
        *self.sharing.lock().expect("sharing") = Sharing::On(route);
        self
    }

    /// Whether servers are shared: through the route a test gave, else
    /// the user's broker when the catalog says so (`[lsp] shared = true`;
    /// a shared server stays this run's idle timeout after its last run).
    pub fn sharing(&self) -> Sharing {
        let mut sharing = self.sharing.lock().expect("sharing");
        if *sharing == Sharing::Off && self.catalog.shared() {
            *sharing = Sharing::On(crate::broker_link::BrokerRoute {
                paths: crate::broker_link::BrokerPaths::for_user(),
                launcher: crate::broker_link::launcher(),
                idle: self.timeouts.idle,
                memory_ceiling_mb: None,
            });
        }
        sharing.clone()
    }

    /// The broker is gone or cannot be reached (see [`lose_broker`]).
    fn lose_broker(&self, why: &str) {
        lose_broker(&self.sharing, &self.board, why);
    }

    /// Start a client for `spec`: attached to the broker's shared server
    /// (which keeps it under `ceiling_mb`) when sharing is on, else (or
    /// when the broker cannot be reached) a server of the run's own.
    async fn start_client(
        &self,
        mut spec: StartSpec,
        ceiling_mb: u64,
    ) -> Result<Arc<LspClient>, String> {
        let mut route = match self.sharing() {
            Sharing::On(route) => route,
            Sharing::Off | Sharing::Lost(_) => return LspClient::start(spec).await,
        };
        route.memory_ceiling_mb = Some(ceiling_mb);
        spec.broker = Some(route);
        match LspClient::start(spec.clone()).await {
            Err(why) if why.starts_with(crate::broker_link::ATTACH_FAILED) => {
                self.lose_broker(&why);
                spec.broker = None;
                LspClient::start(spec).await
            }
            other => other,
        }
    }

    /// `$PATH` for finding and running servers (tests put the fixtures first).
    pub fn with_path(mut self, path: Option<OsString>) -> Self {
        self.path_env = path;
        self
    }

    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// A server's memory ceiling in MiB (an entry's own wins).
    pub fn with_memory_ceiling_mb(mut self, mb: u64) -> Self {
        self.memory_ceiling_mb = mb;
        self
    }

    /// The run's notice board, where a server stopped over its memory
    /// ceiling is told.
    pub fn set_notice_board(&self, board: NoticeBoard) {
        *self.board.lock().expect("board") = Some(board);
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn symbol_cache(&self) -> &crate::symbol_cache::SymbolCache {
        &self.symbols
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn path_env(&self) -> Option<&OsString> {
        self.path_env.as_ref()
    }

    pub fn rel(&self, p: &Path) -> String {
        self.workspace.relative(p)
    }

    /// Resolve `entry` from `start` and say why not, recording refusals for
    /// `status`.
    pub fn resolve(&self, entry: &ServerEntry, start: &Path) -> Result<Resolution, String> {
        let r = catalog::resolve(entry, start, self.workspace.root(), self.path_env.as_ref());
        if let Some(why) = r.why_not(entry, &|p| self.rel(p)) {
            let at = match &r {
                Resolution::NoBinary { root, .. } => root.clone(),
                _ => self.workspace.root().to_path_buf(),
            };
            self.refusals
                .lock()
                .expect("refusals")
                .insert((entry.id.clone(), at), why.clone());
            return Err(why);
        }
        Ok(r)
    }

    fn slot(&self, entry: &ServerEntry, r: Resolution) -> Arc<ServerSlot> {
        let Resolution::Ready {
            root,
            command,
            program,
        } = r
        else {
            unreachable!("slot() is only called for a ready resolution")
        };
        self.refusals
            .lock()
            .expect("refusals")
            .retain(|(id, _), _| id != &entry.id);
        self.slots
            .lock()
            .expect("slots")
            .entry((entry.id.clone(), root.clone()))
            .or_insert_with(|| {
                Arc::new(ServerSlot {
                    entry: entry.clone(),
                    shown_root: self.rel(&root),
                    root,
                    command,
                    program,
                    state: Default::default(),
                })
            })
            .clone()
    }

    /// The entry for a file, or why there is none.
    pub fn entry_for(&self, path: &Path) -> Result<(&ServerEntry, String), ToolError> {
        self.catalog.for_file(path).ok_or_else(|| {
            let ext = path.extension().map_or_else(
                || "files without an extension".into(),
                |e| format!("`.{}` files", e.to_string_lossy()),
            );
            let no_server = format!(
                "no language server in the catalog for {ext} ({}); the catalog covers {}; \
                 the harness can add a server in the `[lsp]` config",
                self.rel(path),
                self.catalog.known_extensions().join(" ")
            );
            // A project entry set aside for this file is the reason that
            // matters: it comes first.
            let mut why = self.catalog.untrusted_for(path);
            why.push(no_server);
            ToolError::unavailable(why.join("\n"))
        })
    }

    /// The running server for `path`, started (or restarted) if needed.
    pub async fn target_for(&self, path: &Path) -> Result<Target, ToolError> {
        let (slot, language_id) = self.server_slot_for(path)?;
        let client = self.ensure_running(&slot).await?;
        Ok(Target {
            client,
            slot,
            language_id,
        })
    }

    /// The slot of `path`'s server: the first server entry for it whose
    /// root marker and binary resolve; else why none can start (the first
    /// entry's reason, then the alternatives').
    pub fn server_slot_for(&self, path: &Path) -> Result<(Arc<ServerSlot>, String), ToolError> {
        let candidates = self.catalog.servers_for(path);
        if candidates.is_empty() {
            return Err(self.entry_for(path).expect_err("no entry for the file"));
        }
        let mut whys = Vec::new();
        for (entry, language_id) in candidates {
            match self.resolve(entry, path) {
                Ok(r) => return Ok((self.slot(entry, r), language_id)),
                Err(why) if whys.is_empty() => whys.push(why),
                Err(why) => whys.push(format!("alternative {}: {why}", entry.id)),
            }
        }
        Err(ToolError::unavailable(format!(
            "cannot start a server for {}: {}",
            self.rel(path),
            whys.join("; ")
        )))
    }

    /// The slots of the linters that run beside `path`'s server, and why
    /// each of the others cannot.
    pub fn linter_slots_for(&self, path: &Path) -> Vec<(String, Result<Arc<ServerSlot>, String>)> {
        self.catalog
            .linters_for(path)
            .into_iter()
            .map(|(entry, _)| {
                let slot = self.resolve(entry, path).map(|r| self.slot(entry, r));
                (entry.id.clone(), slot)
            })
            .collect()
    }

    /// The slot's live client, starting it if there is none.
    pub async fn ensure_running(
        &self,
        slot: &Arc<ServerSlot>,
    ) -> Result<Arc<LspClient>, ToolError> {
        self.start_reaper();
        let mut state = slot.state.lock().await;
        if let Some(c) = state.client.as_ref().filter(|c| c.broker_lost()) {
            self.lose_broker(&c.gone().unwrap_or_default());
        }
        let told = state.observe(slot);
        tell(&self.board, told);
        state.last_used = Some(Instant::now());
        if let Some(c) = &state.client {
            return Ok(c.clone());
        }
        let name = format!("{} ({})", slot.entry.id, slot.display());
        if state.crashes > MAX_RESTARTS {
            let last = state.last_crash.as_ref().map_or("", |(_, w)| w.as_str());
            return Err(ToolError::failed(format!(
                "{name} at {} crashed ×{} (last: {last}) and is not restarted again; \
                 run `lsp` op `reload` to start it afresh",
                self.rel(&slot.root),
                state.crashes
            )));
        }
        if let Some((at, _)) = &state.last_crash {
            let wait = backoff(state.crashes).saturating_sub(at.elapsed());
            tokio::time::sleep(wait).await;
        }
        let (path_env, env) = match slot.entry.jdk {
            None => (self.path_env.clone(), Vec::new()),
            Some(min) => {
                let jdk = tool_core::jdk::find(
                    min,
                    std::env::var_os("JAVA_HOME").as_ref(),
                    self.path_env.as_ref(),
                )
                .map_err(|why| ToolError::failed(format!("{name} cannot start: it {why}")))?;
                (
                    Some(jdk.path_with_bin(self.path_env.as_ref())),
                    vec![("JAVA_HOME".to_string(), jdk.home.into_os_string())],
                )
            }
        };
        let spec = StartSpec {
            name: name.clone(),
            program: slot.program.clone(),
            args: slot.command[1..].to_vec(),
            root: slot.root.clone(),
            workspace: self.workspace.clone(),
            path_env,
            env,
            initialization_options: slot.entry.initialization_options.clone(),
            settings: slot.entry.settings.clone(),
            init_timeout: self.timeouts.startup,
            started_message: slot.entry.started_message.clone(),
            settle: if slot.entry.reports_progress {
                self.timeouts.index_wait
            } else {
                slot.entry
                    .startup_settle_ms
                    .map_or(Duration::ZERO, Duration::from_millis)
            },
            own_dir_env: slot.entry.own_dir_env.clone(),
            ready_probe: slot.entry.ready_probe.clone(),
            change_diagnostics_delay: Duration::from_millis(
                slot.entry.change_diagnostics_delay_ms.unwrap_or(0),
            ),
            diagnosis_progress: slot.entry.project_diagnostics_progress.clone(),
            broker: None,
        };
        let ceiling_mb = slot
            .entry
            .memory_ceiling_mb
            .unwrap_or(self.memory_ceiling_mb);
        let mut started = self.start_client(spec.clone(), ceiling_mb).await;
        if started
            .as_ref()
            .is_err_and(|why| why.starts_with(crate::client::EXITED_BEFORE_STARTED))
        {
            // Asked once more at once: biome's lsp-proxy exits (status 0)
            // when the daemon it spawned is slow to open its socket, as on
            // a loaded machine; the second proxy finds it up.
            tokio::time::sleep(backoff(1)).await;
            started = self.start_client(spec, ceiling_mb).await;
        }
        match started {
            Ok(c) => {
                state.client = Some(c.clone());
                state.stopped_idle = None;
                state.last_used = Some(Instant::now());
                Ok(c)
            }
            Err(why) => {
                state.crashes += 1;
                state.last_crash = Some((Instant::now(), why.clone()));
                Err(ToolError::failed(format!(
                    "{name} did not start at {}: {why}; the next call tries again (crashed ×{})",
                    self.rel(&slot.root),
                    state.crashes
                )))
            }
        }
    }

    /// Start the keeper of the servers once (inside the runtime).
    fn start_reaper(&self) {
        let mut reaper = self.reaper.lock().expect("reaper");
        if reaper.is_none() {
            let slots = Arc::downgrade(&self.slots);
            let upkeep = Upkeep {
                idle: self.timeouts.idle,
                ceiling_mb: self.memory_ceiling_mb,
                board: self.board.clone(),
                sharing: self.sharing.clone(),
            };
            *reaper = Some(tokio::spawn(keep_servers(slots, upkeep)));
        }
    }

    /// Every slot, by id then root.
    pub fn slots(&self) -> Vec<Arc<ServerSlot>> {
        self.slots
            .lock()
            .expect("slots")
            .values()
            .cloned()
            .collect()
    }

    /// Stop and start again the servers for `path`'s root (all when `None`).
    /// Returns one line per server.
    pub async fn reload(&self, path: Option<&Path>) -> Result<Vec<String>, ToolError> {
        let slots: Vec<Arc<ServerSlot>> = match path {
            Some(p) => vec![self.server_slot_for(p)?.0],
            None => self.slots(),
        };
        if slots.is_empty() {
            return Ok(vec![
                "no server has been started in this run yet; nothing to reload (pass `file` to start one)".into(),
            ]);
        }
        let mut lines = Vec::new();
        for slot in slots {
            // A shared server is restarted for every run attached to it.
            let mut others_told = None;
            {
                let mut state = slot.state.lock().await;
                if let Some(c) = state.client.take() {
                    if c.attached().is_some() && c.gone().is_none() {
                        others_told = Some(c.restart_shared().await);
                    }
                    c.stop().await;
                }
                state.crashes = 0;
                state.last_crash = None;
            }
            let mut line = match self.ensure_running(&slot).await {
                Ok(c) => format!(
                    "{} at {}: restarted ({}, pid {})",
                    slot.entry.id,
                    self.rel(&slot.root),
                    slot.display(),
                    c.pid()
                ),
                Err(e) => format!("{} at {}: {e}", slot.entry.id, self.rel(&slot.root)),
            };
            match others_told {
                None => {}
                Some(Ok(0)) => line.push_str("; it was shared with no other run"),
                Some(Ok(n)) => line.push_str(&format!(
                    "; it was shared: the {n} other run{} attached to it {} told",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "was" } else { "were" }
                )),
                Some(Err(why)) => line.push_str(&format!(
                    "; shared, and {why}: only this run's link was restarted"
                )),
            }
            lines.push(line);
        }
        Ok(lines)
    }

    /// One line per catalog entry for the roots seen so far.
    pub async fn status_lines(&self) -> Vec<String> {
        let slots = self.slots();
        let mut lines = Vec::new();
        for slot in &slots {
            let mut line = self.slot_line(slot);
            let client = slot.state.try_lock().ok().and_then(|s| s.client.clone());
            if let Some(c) = client.filter(|c| c.gone().is_none()) {
                match c.shared_runs().await {
                    Some(runs) => line.push_str(&format!(
                        "; shared through the broker by {runs} run{}",
                        if runs == 1 { "" } else { "s" }
                    )),
                    None if c.attached().is_some() => {
                        line.push_str(
                            "; shared through the broker (it did not say by how many runs)",
                        );
                    }
                    None => {}
                }
            }
            lines.push(line);
        }
        lines.extend(self.lines_without_slot(&slots));
        match self.sharing() {
            Sharing::Off => {}
            Sharing::On(route) => lines.push(format!(
                "servers shared with the other runs of this user through the broker at {}",
                route.paths.socket().display()
            )),
            Sharing::Lost(why) => lines.push(format!(
                "servers not shared: the broker was lost ({why}); this run starts its own"
            )),
        }
        lines
    }

    /// The `status` line of a server with a slot: running, starting,
    /// crashed, stopped.
    fn slot_line(&self, slot: &ServerSlot) -> String {
        let head = format!(
            "{} at {} ({}{})",
            slot.entry.id,
            self.rel(&slot.root),
            slot.display(),
            catalog::project_local_note(&slot.program, self.workspace.root())
        );
        let Ok(mut state) = slot.state.try_lock() else {
            return format!("{head}: starting");
        };
        let told = state.observe(slot);
        tell(&self.board, told);
        let crashed = match (&state.last_crash, state.crashes) {
            (Some((at, why)), n) if n > 0 => Some(format!(
                "crashed ×{n} (last {} s ago: {})",
                at.elapsed().as_secs(),
                tool_core::format::cap_chars(why, 200)
            )),
            _ => None,
        };
        let line = match (&state.client, crashed) {
            (Some(c), crashed) => {
                let mut s = match c.busy() {
                    Some((what, for_)) => format!(
                        "{head}: running, pid {}, indexing ({what}, {} s so far)",
                        c.pid(),
                        for_.as_secs()
                    ),
                    None => format!(
                        "{head}: running, pid {}, ready ({} positions)",
                        c.pid(),
                        c.encoding.name()
                    ),
                };
                if let Some(waits) = c.never_delivers() {
                    s.push_str(&format!(
                        "; has sent no diagnostics since it started ({waits} waits ran out): writes are not waited for"
                    ));
                }
                if let Some(cr) = crashed {
                    s.push_str(&format!("; restarted after it {cr}"));
                }
                if let Some(over) = over_ceiling(&state) {
                    s.push_str(&format!("; restarted after it {over}"));
                }
                s
            }
            (None, Some(cr)) if state.crashes > MAX_RESTARTS => {
                format!("{head}: {cr}; not restarted again — run `lsp` op `reload`")
            }
            (None, Some(cr)) => format!("{head}: {cr}; the next call restarts it"),
            (None, None)
                if state.over_ceiling.is_some_and(|(at, _, _)| {
                    state.stopped_idle.is_none_or(|idle| at > idle)
                }) =>
            {
                format!(
                    "{head}: stopped: it {}; the next call that needs it starts it again",
                    over_ceiling(&state).unwrap_or_default()
                )
            }
            (None, None) => match state.stopped_idle {
                Some(at) => format!(
                    "{head}: stopped (idle: unused for {} s, stopped {} s ago; the next call that needs it starts it again)",
                    self.timeouts.idle.as_secs(),
                    at.elapsed().as_secs()
                ),
                None => format!("{head}: not running (starts on the next call that needs it)"),
            },
        };
        line
    }

    /// The `status` lines of the catalog entries without a slot: what
    /// would happen at the workspace root, refusals already met, and the
    /// many that cannot serve this checkout grouped by why.
    fn lines_without_slot(&self, slots: &[Arc<ServerSlot>]) -> Vec<String> {
        let mut lines = Vec::new();
        // Entries that have no slot: what would happen at the workspace root,
        // and refusals already met.
        let refusals = self.refusals.lock().expect("refusals").clone();
        let (mut no_root, mut not_installed, mut no_files) = (Vec::new(), Vec::new(), Vec::new());
        let present = std::sync::OnceLock::new();
        let has_files = |entry: &ServerEntry| {
            let present = present
                .get_or_init(|| crate::source_walk::first_file_per_name(self.workspace.root()));
            entry.first_file_in(present).is_some()
        };
        let root = self.workspace.root();
        let ready_here = |e: &ServerEntry| {
            slots.iter().any(|s| s.entry.id == e.id)
                || matches!(
                    catalog::resolve(e, root, root, self.path_env.as_ref()),
                    Resolution::Ready { .. }
                )
        };
        // The earlier server entry that takes this one's files here: of
        // several servers for a file, the first that resolves serves it.
        let served_by = |entry: &ServerEntry| {
            if entry.role != catalog::Role::Server {
                return None;
            }
            self.catalog
                .entries()
                .iter()
                .take_while(|e| e.id != entry.id)
                .filter(|e| e.role == catalog::Role::Server)
                .filter(|e| {
                    e.extensions
                        .keys()
                        .any(|x| entry.extensions.contains_key(x))
                })
                .find(|e| ready_here(e))
                .map(|e| e.id.clone())
        };
        for entry in self.catalog.entries() {
            if slots.iter().any(|s| s.entry.id == entry.id) {
                continue;
            }
            let recorded: Vec<&String> = refusals
                .iter()
                .filter(|((id, _), _)| id == &entry.id)
                .map(|(_, why)| why)
                .collect();
            if !recorded.is_empty() {
                for why in recorded {
                    lines.push(format!("{}: cannot start ({why})", entry.id));
                }
                continue;
            }
            let r = catalog::resolve(
                entry,
                self.workspace.root(),
                self.workspace.root(),
                self.path_env.as_ref(),
            );
            // Of the many entries that cannot serve this checkout, only
            // those with a project root here and files to serve get a line
            // of their own (package.json is a root for vue, astro, prisma
            // and solidity too).
            match &r {
                Resolution::NoMarker { .. } => {
                    no_root.push(entry.id.as_str());
                    continue;
                }
                Resolution::NoBinary { .. }
                    if entry.root_rule == RootRule::Workspace || !has_files(entry) =>
                {
                    not_installed.push(entry.id.as_str());
                    continue;
                }
                Resolution::Ready { .. } if !has_files(entry) => {
                    no_files.push(entry.id.as_str());
                    continue;
                }
                _ => {}
            }
            if let (Resolution::Ready { root, command, .. }, Some(first)) = (&r, served_by(entry)) {
                lines.push(format!(
                    "{} at {} ({}): not used while {first} serves its files (an alternative, used where {first} cannot start)",
                    entry.id,
                    self.rel(root),
                    command.join(" "),
                ));
                continue;
            }
            lines.push(match (&r, r.why_not(entry, &|p| self.rel(p))) {
                (
                    Resolution::Ready {
                        root,
                        command,
                        program,
                    },
                    _,
                ) => format!(
                    "{} at {} ({}{}): not started (starts on the first call for one of its files)",
                    entry.id,
                    self.rel(root),
                    command.join(" "),
                    catalog::project_local_note(program, self.workspace.root())
                ),
                (_, Some(why)) => format!("{}: cannot start ({why})", entry.id),
                (_, None) => unreachable!("only Ready has no reason"),
            });
        }
        if !no_files.is_empty() {
            lines.push(format!(
                "installed, no files of theirs here (each starts on the first call for one of its files): {}",
                no_files.join(", ")
            ));
        }
        if !no_root.is_empty() {
            lines.push(format!(
                "no project root at the workspace root (each starts for a file inside its kind of project; \
                 `doctor` lists what each looks for): {}",
                no_root.join(", ")
            ));
        }
        if !not_installed.is_empty() {
            lines.push(format!(
                "not installed (no server binary in the project or on $PATH): {}",
                not_installed.join(", ")
            ));
        }
        lines.extend(
            self.catalog
                .untrusted()
                .iter()
                .map(super::catalog::Untrusted::notice),
        );
        lines
    }

    /// Every running client.
    pub async fn clients(&self) -> Vec<Arc<LspClient>> {
        let mut out = Vec::new();
        for slot in self.slots() {
            if let Some(c) = &slot.state.lock().await.client {
                out.push(c.clone());
            }
        }
        out
    }

    /// The pids of every running server (tests check none survive the run).
    pub async fn pids(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for slot in self.slots() {
            if let Some(c) = &slot.state.lock().await.client {
                out.push(c.pid());
            }
        }
        out
    }

    /// Start, all at once, the servers the root's files would need (see
    /// [`crate::warm_up`]); the names of those running afterwards, as
    /// `id at folder`. Servers that cannot start here are skipped silently,
    /// and no refusal is recorded for `status`: no call asked for them.
    pub async fn warm_up(&self) -> Vec<String> {
        let root = self.workspace.root().to_path_buf();
        let files = tokio::task::spawn_blocking(move || crate::warm_up::candidate_files(&root))
            .await
            .unwrap_or_default();
        let mut slots: Vec<Arc<ServerSlot>> = Vec::new();
        let ready = |entry: &ServerEntry, file: &Path| {
            let r = catalog::resolve(entry, file, self.workspace.root(), self.path_env.as_ref());
            r.why_not(entry, &|p| self.rel(p))
                .is_none()
                .then(|| self.slot(entry, r))
        };
        'files: for file in &files {
            // The server its first call would use (the first that resolves),
            // then its linters.
            let server = self
                .catalog
                .servers_for(file)
                .into_iter()
                .find_map(|(entry, _)| ready(entry, file));
            let linters = self
                .catalog
                .linters_for(file)
                .into_iter()
                .filter_map(|(entry, _)| ready(entry, file));
            for slot in server.into_iter().chain(linters) {
                if !slots.iter().any(|s| Arc::ptr_eq(s, &slot)) {
                    if slots.len() == crate::warm_up::MAX_SERVERS {
                        break 'files;
                    }
                    slots.push(slot);
                }
            }
        }
        let started = futures::future::join_all(slots.iter().map(|slot| async move {
            match self.ensure_running(slot).await {
                Ok(_) => Some(format!("{} at {}", slot.entry.id, self.rel(&slot.root))),
                Err(e) => {
                    tracing::debug!(server = %slot.entry.id, error = %e, "warm-up could not start it");
                    None
                }
            }
        }))
        .await;
        started.into_iter().flatten().collect()
    }

    /// Stop every server.
    pub async fn shutdown(&self) {
        if let Some(r) = self.reaper.lock().expect("reaper").take() {
            r.abort();
        }
        for slot in self.slots() {
            let client = slot.state.lock().await.client.take();
            if let Some(c) = client {
                c.stop().await;
            }
        }
    }
}

impl Drop for LspSupervisor {
    fn drop(&mut self) {
        if let Some(r) = self.reaper.get_mut().ok().and_then(Option::take) {
            r.abort();
        }
    }
}
