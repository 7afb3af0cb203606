//! Line breakpoints over JDWP: a file's line becomes a location in every
//! method of the file's loaded classes whose line table has code on it
//! (`ReferenceType.Methods`, `Method.LineTable`), and a breakpoint request
//! there. A class not loaded yet gets it when it loads: each file with
//! breakpoints has a `ClassPrepare` request for classes whose source file
//! has its name (JDWP's `SourceNameMatch`), which holds the JVM while the
//! breakpoints are set in the new class.
//!
//! Invariants: a breakpoint is `verified` once it has a location in some
//! class, or when a class file compiled of its file has code on its line
//! (that class is set when it loads: it is the file the JVM loads); one on
//! a line no class file of its file has code on is answered unverified
//! with why and the nearest lines with code ([`super::super::classfile`]);
//! without class files it waits, saying so; the classes of a file are
//! told by their source file name and their package, so two `Util.java` of
//! two packages never share breakpoints.

use super::kinds::Kinds;
use super::{Bridge, ClassInfo};
use crate::session::jdwp::commands::{self, LineTable, Modifier};
use crate::session::jdwp::wire::{JdwpError, Location};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The breakpoints of one file.
#[derive(Debug)]
pub(super) struct FileBreakpoints {
    path: PathBuf,
    /// `Stats.java`: what its classes' `SourceFile` says.
    file_name: String,
    /// Its package, from its `package` line.
    package: Option<String>,
    prepare_request: Option<i32>,
    lines: Vec<LineBreakpoint>,
}

#[derive(Debug)]
struct LineBreakpoint {
    dap_id: u64,
    line: u32,
    /// (class, breakpoint request) where it is set.
    requests: Vec<(u64, i32)>,
    /// Not set yet, but a class file of its file has code on its line:
    /// it is set when that class loads.
    expected: bool,
    message: Option<String>,
    /// Its condition or hit count cannot be read: never set.
    refused: bool,
    kinds: Kinds,
}

/// The package of a class signature: `Lcom/x/Stats$1;` → `com.x`.
fn package_of_signature(signature: &str) -> Option<String> {
    let name = signature.trim_start_matches('L').trim_end_matches(';');
    name.rsplit_once('/').map(|(p, _)| p.replace('/', "."))
}

impl Bridge {
    /// A class's signature and source file, read once.
    pub(super) async fn class_info(&self, class: u64) -> Result<ClassInfo, JdwpError> {
        if let Some(c) = self.st().classes.get(&class) {
            return Ok(c.clone());
        }
        let signature = self.jdwp.signature(class).await?;
        let source = self.jdwp.source_file(class).await?;
        let info = ClassInfo {
            signature,
            source,
            ..ClassInfo::default()
        };
        self.st().classes.entry(class).or_insert(info.clone());
        Ok(info)
    }

    /// A class's methods, read once.
    pub(super) async fn methods(&self, class: u64) -> Result<Vec<commands::Method>, JdwpError> {
        if let Some(m) = self
            .st()
            .classes
            .get(&class)
            .and_then(|c| c.methods.clone())
        {
            return Ok(m);
        }
        self.class_info(class).await?;
        let methods = self.jdwp.methods(class).await?;
        if let Some(c) = self.st().classes.get_mut(&class) {
            c.methods = Some(methods.clone());
        }
        Ok(methods)
    }

    /// A method's line table, read once; empty for one without code
    /// (native, abstract) or without line numbers.
    pub(super) async fn line_table(&self, class: u64, method: u64) -> LineTable {
        if let Some(t) = self
            .st()
            .classes
            .get(&class)
            .and_then(|c| c.lines.get(&method).cloned())
        {
            return t;
        }
        let table = self
            .jdwp
            .line_table(class, method)
            .await
            .unwrap_or_default();
        if let Some(c) = self.st().classes.get_mut(&class) {
            c.lines.insert(method, table.clone());
        }
        table
    }

    /// Every line table of a class, by method.
    async fn tables(&self, class: u64) -> Vec<(u64, LineTable)> {
        let mut out = Vec::new();
        for m in self.methods(class).await.unwrap_or_default() {
            out.push((m.id, self.line_table(class, m.id).await));
        }
        out
    }

    /// The loaded classes whose source is `file` (by name and package).
    async fn loaded_classes_of(&self, path: &Path) -> Vec<u64> {
        let Some((name, package)) = self.file_identity(path) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for c in self.jdwp.all_classes().await.unwrap_or_default() {
            if c.signature.starts_with('L')
                && package_of_signature(&c.signature) == package
                && self.class_info(c.id).await.ok().and_then(|i| i.source) == Some(name.clone())
            {
                out.push(c.id);
            }
        }
        out
    }

    fn file_identity(&self, path: &Path) -> Option<(String, Option<String>)> {
        let st = self.st();
        let f = st.files.iter().find(|f| f.path == path)?;
        Some((f.file_name.clone(), f.package.clone()))
    }

    pub(super) async fn set_breakpoints(&self, args: &Value) -> Result<Value, String> {
        let path = args
            .pointer("/source/path")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .ok_or("setBreakpoints needs source.path")?;
        let source = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let lines: Vec<(u32, Result<Kinds, String>)> = args
            .get("breakpoints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|b| {
                let line = b.get("line").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
                (line, Kinds::of(b))
            })
            .collect();
        // The file's old breakpoints go; its class-load request stays.
        let (old, prepare_request) = {
            let mut st = self.st();
            let old = st
                .files
                .iter()
                .position(|f| f.path == path)
                .map(|i| st.files.remove(i));
            let prepare = old.as_ref().and_then(|f| f.prepare_request);
            let requests: Vec<i32> = old
                .into_iter()
                .flat_map(|f| f.lines)
                .flat_map(|l| l.requests)
                .map(|(_, r)| r)
                .collect();
            (requests, prepare)
        };
        for r in old {
            let _ = self.jdwp.clear_event(commands::BREAKPOINT, r).await;
        }
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prepare_request = match prepare_request {
            Some(r) => Some(r),
            None => Some(
                self.jdwp
                    .set_event(
                        commands::CLASS_PREPARE,
                        &[Modifier::SourceNameMatch(file_name.clone())],
                    )
                    .await
                    .map_err(|e| e.to_string())?,
            ),
        };
        {
            let mut st = self.st();
            let mut entries = Vec::new();
            for (line, kinds) in lines {
                let (kinds, refused) = match kinds {
                    Ok(k) => (k, None),
                    Err(why) => (Kinds::default(), Some(why)),
                };
                entries.push(LineBreakpoint {
                    dap_id: st.next_breakpoint,
                    line,
                    requests: Vec::new(),
                    expected: false,
                    message: refused.clone(),
                    refused: refused.is_some(),
                    kinds,
                });
                st.next_breakpoint += 1;
            }
            st.files.push(FileBreakpoints {
                path: path.clone(),
                file_name,
                package: crate::adapters::java::package_of(&source),
                prepare_request,
                lines: entries,
            });
        }
        let classes = self.loaded_classes_of(&path).await;
        for class in &classes {
            self.bind(&path, *class).await;
        }
        self.explain_unbound(&path);
        let st = self.st();
        let file = st
            .files
            .iter()
            .find(|f| f.path == path)
            .expect("pushed above");
        let answers: Vec<Value> = file.lines.iter().map(|b| answer(&path, b)).collect();
        Ok(json!({ "breakpoints": answers }))
    }

    /// Set the file's breakpoints that have code in `class` there; the ids
    /// of those newly set.
    async fn bind(&self, path: &Path, class: u64) -> Vec<u64> {
        let wanted: Vec<(u64, u32)> = {
            let st = self.st();
            let Some(f) = st.files.iter().find(|f| f.path == path) else {
                return Vec::new();
            };
            f.lines
                .iter()
                .filter(|b| !b.refused && !b.requests.iter().any(|(c, _)| *c == class))
                .map(|b| (b.dap_id, b.line))
                .collect()
        };
        if wanted.is_empty() {
            return Vec::new();
        }
        let tables = self.tables(class).await;
        let mut bound = Vec::new();
        for (dap_id, line) in wanted {
            let mut set = Vec::new();
            for (method, table) in &tables {
                let Some(index) = table.first_index_of(line) else {
                    continue;
                };
                let location = Location {
                    type_tag: 1,
                    class,
                    method: *method,
                    index,
                };
                if let Ok(r) = self
                    .jdwp
                    .set_event(commands::BREAKPOINT, &[Modifier::LocationOnly(location)])
                    .await
                {
                    set.push((class, r));
                }
            }
            if set.is_empty() {
                continue;
            }
            let mut st = self.st();
            let b = st
                .files
                .iter_mut()
                .find(|f| f.path == path)
                .and_then(|f| f.lines.iter_mut().find(|b| b.dap_id == dap_id));
            if let Some(b) = b {
                let was_verified = b.expected || !b.requests.is_empty();
                b.requests.extend(set);
                b.message = None;
                if !was_verified {
                    bound.push(dap_id);
                }
            }
        }
        bound
    }

    /// Say what each breakpoint of the file without a location waits for,
    /// from the class files compiled of it: set when its class loads (a
    /// class of the file has code on its line), refused (none has, with
    /// the nearest lines that do), or pending when no class file of it is
    /// found. The ids whose word changed.
    fn explain_unbound(&self, path: &Path) -> Vec<u64> {
        let compiled = self.compiled_lines(path);
        let mut changed = Vec::new();
        let mut st = self.st();
        let Some(file) = st.files.iter_mut().find(|f| f.path == path) else {
            return changed;
        };
        let file_name = file.file_name.clone();
        for b in file
            .lines
            .iter_mut()
            .filter(|b| !b.refused && b.requests.is_empty())
        {
            let (expected, message) = match &compiled {
                Some(lines) if lines.contains(&b.line) => (true, None),
                Some(lines) => (false, Some(no_code(&file_name, b.line, lines))),
                None => (
                    false,
                    Some(format!(
                        "no class file of {file_name} was found: set when a class of it with code on line {} loads",
                        b.line
                    )),
                ),
            };
            if b.expected != expected || b.message != message {
                b.expected = expected;
                b.message = message;
                changed.push(b.dap_id);
            }
        }
        changed
    }

    /// The lines with code of the classes compiled of `path`
    /// (`Stats.class`, `Stats$1.class`, in its package's folder of the
    /// first class folder that has them), when there are such files.
    fn compiled_lines(&self, path: &Path) -> Option<Vec<u32>> {
        let (name, package) = self.file_identity(path)?;
        let stem = name.strip_suffix(".java")?.to_string();
        let package_path = package.map(|p| p.replace('.', "/")).unwrap_or_default();
        for dir in &self.places.class_dirs {
            let files: Vec<PathBuf> = std::fs::read_dir(dir.join(&package_path))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let n = p.file_name().unwrap_or_default().to_string_lossy();
                    n.strip_suffix(".class")
                        .is_some_and(|c| c == stem || c.starts_with(&format!("{stem}$")))
                })
                .collect();
            if files.is_empty() {
                continue;
            }
            let mut lines = Vec::new();
            for f in files {
                let data = std::fs::read(&f).ok()?;
                lines.extend(crate::session::jdwp::classfile::code_lines(&data).ok()?);
            }
            lines.sort_unstable();
            lines.dedup();
            return Some(lines);
        }
        None
    }

    /// A class loaded: set the breakpoints of its file in it, say which
    /// were set and which lines have no code.
    pub(super) async fn prepared(&self, class: u64, signature: &str) {
        let package = package_of_signature(signature);
        let source = self.class_info(class).await.ok().and_then(|i| i.source);
        let files: Vec<PathBuf> = {
            let st = self.st();
            st.files
                .iter()
                .filter(|f| f.package == package && Some(&f.file_name) == source.as_ref())
                .map(|f| f.path.clone())
                .collect()
        };
        for path in files {
            let mut changed = self.bind(&path, class).await;
            changed.extend(self.explain_unbound(&path));
            let events: Vec<Value> = {
                let st = self.st();
                let Some(file) = st.files.iter().find(|f| f.path == path) else {
                    continue;
                };
                file.lines
                    .iter()
                    .filter(|b| changed.contains(&b.dap_id))
                    .map(|b| answer(&path, b))
                    .collect()
            };
            for b in events {
                self.dap
                    .event("breakpoint", json!({"reason": "changed", "breakpoint": b}))
                    .await;
            }
        }
    }
}

impl Bridge {
    /// The kinds, file and line of the breakpoint request `request` set.
    pub(super) fn breakpoint_of(&self, request: i32) -> Option<(Kinds, PathBuf, u32)> {
        let st = self.st();
        st.files.iter().find_map(|f| {
            f.lines
                .iter()
                .find(|b| b.requests.iter().any(|(_, r)| *r == request))
                .map(|b| (b.kinds.clone(), f.path.clone(), b.line))
        })
    }

    /// Count a hit of the breakpoint request `request`; its hits so far.
    pub(super) fn count_hit(&self, request: i32) -> u64 {
        let mut st = self.st();
        for f in &mut st.files {
            for b in &mut f.lines {
                if b.requests.iter().any(|(_, r)| *r == request) {
                    b.kinds.hits += 1;
                    return b.kinds.hits;
                }
            }
        }
        0
    }
}

/// A breakpoint as DAP answers it.
fn answer(path: &Path, b: &LineBreakpoint) -> Value {
    let mut v = json!({"id": b.dap_id, "verified": b.expected || !b.requests.is_empty(), "line": b.line,
        "source": {"path": path}});
    if let Some(m) = &b.message {
        v["message"] = json!(m);
    }
    v
}

/// Why `line` of `file` takes no breakpoint, with the nearest lines that
/// would.
fn no_code(file: &str, line: u32, code_lines: &[u32]) -> String {
    let before = code_lines.iter().rev().find(|l| **l < line);
    let after = code_lines.iter().find(|l| **l > line);
    let near = match (before, after) {
        (Some(b), Some(a)) => format!("; the nearest lines with code are {b} and {a}"),
        (Some(n), None) | (None, Some(n)) => format!("; the nearest line with code is {n}"),
        (None, None) => String::new(),
    };
    format!("not set: line {line} of {file} has no code{near}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_told_by_package() {
        assert_eq!(
            package_of_signature("Lcom/x/Stats$1;").as_deref(),
            Some("com.x")
        );
        assert_eq!(package_of_signature("LMain;"), None);
        assert_eq!(
            no_code("Stats.java", 9, &[3, 8, 10]),
            "not set: line 9 of Stats.java has no code; the nearest lines with code are 8 and 10"
        );
        assert_eq!(
            no_code("Stats.java", 40, &[3, 8, 10]),
            "not set: line 40 of Stats.java has no code; the nearest line with code is 10"
        );
    }
}
