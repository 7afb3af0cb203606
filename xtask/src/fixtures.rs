//! The one list of real components the tests run, and their installation.
//!
//! Everything comes from the package registries: PyPI into a virtualenv under
//! `target/fixtures/venv`, npm into a prefix under `target/fixtures/npm`,
//! Debian packages with apt-get (only when running as root), rustup
//! components, and Go tools built by `go install` into `target/fixtures/bin`.
//! Maven artifacts (JUnit, the build plugins the Java fixtures' builds
//! run) go into the local repository `target/fixtures/m2`. Each item is
//! skipped when already there, with a progress line; the independent
//! sources install in parallel.

use crate::run;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use tool_core::install::Source;

/// The packages the recipes of `agent-tools install` name
/// (tool_core::install, crates/tool-core/src/install/recipes.toml): the
/// tests run the servers and adapters a user gets from `agent-tools
/// install`, at the same pinned versions.
fn from_recipes(pick: fn(&Source) -> Option<&Vec<String>>) -> Vec<String> {
    tool_core::install::recipes()
        .iter()
        .filter_map(|r| pick(&r.source))
        .flatten()
        .cloned()
        .collect()
}

/// PyPI packages: the recipes', then these the tests alone need.
pub(crate) fn python_packages() -> Vec<String> {
    let mut list = from_recipes(|s| match s {
        Source::Pypi(p) => Some(p),
        _ => None,
    });
    list.extend(
        [
            "pandas==3.1.1",
            "matplotlib==3.11.2",
            "ast-grep-cli==0.51.1",
            "mcp==2.3.0",
            "ipykernel==7.4.0",
            "jupyter_client==8.10.0",
            "pytest==9.2.0",
        ]
        .map(String::from),
    );
    list
}

/// npm packages: the recipes', then these the tests alone need (eslint:
/// the library vscode-eslint-language-server loads from a project's
/// node_modules; Microsoft's pyright, which the diagnostics matrix drives
/// beside basedpyright; the MCP Inspector's CLI, which brings the
/// TypeScript SDK and Ajv: the Inspector 2.x package wants Node 22, Debian
/// has Node 20).
pub(crate) fn npm_packages() -> Vec<String> {
    let mut list = from_recipes(|s| match s {
        Source::Npm(p) => Some(p),
        _ => None,
    });
    list.push("eslint@10.15.0".into());
    list.push("pyright@1.1.414".into());
    list.push("@modelcontextprotocol/inspector-cli@1.0.3".into());
    list
}

/// Debian packages, each with the executables that show it is installed:
/// the recipes', then Go itself and Debian's gopls (in use where there is no
/// Go module proxy).
pub(crate) fn debian_packages() -> Vec<(String, Vec<String>)> {
    let mut list: Vec<(String, Vec<String>)> = tool_core::install::recipes()
        .iter()
        .filter_map(|r| match &r.source {
            Source::Debian(p) => Some(
                p.iter()
                    .map(|p| (p.clone(), r.bin.clone()))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    list.push(("golang-go".into(), vec!["go".into()]));
    list.push(("gopls".into(), vec!["gopls".into()]));
    list
}

/// Go tools, `go install`ed from the Go module proxy into
/// `target/fixtures/go/bin` (which comes before Debian's on the fixtures'
/// PATH): (package@version, executables). Debian's delve is too old for the
/// machine's Go (it refuses Go newer than 1.20), and its gopls lags the
/// toolchain; where there is no proxy, Debian's stay in use.
pub(crate) fn go_tools_list() -> Vec<(String, Vec<String>)> {
    tool_core::install::recipes()
        .iter()
        .filter_map(|r| match &r.source {
            Source::Go(p) => Some(
                p.iter()
                    .map(|p| (p.clone(), r.bin.clone()))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

/// rustup components: the recipes'.
pub(crate) fn rustup_components() -> Vec<String> {
    from_recipes(|s| match s {
        Source::Rustup(p) => Some(p),
        _ => None,
    })
}

pub(crate) fn dir(root: &Path) -> PathBuf {
    std::env::var_os("AGENT_TOOLS_FIXTURES")
        .map_or_else(|| root.join("target").join("fixtures"), PathBuf::from)
}

fn progress(item: &str, state: &str) {
    eprintln!("fixtures: {item:<40} {state}");
}

/// A stamp file holding the list last installed, so an unchanged list is
/// skipped without asking the registry.
fn stamped(stamp: &Path, list: &[String]) -> bool {
    std::fs::read_to_string(stamp).is_ok_and(|s| s == list.join("\n"))
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
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

pub(crate) fn install(root: &Path) -> Result<()> {
    let dir = dir(root);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::thread::scope(|s| {
        let jobs = [
            s.spawn(|| python(&dir)),
            s.spawn(|| npm(&dir)),
            // Go tools need the `go` that Debian may install first.
            s.spawn(|| debian().and_then(|()| go_tools(&dir))),
            s.spawn(rustup),
            s.spawn(|| maven(root, &dir)),
        ];
        jobs.into_iter()
            .map(|j| j.join().expect("a fixture installer panicked"))
            .collect::<Result<Vec<()>>>()
    })?;
    Ok(())
}

fn go_tools(dir: &Path) -> Result<()> {
    let bin = dir.join("go").join("bin");
    let tools = go_tools_list();
    let list: Vec<String> = tools.iter().map(|(p, _)| p.clone()).collect();
    let stamp = bin.join(".agent-tools-go-tools");
    if stamped(&stamp, &list)
        && tools
            .iter()
            .all(|(_, exes)| exes.iter().all(|e| bin.join(e).is_file()))
    {
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
    let packages = python_packages();
    if py.exists() && stamped(&stamp, &packages) {
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
        .args(&packages))?;
    std::fs::write(&stamp, packages.join("\n"))?;
    progress("python packages", "installed");
    Ok(())
}

fn npm(dir: &Path) -> Result<()> {
    let prefix = dir.join("npm");
    let stamp = prefix.join(".agent-tools-packages");
    let packages = npm_packages();
    if stamped(&stamp, &packages) {
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
        .args(&packages))?;
    std::fs::write(&stamp, packages.join("\n"))?;
    progress("npm packages", "installed");
    Ok(())
}

fn debian() -> Result<()> {
    let packages = debian_packages();
    let missing: Vec<&str> = packages
        .iter()
        .filter(|(_, bins)| !bins.iter().any(|b| on_path(b)))
        .map(|(pkg, _)| pkg.as_str())
        .collect();
    for (pkg, _) in &packages {
        if !missing.contains(&pkg.as_str()) {
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
    let components = rustup_components();
    let missing: Vec<&str> = components
        .iter()
        .map(String::as_str)
        .filter(|c| !installed.lines().any(|l| l.starts_with(c)))
        .collect();
    for c in &components {
        if !missing.contains(&c.as_str()) {
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

/// The Maven projects whose builds the tests run offline
/// (`-Dmaven.repo.local=target/fixtures/m2`): their dependencies and
/// the plugins of `test-compile` and `dependency:build-classpath`.
const MAVEN_PROJECTS: [&str; 1] = ["tests/fixtures/debug/junit"];

/// Single artifacts the tests need besides the projects' own: the JUnit
/// console launcher a `debug` launch with `test` runs.
const MAVEN_ARTIFACTS: [&str; 1] = ["org.junit.platform:junit-platform-console-standalone:1.14.1"];

/// Resolve [`MAVEN_PROJECTS`] and [`MAVEN_ARTIFACTS`] into `dir/m2` from
/// Maven Central, skipped when the stamp lists the same projects (with
/// their pom.xml's text) and artifacts.
fn maven(root: &Path, dir: &Path) -> Result<()> {
    let repo = dir.join("m2");
    let stamp = repo.join(".agent-tools-maven");
    let mut list: Vec<String> = MAVEN_ARTIFACTS.iter().map(|a| (*a).to_string()).collect();
    for project in MAVEN_PROJECTS {
        let pom = std::fs::read_to_string(root.join(project).join("pom.xml"))
            .with_context(|| format!("reading {project}/pom.xml"))?;
        list.push(format!("{project}\n{pom}"));
    }
    if stamped(&stamp, &list) {
        progress("maven artifacts", "present");
        return Ok(());
    }
    if !on_path("mvn") {
        progress("maven artifacts", "MISSING (no mvn: apt-get install maven)");
        return Ok(());
    }
    std::fs::create_dir_all(&repo)?;
    let local = format!("-Dmaven.repo.local={}", repo.display());
    for project in MAVEN_PROJECTS {
        progress(&format!("maven {project}"), "resolving from Maven Central");
        // Built in a copy: the fixture folder gets no target/.
        let scratch =
            std::env::temp_dir().join(format!("agent-tools-maven-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        run(Command::new("cp")
            .arg("-r")
            .arg(root.join(project))
            .arg(&scratch))?;
        let built = run(Command::new("mvn")
            .args([
                "-B",
                "-q",
                &local,
                "test-compile",
                "dependency:build-classpath",
            ])
            .current_dir(&scratch));
        let _ = std::fs::remove_dir_all(&scratch);
        built?;
    }
    for artifact in MAVEN_ARTIFACTS {
        progress(&format!("maven {artifact}"), "resolving from Maven Central");
        run(Command::new("mvn").args([
            "-B",
            "-q",
            &local,
            "dependency:get",
            &format!("-Dartifact={artifact}"),
        ]))?;
    }
    std::fs::write(&stamp, list.join("\n"))?;
    progress("maven artifacts", "installed");
    Ok(())
}
