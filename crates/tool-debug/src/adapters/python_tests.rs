//! Python tests and modules under debugpy: what `python -m …` a launch
//! runs. A `test` (a pytest node id, or a test's name inside the `program`
//! test file) becomes `python -m pytest NODEID` when the project
//! interpreter can import pytest (pytest also runs `unittest.TestCase`
//! classes), else `python -m unittest MODULE.Class.test`; a `module`
//! becomes `python -m MODULE ARGS`. debugpy runs either through its
//! launch `module` key, with the same interpreter a program would get.
//!
//! Invariant: everything here is decided before anything starts; a test
//! name that cannot be run is refused with why.

use std::path::Path;

/// `python -m MODULE ARGS…` as debugpy's launch runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonModule {
    pub module: String,
    /// The arguments in front of the model's own `args`.
    pub leading_args: Vec<String>,
    /// How the launch is named in answers (`pytest tests/t.py::test_a`).
    pub label: String,
}

/// Which runner runs a Python test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Pytest,
    Unittest,
}

/// A `test` split into the file it names (a pytest node id's path, when
/// it names a `.py` file) and the test inside it.
pub fn split_node_id(test: &str) -> (Option<&str>, &str) {
    match test.split_once("::") {
        Some((file, rest)) if file.ends_with(".py") => (Some(file), rest),
        _ => (None, test),
    }
}

/// `python -m MODULE` with the model's `module`: a dotted name.
pub fn module_run(module: &str) -> Result<PythonModule, String> {
    let module = module.trim();
    let dotted = !module.is_empty()
        && module.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    if !dotted {
        return Err(format!(
            "`module` is `{module}`, not a Python module name (like pytest, http.server or mypkg.cli)"
        ));
    }
    Ok(PythonModule {
        module: module.to_string(),
        leading_args: Vec::new(),
        label: format!("python -m {module}"),
    })
}

/// The run of test `name` in the test file `file` (absolute), from the
/// working directory `cwd`, by `runner`; `source` is the file's text.
pub fn test_run(
    runner: Runner,
    file: &Path,
    cwd: &Path,
    name: &str,
    source: &str,
) -> Result<PythonModule, String> {
    let name = name.trim();
    if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
        return Err(format!(
            "`test` is `{name}`, not a test name (like test_mean, TestStats::test_mean, or tests/test_stats.py::test_mean)"
        ));
    }
    let rel = file.strip_prefix(cwd).map(Path::to_path_buf);
    match runner {
        Runner::Pytest => {
            // `Class.test` is pytest's `Class::test` (a parameter id in
            // brackets keeps its dots).
            let (plain, params) = name.split_at(name.find('[').unwrap_or(name.len()));
            let name = format!("{}{params}", plain.replace('.', "::"));
            let path = rel.unwrap_or_else(|_| file.to_path_buf());
            let node = format!("{}::{name}", path.display());
            Ok(PythonModule {
                module: "pytest".into(),
                leading_args: vec![node.clone()],
                label: format!("pytest {node}"),
            })
        }
        Runner::Unittest => {
            let rel = rel.map_err(|_| {
                format!(
                    "unittest imports the test file as a module from the working directory {}, and the file is outside it; pass `cwd`",
                    cwd.display()
                )
            })?;
            let module = dotted_module(&rel).ok_or_else(|| {
                format!(
                    "unittest imports the test file as a module, and {} is not importable by a dotted name from {}",
                    rel.display(),
                    cwd.display()
                )
            })?;
            let name = name.replace("::", ".");
            let qualified = if name.contains('.') {
                name
            } else {
                let class = class_defining(source, &name).ok_or_else(|| {
                    format!(
                        "no method `{name}` in a class of {}; name it as Class.{name}",
                        rel.display()
                    )
                })?;
                format!("{class}.{name}")
            };
            let target = format!("{module}.{qualified}");
            Ok(PythonModule {
                module: "unittest".into(),
                leading_args: vec![target.clone()],
                label: format!("unittest {target}"),
            })
        }
    }
}

/// Whether a test file's text uses pytest itself (then unittest cannot
/// run it).
pub fn imports_pytest(source: &str) -> bool {
    source.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("import pytest")
            || l.starts_with("from pytest")
            || l.starts_with("from _pytest")
    })
}

/// `tests/test_stats.py` → `tests.test_stats`.
fn dotted_module(rel: &Path) -> Option<String> {
    let stem = rel.with_extension("");
    let parts: Vec<&str> = stem
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    let ok = parts.iter().all(|p| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
    });
    ok.then(|| parts.join("."))
}

/// The top-level class whose body defines `def method(`.
fn class_defining(source: &str, method: &str) -> Option<String> {
    let mut class = None;
    let def = format!("def {method}(");
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix("class ") {
            class = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .map(str::to_string);
        } else if !line.starts_with([' ', '\t']) && !line.trim().is_empty() {
            class = None;
        } else if (line.trim_start().starts_with(&def)
            || line.trim_start().starts_with(&format!("async {def}")))
            && class.is_some()
        {
            return class;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_named_as_each_runner_wants() {
        let file = Path::new("/w/tests/test_stats.py");
        let cwd = Path::new("/w");
        let source = "import unittest\n\nclass StatsTest(unittest.TestCase):\n    def test_mean(self):\n        pass\n\ndef test_top():\n    pass\n";
        let show = |runner, name: &str| match test_run(runner, file, cwd, name, source) {
            Ok(m) => format!("{} {:?} ({})", m.module, m.leading_args, m.label),
            Err(e) => format!("error: {e}"),
        };
        let lines = [
            show(Runner::Pytest, "test_top"),
            show(Runner::Pytest, "StatsTest.test_mean"),
            show(Runner::Pytest, "test_p[1.5-x]"),
            show(Runner::Unittest, "test_mean"),
            show(Runner::Unittest, "StatsTest::test_mean"),
            show(Runner::Unittest, "test_top"),
            show(Runner::Pytest, "-k mean"),
        ];
        expect_test::expect![[r#"
            pytest ["tests/test_stats.py::test_top"] (pytest tests/test_stats.py::test_top)
            pytest ["tests/test_stats.py::StatsTest::test_mean"] (pytest tests/test_stats.py::StatsTest::test_mean)
            pytest ["tests/test_stats.py::test_p[1.5-x]"] (pytest tests/test_stats.py::test_p[1.5-x])
            unittest ["tests.test_stats.StatsTest.test_mean"] (unittest tests.test_stats.StatsTest.test_mean)
            unittest ["tests.test_stats.StatsTest.test_mean"] (unittest tests.test_stats.StatsTest.test_mean)
            error: no method `test_top` in a class of tests/test_stats.py; name it as Class.test_top
            error: `test` is `-k mean`, not a test name (like test_mean, TestStats::test_mean, or tests/test_stats.py::test_mean)"#]]
        .assert_eq(&lines.join("\n"));
        assert_eq!(
            split_node_id("tests/t.py::C::test_a"),
            (Some("tests/t.py"), "C::test_a")
        );
        assert_eq!(split_node_id("C::test_a"), (None, "C::test_a"));
        assert!(module_run("http.server").is_ok());
        assert_eq!(
            module_run("-m pytest").unwrap_err(),
            "`module` is `-m pytest`, not a Python module name (like pytest, http.server or mypkg.cli)"
        );
        assert!(imports_pytest("import os\nimport pytest\n"));
        assert!(!imports_pytest("import unittest\n# import pytest? no\n"));
    }
}
