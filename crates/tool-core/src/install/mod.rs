//! Installing the programs the catalogs name, from the package registries,
//! into a per-user data folder: the engine behind `agent-tools install`, and
//! the package lists `cargo xtask fixtures` installs for the tests.
//!
//! Layout of the data folder ([`data_dir`]): `pkgs/<recipe>/` holds one
//! recipe's install (an npm prefix, a virtualenv, or a `GOBIN`), and `bin/`
//! holds a link per executable a recipe provides. [`crate::programs`] looks
//! in `bin/` after a project's own folders and before `PATH`.
//!
//! Invariants: a recipe's links are made only after its install finished and
//! every executable it promises is there, and a failed install removes its
//! `pkgs/<recipe>/` folder, so nothing is ever half installed. Debian
//! packages are installed only when running as root; otherwise the command
//! to run is named.

use crate::process::ChildSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The built-in recipes, embedded in the binary.
const RECIPES: &str = include_str!("recipes.toml");

/// Where a recipe's packages come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// npm packages (`name@version`), into a private prefix.
    Npm(Vec<String>),
    /// PyPI requirements (`name==version`), into a private virtualenv.
    Pypi(Vec<String>),
    /// Go packages (`module/path@version`), built by `go install`.
    Go(Vec<String>),
    /// rustup components of the active toolchain.
    Rustup(Vec<String>),
    /// Debian packages.
    Debian(Vec<String>),
}

impl Source {
    /// The registry or tool it comes from, as an error names it.
    pub fn registry(&self) -> &'static str {
        match self {
            Source::Npm(_) => "the npm registry",
            Source::Pypi(_) => "PyPI",
            Source::Go(_) => "the Go module proxy",
            Source::Rustup(_) => "rustup",
            Source::Debian(_) => "apt-get",
        }
    }

    /// The packages it names.
    pub fn packages(&self) -> &[String] {
        match self {
            Source::Npm(p)
            | Source::Pypi(p)
            | Source::Go(p)
            | Source::Rustup(p)
            | Source::Debian(p) => p,
        }
    }
}

/// How to get one program (or a few that come together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The name `agent-tools install` takes.
    pub name: String,
    /// The languages it serves; `agent-tools install python` installs every
    /// recipe naming `python`.
    pub languages: Vec<String>,
    pub source: Source,
    /// The executables it provides, as the catalogs name them.
    pub bin: Vec<String>,
    /// Other files of the install exposed under a name of ours: name →
    /// path inside the install. These are small scripts that `exec` the
    /// file rather than links, so an interpreter of a virtualenv still finds
    /// its environment.
    pub link: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeFile {
    recipe: Vec<RawRecipe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecipe {
    name: String,
    languages: Vec<String>,
    npm: Option<Vec<String>>,
    pypi: Option<Vec<String>>,
    go: Option<Vec<String>>,
    rustup: Option<Vec<String>>,
    debian: Option<Vec<String>>,
    #[serde(default)]
    bin: Vec<String>,
    #[serde(default)]
    link: BTreeMap<String, String>,
}

/// Parse a recipe file: each recipe has exactly one source.
pub fn parse_recipes(text: &str) -> Result<Vec<Recipe>, String> {
    let file: RecipeFile = toml::from_str(text).map_err(|e| e.to_string())?;
    file.recipe
        .into_iter()
        .map(|r| {
            let mut sources: Vec<Source> = [
                r.npm.map(Source::Npm),
                r.pypi.map(Source::Pypi),
                r.go.map(Source::Go),
                r.rustup.map(Source::Rustup),
                r.debian.map(Source::Debian),
            ]
            .into_iter()
            .flatten()
            .collect();
            if sources.len() != 1 {
                return Err(format!(
                    "recipe `{}` names {} sources; give exactly one of npm, pypi, go, rustup, debian",
                    r.name,
                    sources.len()
                ));
            }
            Ok(Recipe {
                name: r.name,
                languages: r.languages,
                source: sources.remove(0),
                bin: r.bin,
                link: r.link,
            })
        })
        .collect()
}

/// The built-in recipes.
pub fn recipes() -> &'static [Recipe] {
    static PARSED: OnceLock<Vec<Recipe>> = OnceLock::new();
    PARSED.get_or_init(|| parse_recipes(RECIPES).expect("the built-in recipes.toml is valid"))
}

pub use crate::programs::{bin_dir, data_dir};

/// The recipe that provides executable `program`, if one does.
pub fn recipe_for(program: &str) -> Option<&'static Recipe> {
    recipes()
        .iter()
        .find(|r| r.bin.iter().any(|b| b == program) || r.link.contains_key(program))
}

/// The command that installs `program`: "agent-tools install basedpyright".
pub fn install_hint(program: &str) -> Option<String> {
    recipe_for(program).map(|r| format!("agent-tools install {}", r.name))
}

/// The recipes for `words`, each a language or a recipe name, in the order
/// of the recipe file, without repeats. An unknown word is an error naming
/// what is known.
pub fn select(words: &[String]) -> Result<Vec<&'static Recipe>, String> {
    let all = recipes();
    let mut unknown = Vec::new();
    for w in words {
        if !all.iter().any(|r| &r.name == w || r.languages.contains(w)) {
            unknown.push(w.as_str());
        }
    }
    if !unknown.is_empty() {
        let mut languages: Vec<&str> = all
            .iter()
            .flat_map(|r| r.languages.iter().map(String::as_str))
            .collect();
        languages.sort_unstable();
        languages.dedup();
        let names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
        return Err(format!(
            "nothing to install for {}; languages: {}; recipes: {}",
            unknown.join(", "),
            languages.join(", "),
            names.join(", ")
        ));
    }
    Ok(all
        .iter()
        .filter(|r| {
            words
                .iter()
                .any(|w| &r.name == w || r.languages.contains(w))
        })
        .collect())
}

/// How one recipe's install ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Installed now; the executables now linked.
    Installed(Vec<String>),
    /// Already there, with every executable.
    Present,
    /// Not installed here: the command a person with the rights must run.
    NeedsRoot(String),
}

/// An install that failed; nothing of it was left behind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{recipe}: {registry} failed: {why}")]
pub struct InstallError {
    pub recipe: String,
    pub registry: &'static str,
    pub why: String,
}

/// Install `recipe` under `data` (see the module's layout), skipping it when
/// its stamp and executables show it is there already.
pub fn install(recipe: &Recipe, data: &Path) -> Result<Outcome, InstallError> {
    let fail = |why: String| InstallError {
        recipe: recipe.name.clone(),
        registry: recipe.source.registry(),
        why,
    };
    match &recipe.source {
        Source::Rustup(components) => rustup(components).map_err(fail),
        Source::Debian(packages) => debian(recipe, packages).map_err(fail),
        Source::Npm(_) | Source::Pypi(_) | Source::Go(_) => {
            private_install(recipe, data).map_err(fail)
        }
    }
}

/// Where, inside a recipe's install folder, its executables land.
fn exe_dir(source: &Source) -> &'static str {
    match source {
        Source::Npm(_) => "node_modules/.bin",
        _ => "bin",
    }
}

const STAMP: &str = ".agent-tools-recipe";

fn private_install(recipe: &Recipe, data: &Path) -> Result<Outcome, String> {
    let home = data.join("pkgs").join(&recipe.name);
    let bin = data.join("bin");
    let stamp_text = recipe.source.packages().join("\n");
    let targets: Vec<Entry> = recipe
        .bin
        .iter()
        .map(|b| Entry {
            name: b.clone(),
            target: home.join(exe_dir(&recipe.source)).join(b),
            script: false,
        })
        .chain(recipe.link.iter().map(|(name, rel)| Entry {
            name: name.clone(),
            target: home.join(rel),
            script: true,
        }))
        .collect();
    let stamped = std::fs::read_to_string(home.join(STAMP)).is_ok_and(|s| s == stamp_text);
    if stamped && targets.iter().all(|e| e.is_in(&bin) && e.target.exists()) {
        return Ok(Outcome::Present);
    }
    // Whatever is there without a matching stamp is a stale or broken install.
    remove_install(&home, &bin, &targets);
    std::fs::create_dir_all(&home).map_err(|e| format!("creating {}: {e}", home.display()))?;
    let done = build(recipe, &home)
        .and_then(|()| match targets.iter().find(|e| !e.target.exists()) {
            Some(e) => Err(format!(
                "the install finished but `{}` is not at {}",
                e.name,
                e.target.display()
            )),
            None => Ok(()),
        })
        .and_then(|()| {
            std::fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))
        })
        .and_then(|()| targets.iter().try_for_each(|e| e.make_in(&bin)))
        .and_then(|()| {
            std::fs::write(home.join(STAMP), &stamp_text)
                .map_err(|e| format!("writing the stamp: {e}"))
        });
    if let Err(why) = done {
        remove_install(&home, &bin, &targets);
        return Err(why);
    }
    Ok(Outcome::Installed(
        targets.into_iter().map(|e| e.name).collect(),
    ))
}

/// One executable of an install, as `bin/` exposes it.
struct Entry {
    name: String,
    /// The file inside the install.
    target: PathBuf,
    /// Exposed by a script that `exec`s it rather than by a link.
    script: bool,
}

impl Entry {
    fn script_text(&self) -> String {
        let quoted = self.target.to_string_lossy().replace('\'', "'\\''");
        format!("#!/bin/sh\nexec '{quoted}' \"$@\"\n")
    }

    /// Whether `bin/` holds this entry, as made by [`Entry::make_in`].
    fn is_in(&self, bin: &Path) -> bool {
        let at = bin.join(&self.name);
        if self.script {
            std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_file())
                && std::fs::read_to_string(&at).is_ok_and(|s| s == self.script_text())
        } else {
            std::fs::read_link(&at).is_ok_and(|t| t == self.target)
        }
    }

    /// Make `bin/name` run the target, replacing what was there in one
    /// rename.
    fn make_in(&self, bin: &Path) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let tmp = bin.join(format!(
            ".{}.agent-tools-{}.tmp",
            self.name,
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        let made = if self.script {
            std::fs::write(&tmp, self.script_text()).and_then(|()| {
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
            })
        } else {
            std::os::unix::fs::symlink(&self.target, &tmp)
        };
        made.and_then(|()| std::fs::rename(&tmp, bin.join(&self.name)))
            .map_err(|e| format!("linking {}: {e}", self.name))
    }
}

/// Remove an install and the entries of `bin/` that are its own.
fn remove_install(home: &Path, bin: &Path, targets: &[Entry]) {
    for e in targets {
        if e.is_in(bin) {
            let _ = std::fs::remove_file(bin.join(&e.name));
        }
    }
    let _ = std::fs::remove_dir_all(home);
}

fn build(recipe: &Recipe, home: &Path) -> Result<(), String> {
    match &recipe.source {
        Source::Npm(packages) => run(&ChildSpec::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(home)
            .args(packages)),
        Source::Pypi(packages) => {
            run(&ChildSpec::new("python3").args(["-m", "venv"]).arg(home))?;
            run(&ChildSpec::new(home.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(packages))
        }
        Source::Go(packages) => packages.iter().try_for_each(|p| {
            run(&ChildSpec::new("go")
                .args(["install", p])
                .env("GOBIN", home.join("bin"))
                .env("GOFLAGS", "-mod=mod"))
        }),
        Source::Rustup(_) | Source::Debian(_) => unreachable!("installed in place, not privately"),
    }
}

/// Run `spec` (its stdin null, its output captured) to its end; an error
/// carries its last stderr lines.
fn run(spec: &ChildSpec) -> Result<(), String> {
    let shown = format!("{:?}", spec.program())
        .trim_matches('"')
        .to_string();
    let out = crate::process::blocking::foreground_output(spec)
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
    Err(format!(
        "{shown} ended ({}){}",
        crate::process::describe_exit(out.status),
        if tail.is_empty() {
            String::new()
        } else {
            format!(": {tail}")
        }
    ))
}

fn rustup(components: &[String]) -> Result<Outcome, String> {
    let out = crate::process::blocking::foreground_output(&ChildSpec::new("rustup").args([
        "component",
        "list",
        "--installed",
    ]))
    .map_err(|e| format!("could not start rustup: {e}"))?;
    let installed = String::from_utf8_lossy(&out.stdout);
    let missing: Vec<&String> = components
        .iter()
        .filter(|c| !installed.lines().any(|l| l.starts_with(c.as_str())))
        .collect();
    if missing.is_empty() {
        return Ok(Outcome::Present);
    }
    run(&ChildSpec::new("rustup")
        .args(["component", "add"])
        .args(&missing))?;
    Ok(Outcome::Installed(missing.into_iter().cloned().collect()))
}

fn debian(recipe: &Recipe, packages: &[String]) -> Result<Outcome, String> {
    if recipe
        .bin
        .iter()
        .any(|b| crate::programs::find_program(b, Path::new("/"), &[], None).is_some())
    {
        return Ok(Outcome::Present);
    }
    let command = format!("apt-get install -y {}", packages.join(" "));
    if !rustix::process::geteuid().is_root() {
        return Ok(Outcome::NeedsRoot(command));
    }
    run(&ChildSpec::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    Ok(Outcome::Installed(recipe.bin.clone()))
}

#[cfg(test)]
mod tests;
