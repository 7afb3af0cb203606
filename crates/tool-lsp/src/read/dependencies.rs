//! Whether the project around a file has the packages it declares: a fresh
//! checkout of a JavaScript or TypeScript project has no `node_modules`, and
//! its server then reports every import of a package, and every setting a
//! `tsconfig.json` takes from one (`"extends": "@sindresorhus/tsconfig"`),
//! as an error. Dozens of true but misleading errors read as broken code;
//! a diagnostics answer says where they may come from.

use std::path::Path;
use tool_core::fs::FileKind;
use tool_core::Workspace;

/// Extensions whose files depend on a `package.json`'s packages.
const PACKAGE_LANGUAGES: &[&str] = &[
    "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "vue", "svelte", "astro",
];

/// A package.json is read up to this size.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// A note for the diagnostics of `path` when the nearest `package.json`
/// between it and the workspace root declares packages and no
/// `node_modules` exists beside it or in a folder above it (up to the
/// workspace root); `None` otherwise.
pub(crate) fn missing_packages_note(ws: &Workspace, path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?;
    if !PACKAGE_LANGUAGES.contains(&ext) {
        return None;
    }
    let root = ws.root();
    let mut dir = path.parent()?;
    let (manifest_dir, declared) = loop {
        if !dir.starts_with(root) {
            return None;
        }
        let manifest = dir.join("package.json");
        if let Ok(Some(bytes)) = ws.dir().read_if_exists(&manifest, MAX_MANIFEST_BYTES) {
            break (dir, declared_packages(&bytes));
        }
        dir = dir.parent()?;
    };
    if declared == 0 {
        return None;
    }
    let installed = manifest_dir
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .any(|d| {
            matches!(
                ws.dir().kind(&d.join("node_modules")),
                Ok(Some(FileKind::Directory | FileKind::Symlink))
            )
        });
    if installed {
        return None;
    }
    let shown = ws.relative(&manifest_dir.join("package.json"));
    Some(format!(
        "note: {shown} declares {} and none is installed (no node_modules beside it or above it): \
         errors about imports, types and compiler settings (a tsconfig that extends a package) may come from that; \
         install the packages (npm install) to see the project as its authors do",
        tool_core::format::plural(declared, "package", "packages")
    ))
}

/// How many packages a package.json declares (dependencies of every kind).
fn declared_packages(manifest: &[u8]) -> usize {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(manifest) else {
        return 0;
    };
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .filter_map(|k| value.get(k).and_then(serde_json::Value::as_object))
    .map(serde_json::Map::len)
    .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    const MANIFEST: &str =
        r#"{"name": "x", "dependencies": {"a": "1"}, "devDependencies": {"b": "1", "c": "1"}}"#;

    #[test]
    fn declared_and_not_installed_is_said() {
        let (_d, ws) = project(&[("package.json", MANIFEST), ("src/a.ts", "")]);
        let note = missing_packages_note(&ws, &ws.root().join("src/a.ts")).unwrap();
        expect_test::expect!["note: package.json declares 3 packages and none is installed (no node_modules beside it or above it): errors about imports, types and compiler settings (a tsconfig that extends a package) may come from that; install the packages (npm install) to see the project as its authors do"].assert_eq(&note);
    }

    #[test]
    fn installed_undeclared_or_other_languages_say_nothing() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            // Installed beside the manifest, or in a folder above it.
            (
                &[
                    ("package.json", MANIFEST),
                    ("node_modules/a/index.js", ""),
                    ("a.ts", ""),
                ],
                "a.ts",
            ),
            (
                &[
                    ("package.json", "{}"),
                    ("node_modules/a/index.js", ""),
                    ("pkg/package.json", MANIFEST),
                    ("pkg/a.ts", ""),
                ],
                "pkg/a.ts",
            ),
            // Nothing declared, no manifest, not a package language.
            (
                &[("package.json", r#"{"name": "x"}"#), ("a.ts", "")],
                "a.ts",
            ),
            (&[("a.ts", "")], "a.ts"),
            (&[("package.json", MANIFEST), ("a.py", "")], "a.py"),
            // A manifest that is not JSON.
            (&[("package.json", "{"), ("a.js", "")], "a.js"),
        ];
        for (files, file) in cases {
            let (_d, ws) = project(files);
            assert_eq!(
                missing_packages_note(&ws, &ws.root().join(file)),
                None,
                "{files:?}"
            );
        }
    }
}
