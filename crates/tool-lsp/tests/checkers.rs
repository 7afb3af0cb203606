//! `diagnostics "*"`: each project checker runs for real and its output is
//! parsed into the same lines as a server's diagnostics.

mod common;

use common::{masked, project, Run};
use expect_test::{expect, Expect};
use serde_json::json;
use tool_lsp::{CatalogConfig, LspBinding};

async fn check(fixture: &str, tools: &[&str], says: Expect) {
    check_with(fixture, tools, says, LspBinding::new(Default::default())).await;
}

/// `diagnostics "*"` on the fixture: the whole answer (the run's folder
/// masked).
async fn check_with(fixture: &str, tools: &[&str], says: Expect, binding: LspBinding) {
    if test_support::fixtures::require(tools).is_none() {
        return;
    }
    let run = Run::with_binding(project(fixture), binding);
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    says.assert_eq(&masked(&out, &run.root));
    // Checkers are one-shot processes: no server was started.
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn basedpyright_checks_the_python_project() {
    check(
        "python",
        &["basedpyright", "pyright"],
        expect![[r#"
            lsp diagnostics *  python at . (basedpyright --outputjson) — 1 error, 1 other in 2 files
            broken.py:2:12 error [reportReturnType] Type "Literal['not a number']" is not assignable to return type "int"
            util.py:5:14 warning [reportUnannotatedClassAttribute] Type annotation for attribute `word` is required because this class is not decorated with `@final`"#]],
    )
    .await;
}

#[tokio::test]
async fn tsc_checks_the_typescript_project() {
    check(
        "typescript",
        &["tsc"],
        expect![[r#"
            lsp diagnostics *  typescript at . (tsc --noEmit --pretty false) — 1 error, 0 others in 1 file
            src/broken.ts:2:3 error [TS2322] Type 'string' is not assignable to type 'number'."#]],
    )
    .await;
}

#[tokio::test]
async fn cargo_check_checks_the_rust_project() {
    // The test inherits this workspace's CARGO_TARGET_DIR, whose lock the
    // running `cargo test` holds; the checker gets its own (through the
    // catalog config, as a harness would set it).
    let target = tempfile::tempdir().unwrap();
    let config: CatalogConfig = serde_json::from_value(json!({"servers": [{
        "id": "rust", "extensions": {"rs": "rust"}, "commands": [["rust-analyzer"]],
        "root_markers": ["Cargo.toml"], "root_rule": "cargo_workspace",
        "checker": {"commands": [["cargo", "check", "--message-format=json"]], "format": "cargo_json",
                    "env": {"CARGO_TARGET_DIR": target.path().to_str().unwrap()}}
    }]}))
    .unwrap();
    check_with(
        "rust",
        &["cargo"],
        expect![[r#"
            lsp diagnostics *  rust at . (cargo check --message-format=json) — 1 error, 0 others in 1 file
            src/broken.rs:2:5 error [E0308] mismatched types"#]],
        LspBinding::new(config),
    )
    .await;
}

#[tokio::test]
async fn go_vet_checks_the_go_project() {
    check(
        "go",
        &["go"],
        expect![[r#"
            lsp diagnostics *  go at . (go vet ./...) — 1 error, 0 others in 1 file
            broken.go:4:9 error cannot use "not a number" (untyped string constant) as int value in return statement"#]],
    )
    .await;
}

#[tokio::test]
async fn clangd_checks_the_compile_database() {
    check(
        "c",
        &["clangd"],
        expect![[r#"
            lsp diagnostics *  c at . (clangd --check on 3 files of compile_commands.json) — 0 errors, 1 other in 1 file
            broken.c:2:1 problem [undeclared_var_use] use of undeclared identifier 'missing_name'"#]],
    )
    .await;
}

#[tokio::test]
async fn c_without_a_compile_database_says_there_is_no_checker() {
    if test_support::fixtures::require(&["clangd"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
    std::fs::write(dir.path().join("a.c"), "int main(void) { return 0; }\n").unwrap();
    let run = Run::new(dir);
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    expect!["lsp diagnostics *  c at .: there is no project checker for C/C++ without a compile database: no compile_commands.json in .; generate one (cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, bear) or use op `diagnostics` on one file"].assert_eq(&masked(&out, &run.root));
    run.finish().await;
}

/// The java entry as the built-in catalog has it, with Maven resolving
/// offline from the fixtures' local repository (as a harness would set
/// MAVEN_OPTS; `cargo xtask fixtures` fills it).
fn java_with_fixture_repository() -> CatalogConfig {
    let repo = test_support::fixtures::dir().join("m2");
    serde_json::from_value(json!({"servers": [{
        "id": "java", "extensions": {"java": "java"}, "commands": [["jdtls", "-data", "{own_dir}"]],
        "root_markers": ["pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", ".project"],
        "checker": {"commands": [["mvn", "-q", "-o", "-B", "-Dstyle.color=never", "compile"],
                                 ["./gradlew", "compileJava", "--offline", "-q", "--console=plain"],
                                 ["gradle", "compileJava", "--offline", "-q", "--console=plain"]],
                    "format": "java_build",
                    "env": {"MAVEN_OPTS": format!("-Dmaven.repo.local={}", repo.display())}}
    }]}))
    .unwrap()
}

/// `diagnostics "*"` on Java projects: the Maven fixture with one type
/// error introduced (exactly that error, Maven's repeat of it folded); a
/// Gradle build where Gradle is not installed; an Eclipse project with
/// neither build.
#[tokio::test]
async fn java_builds_check_the_java_project() {
    if test_support::fixtures::require(&["mvn"]).is_none() {
        return;
    }
    let maven = test_support::project::copy_fixture("debug", "junit");
    let stats = maven.path().join("src/main/java/demo/stats/Stats.java");
    let text = std::fs::read_to_string(&stats).unwrap();
    std::fs::write(
        &stats,
        text.replace("int total = 0;", "int total = \"zero\";"),
    )
    .unwrap();
    let gradle = tempfile::tempdir().unwrap();
    std::fs::write(
        gradle.path().join("settings.gradle"),
        "rootProject.name = 'g'\n",
    )
    .unwrap();
    std::fs::write(
        gradle.path().join("build.gradle"),
        "plugins { id 'java' }\n",
    )
    .unwrap();
    std::fs::write(gradle.path().join("A.java"), "class A {}\n").unwrap();
    let eclipse = tempfile::tempdir().unwrap();
    std::fs::write(eclipse.path().join(".project"), "<projectDescription/>\n").unwrap();
    std::fs::write(eclipse.path().join("A.java"), "class A {}\n").unwrap();
    let mut said = Vec::new();
    for dir in [maven, gradle, eclipse] {
        let run = Run::with_binding(dir, LspBinding::new(java_with_fixture_repository()));
        let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
        said.push(masked(&out, &run.root));
        assert!(run.pids().await.is_empty());
        run.finish().await;
    }
    expect![[r#"
        lsp diagnostics *  java at . (mvn -q -o -B -Dstyle.color=never compile) — 1 error, 0 others in 1 file
        src/main/java/demo/stats/Stats.java:8:21 error incompatible types: java.lang.String cannot be converted to int

        lsp diagnostics *  java at .: its checker is not installed: looked for ./gradlew, gradle in .venv/bin, venv/bin, node_modules/.bin and on $PATH

        lsp diagnostics *  java at .: no Maven or Gradle build at . (no pom.xml, build.gradle or settings.gradle): the Java checker runs the project's build (mvn -q -o compile, gradle compileJava --offline); ask `diagnostics` per file instead (jdtls answers)"#]].assert_eq(&said.join("\n\n"));
}
