//! `agent-tools lsp-broker` (hidden): the user's shared-server broker,
//! started by the first run with `[lsp] shared = true` that finds none, in
//! a session of its own. It serves until it has had no server and no run
//! for a moment, then exits (see `lsp_session::broker`).

use lsp_session::broker::{self, BrokerPaths};

/// Say how runs start a broker: this binary's `lsp-broker`.
pub(crate) fn set_launcher() {
    if let Ok(me) = std::env::current_exe() {
        broker::set_launcher(vec![me.into_os_string(), "lsp-broker".into()]);
    }
}

/// Serve until idle. Exit code: 0 served (or another broker holds the
/// folder), 1 the folder or socket could not be used.
pub(crate) async fn run() -> u8 {
    let paths = BrokerPaths::for_user();
    match broker::run(&paths, broker::LINGER).await {
        Ok(true) => 0,
        Ok(false) => {
            tracing::info!(dir = %paths.dir.display(), "another broker serves this folder");
            0
        }
        Err(why) => {
            eprintln!("agent-tools lsp-broker: {why}");
            1
        }
    }
}
