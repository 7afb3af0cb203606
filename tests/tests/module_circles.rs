//! No import circles inside a crate: each crate's top-level modules (the
//! files and folders under its src/, and under each src/bin/NAME/ for a
//! binary of several files) form a graph by the `crate::module`
//! paths their code names (comments and test modules left out), and that
//! graph has no cycle. A circle means two modules are one concern split in
//! two, or a type that lives in the wrong one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::name` paths a file's code names: its text before its first
/// `#[cfg(test)]`, without comment lines.
fn named_modules(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut names = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// Module → the modules of the same crate it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if ["lib", "main", "bin"].contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let named = named_modules(&text);
        graph
            .entry(module.clone())
            .or_default()
            .extend(named.into_iter().filter(|n| *n != module));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for targets in graph.values_mut() {
        targets.retain(|t| modules.contains(t));
    }
    graph
}

/// The cycles of `graph`: its strongly connected parts of more than one
/// module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in &self.graph[v] {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut part = Vec::new();
                while let Some(w) = self.stack.pop() {
                    part.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        // The library, and each binary of several files (`src/bin/NAME/`,
        // a crate of its own whose modules are that folder's).
        let mut roots = vec![(
            entry.file_name().to_string_lossy().into_owned(),
            src.clone(),
        )];
        if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
            for bin in bins.flatten().filter(|b| b.path().is_dir()) {
                let name = format!(
                    "{} (bin {})",
                    entry.file_name().to_string_lossy(),
                    bin.file_name().to_string_lossy()
                );
                roots.push((name, bin.path()));
            }
        }
        for (name, root) in roots {
            for circle in circles(&module_graph(&root)) {
                found.push(format!("{name}: {}", circle.join(" ↔ ")));
            }
        }
    }
    found.sort();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a"][..]),
        ("d", &["a"][..]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.iter().map(|t| (*t).to_string()).collect()))
    .collect();
    assert_eq!(circles(&graph), [["a", "b", "c"]]);
    assert_eq!(
        named_modules(
            "use crate::x::Y;\n// crate::z\nfn f() { crate::w::g() }\n#[cfg(test)]\nuse crate::t;"
        ),
        ["w", "x"].into_iter().map(String::from).collect()
    );
}
