//! A rename is judged against the build, as a write is: against
//! rust-analyzer, paths to the item in `macro_rules!` bodies (which the
//! server does not rename) are renamed when they name it without doubt;
//! a path that may name it through a re-export refuses the rename unless
//! `partial`; and a partial rename that breaks the build says where,
//! first.

mod common;

use common::{masked, Run};
use serde_json::json;

/// Not `m`: a library named so is not found by `$crate::` paths of its
/// macros in its tests (rustc 1.95: E0425 "not found in `$crate`").
const CARGO_TOML: &str = "[package]\nname = \"levels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// A crate whose macros call `level` by `$crate::` paths: `src/imp.rs`
/// declares it, the crate root re-exports it.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", CARGO_TOML),
    (
        "src/lib.rs",
        "mod imp;\npub use imp::level;\n\n/// The level, through the re-export.\n#[macro_export]\nmacro_rules! lvl {\n    () => {\n        $crate::level()\n    };\n}\n\n/// The level, by its module.\n#[macro_export]\nmacro_rules! direct {\n    () => {\n        $crate::imp::level()\n    };\n}\n\npub fn twice() -> u8 {\n    direct!() * 2\n}\n",
    ),
    ("src/imp.rs", "pub fn level() -> u8 {\n    1\n}\n"),
    (
        "tests/it.rs",
        "#[test]\nfn through_the_macro() {\n    assert_eq!(levels::lvl!(), 1);\n}\n",
    ),
];

fn run_on(files: &[(&str, &str)]) -> Run {
    Run::with_files(files, 60_000)
}

fn rename(partial: bool) -> serde_json::Value {
    json!({"file": "src/imp.rs", "line": 1, "symbol": "level", "new_name": "height", "partial": partial})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_may_name_the_item_refuses_the_rename_and_partial_says_what_broke() {
    if test_support::fixtures::require(&["rust-analyzer"]).is_none() {
        return;
    }
    let run = run_on(FILES);
    let refused = run
        .call("lsp_rename", rename(false))
        .await
        .expect_err("a `$crate::level` path is left");
    expect_test::expect![[r#"
        refused: the rename of `level` to `height` by rust (rust-analyzer) skips paths in macro bodies, which may name the same item (the server resolves a macro's paths only where it is used):
        src/lib.rs:8 `$crate::level`
        nothing was written; pass `partial: true` to rename without them"#]]
    .assert_eq(&refused.to_string());
    for (path, text) in FILES {
        assert_eq!(run.read(path), *text, "{path} was written");
    }

    let partial = run.call("lsp_rename", rename(true)).await.unwrap();
    let root = run.root.clone();
    expect_test::expect![[r#"
        lsp: 1 new problem in 1 file after this rename:
        src/lib.rs:8:17 error [E0425] cannot find function `level` in crate `$crate`
        lsp_rename  `level` → `height`: 3 edits in 2 files
        src/imp.rs (1 edit)
        src/lib.rs (2 edits)
        1 of them a path in macro bodies (the server renames a macro's paths only where it is used)
        not renamed — `level` in comments and strings: src/lib.rs:4, 12
        not renamed — 1 mention of `level` in code the server did not resolve (may be other symbols): src/lib.rs (1)"#]]
    .assert_eq(&masked(&partial, &root));
    // The re-export and the module path renamed; `$crate::level` left.
    let lib = FILES[1]
        .1
        .replace("pub use imp::level;", "pub use imp::height;")
        .replace("$crate::imp::level()", "$crate::imp::height()");
    assert_eq!(run.read("src/lib.rs"), lib);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crate_paths_in_macro_bodies_are_renamed_with_the_item() {
    if test_support::fixtures::require(&["rust-analyzer"]).is_none() {
        return;
    }
    // As rust-lang/log's `max_level`: declared at the crate root, called
    // by `$crate::` paths from macros in another module.
    let files: &[(&str, &str)] = &[
        ("Cargo.toml", CARGO_TOML),
        (
            "src/lib.rs",
            "#[macro_use]\nmod macros;\n\npub fn max_level() -> u8 {\n    3\n}\n\npub fn below(n: u8) -> bool {\n    at_most!(n)\n}\n",
        ),
        (
            "src/macros.rs",
            "#[macro_export]\nmacro_rules! at_most {\n    ($n:expr) => {\n        $n <= $crate::max_level() && $n <= $crate :: max_level()\n    };\n}\n",
        ),
        (
            "tests/it.rs",
            "#[test]\nfn below() {\n    assert!(levels::at_most!(2));\n}\n",
        ),
    ];
    let run = run_on(files);
    let out = run
        .call(
            "lsp_rename",
            json!({"file": "src/lib.rs", "line": 4, "symbol": "max_level", "new_name": "ceiling"}),
        )
        .await
        .unwrap();
    expect_test::expect![[r#"
        lsp_rename  `max_level` → `ceiling`: 3 edits in 2 files
        src/lib.rs (1 edit)
        src/macros.rs (2 edits)
        2 of them paths in macro bodies (the server renames a macro's paths only where it is used)"#]]
    .assert_eq(&out);
    assert_eq!(
        run.read("src/macros.rs"),
        "#[macro_export]\nmacro_rules! at_most {\n    ($n:expr) => {\n        $n <= $crate::ceiling() && $n <= $crate :: ceiling()\n    };\n}\n"
    );
    run.finish().await;
}
