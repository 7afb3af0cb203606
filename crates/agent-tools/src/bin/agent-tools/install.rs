//! `agent-tools install`: the language servers, debug adapters and checkers
//! a root needs (or the languages and recipes named), from the package
//! registries into the per-user data folder, by the recipes of
//! `tool_core::install`.

use std::path::{Path, PathBuf};
use tool_core::install::{self, Outcome};

/// File extensions that show a language is used under a root.
const EXTENSIONS: &[(&str, &str)] = &[
    ("py", "python"),
    ("pyi", "python"),
    ("ts", "typescript"),
    ("tsx", "typescript"),
    ("mts", "typescript"),
    ("js", "javascript"),
    ("jsx", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("rs", "rust"),
    ("go", "go"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
];

/// Folders never looked into when guessing a root's languages.
const SKIPPED: &[&str] = &["node_modules", "target", "venv", "build", "dist", "vendor"];

/// The languages whose files sit under `root`, in a bounded look (four
/// levels, 20,000 entries, hidden and build folders left out), sorted.
pub(crate) fn languages_under(root: &Path) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut budget = 20_000usize;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if depth < 4 && !SKIPPED.contains(&name.as_ref()) {
                    stack.push((e.path(), depth + 1));
                }
            } else if let Some((_, lang)) = name
                .rsplit_once('.')
                .and_then(|(_, ext)| EXTENSIONS.iter().find(|(e, _)| *e == ext))
            {
                if !found.iter().any(|f| f == lang) {
                    found.push(lang.to_string());
                }
            }
        }
    }
    found.sort();
    found
}

pub(crate) fn run(targets: Vec<String>, root: PathBuf) -> u8 {
    let Some(data) = install::data_dir() else {
        eprintln!("agent-tools install: no data folder: set AGENT_TOOLS_DATA_DIR or HOME");
        return 2;
    };
    let targets = if targets.is_empty() {
        let found = languages_under(&root);
        if found.is_empty() {
            eprintln!(
                "agent-tools install: no source files of a known language under {}; name the languages (python, typescript, …)",
                root.display()
            );
            return 2;
        }
        println!("languages under {}: {}", root.display(), found.join(", "));
        found
    } else {
        targets
    };
    let recipes = match install::select(&targets) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agent-tools install: {e}");
            return 2;
        }
    };
    println!("into {}", data.display());
    let mut failed = 0;
    for recipe in recipes {
        let what = format!("{} ({})", recipe.name, recipe.source.packages().join(" "));
        match install::install(recipe, &data) {
            Ok(Outcome::Present) => println!("{what}: present"),
            Ok(Outcome::Installed(bins)) if bins.is_empty() => println!("{what}: installed"),
            Ok(Outcome::Installed(bins)) => {
                println!("{what}: installed ({})", bins.join(", "));
            }
            Ok(Outcome::NeedsRoot(command)) => {
                failed += 1;
                println!("{what}: not installed — needs root: {command}");
            }
            Err(e) => {
                failed += 1;
                println!("{what}: FAILED — {} failed: {}", e.registry, e.why);
            }
        }
    }
    u8::from(failed > 0)
}
