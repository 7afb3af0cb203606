//! The `agent-tools` binary: `doctor`, `call`, `batch` and `mcp` over one run.
//!
//! One process is one run: every resource it binds (language servers, the
//! debug session, kernels, workers) belongs to it and dies with it.

mod batch;
mod doctor;
mod install;
#[cfg(feature = "lsp")]
mod lsp_broker;
#[cfg(feature = "mcp")]
mod mcp;
mod render;
mod run;
mod stop;
mod workers_at_end;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "agent-tools",
    version,
    about = "Run-bound tools for coding agents: language servers, structural search and rewrites, a debugger, persistent kernels."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options every run-binding command takes.
#[derive(clap::Args, Clone)]
struct RunArgs {
    /// The workspace root.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The highest tier of tool this surface sees: read, write or exec
    /// (default: the config file's, else exec).
    #[arg(long)]
    surface: Option<String>,
    /// A config file (TOML).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Command line of the `fast` vibe worker (turns vibe mode on).
    #[arg(long)]
    vibe_fast: Option<String>,
    /// Command line of the `good` vibe worker (turns vibe mode on).
    #[arg(long)]
    vibe_good: Option<String>,
    /// Folder for images the tools return (default: a folder under the
    /// system temp dir).
    #[arg(long)]
    images_dir: Option<PathBuf>,
    /// Go on when a config section is wrong, without the tool family it
    /// configures (named on stderr), instead of refusing to start (exit 2).
    #[arg(long)]
    lenient: bool,
    /// Trust the checkout: a language server, checker, formatter command or
    /// debug adapter its `.agent-tools.toml` names may run (without this flag
    /// such entries are reported and never run).
    #[arg(long)]
    trust_workspace: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Which tools are compiled in and registered here, and which language
    /// servers and debug adapters resolve for this root, and why not.
    /// Exit code: 0 the table was printed (a wrong config section is shown in
    /// it), 1 the tools could not be registered, 2 unreadable config file or
    /// bad root.
    Doctor {
        /// The workspace root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// A config file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Trust the checkout's `.agent-tools.toml` to name commands.
        #[arg(long)]
        trust_workspace: bool,
        /// A line for every server and adapter, also those of languages
        /// this checkout has no file of (grouped by reason otherwise).
        #[arg(long)]
        all: bool,
    },
    /// Run one tool call and print its result. You, who typed it, are its
    /// approver: write and exec tools run without asking.
    /// Exit code: 0 success, 1 tool error, 2 bad usage, unknown tool or a
    /// wrong config.
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments as one JSON object.
        #[arg(default_value = "{}")]
        args: String,
        #[command(flatten)]
        run: RunArgs,
        /// Print the whole output (content and structured result) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One run, many calls: reads newline-delimited `{"tool": …, "args": …}`
    /// and prints one JSON result per line (a transcript with `--text`), so
    /// sessions, kernels and staged edits live across the calls. You are the
    /// approver, as with `call`.
    /// SIGTERM, SIGINT or SIGHUP stops every call and child process.
    /// When the input ends with vibe workers still running or queued, it
    /// waits for them (at most `[vibe] batch_wait_seconds`, default 300),
    /// printing each one's end as a `vibe_wait` result marked
    /// `after_input`, and kills those still unfinished then, saying so.
    /// Exit code: 0 every line succeeded, 1 any line failed or workers were
    /// killed at the end, 2 bad usage, a wrong config or unreadable input,
    /// 128 + the signal's number when stopped by one.
    Batch {
        /// The file of calls, or `-` for standard input.
        #[arg(default_value = "-")]
        file: String,
        #[command(flatten)]
        run: RunArgs,
        /// Print a transcript for a person instead of JSON lines: each call
        /// as `TOOL ARGS`, then its text (an error as `error: …`), with a
        /// blank line between calls.
        #[arg(long)]
        text: bool,
    },
    /// Install the language servers, debug adapters and checkers a root
    /// needs, or those of the languages or recipes named, from the package
    /// registries into the per-user data folder ($AGENT_TOOLS_DATA_DIR, else
    /// $XDG_DATA_HOME/agent-tools, else ~/.local/share/agent-tools). The
    /// tools look there after a project's own folders and before PATH.
    /// Exit code: 0 everything asked for is installed, 1 something could not
    /// be (each named, with the registry that failed; nothing is left half
    /// installed), 2 bad usage or nothing to install.
    Install {
        /// Languages (python, typescript, rust, go, c, yaml, bash, …) or
        /// recipe names (ruff, biome, …); none: the languages whose files are
        /// under --root. A word it does not know is answered with the list.
        targets: Vec<String>,
        /// The workspace root whose languages are installed when none is named.
        #[arg(long, default_value = ".")]
        root: PathBuf,
    },
    /// Serve one run's tools over MCP on stdio.
    /// Exit code: 0 the client closed or SIGTERM/SIGINT ended the run, 2 bad
    /// usage, a wrong config, or the session failed.
    Mcp {
        #[command(flatten)]
        run: RunArgs,
    },
    /// The user's shared-server broker (started by runs with `[lsp] shared
    /// = true`; not for use by hand).
    #[command(hide = true)]
    LspBroker,
}

/// Logs go to stderr, in colour only on a terminal and never when `NO_COLOR`
/// is set to anything but the empty string (<https://no-color.org>).
fn init_tracing() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && !no_color)
        .with_target(false)
        .init();
}

fn main() -> ExitCode {
    // SAFETY: first thing in main: no tree-sitter object exists yet.
    #[cfg(feature = "astgrep")]
    unsafe {
        tool_astgrep::parser_memory::use_mimalloc();
    };
    let cli = Cli::parse();
    init_tracing();
    #[cfg(feature = "lsp")]
    lsp_broker::set_launcher();
    // A process that waits for calls (many at once when runs share their
    // servers) gives back its binary's resident pages while it waits
    // (`AGENT_TOOLS_KEEP_IDLE_PAGES` set: kept, for the bench's comparison).
    let waits_for_calls = matches!(
        cli.command,
        Command::Batch { .. } | Command::Mcp { .. } | Command::LspBroker
    );
    if waits_for_calls && std::env::var_os("AGENT_TOOLS_KEEP_IDLE_PAGES").is_none() {
        tool_core::code_pages::release_when_idle(std::time::Duration::from_secs(5));
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agent-tools: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(async move {
        match cli.command {
            Command::Doctor {
                root,
                config,
                trust_workspace,
                all,
            } => doctor::run(root, config, trust_workspace, all).await,
            Command::Call {
                tool,
                args,
                run,
                json,
            } => run::call(tool, args, run, json).await,
            Command::Batch { file, run, text } => batch::batch(file, run, text).await,
            Command::Install { targets, root } => install::run(targets, root),
            #[cfg(feature = "mcp")]
            Command::Mcp { run } => mcp::serve(run).await,
            #[cfg(not(feature = "mcp"))]
            Command::Mcp { .. } => {
                eprintln!("agent-tools mcp: this binary was built without the `mcp` feature");
                2
            }
            #[cfg(feature = "lsp")]
            Command::LspBroker => lsp_broker::run().await,
            #[cfg(not(feature = "lsp"))]
            Command::LspBroker => {
                eprintln!(
                    "agent-tools lsp-broker: this binary was built without the `lsp` feature"
                );
                2
            }
        }
    });
    // Drop the runtime before exiting so every child is killed with its owner.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    ExitCode::from(code)
}
