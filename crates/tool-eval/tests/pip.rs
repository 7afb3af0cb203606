//! The default interpreter lookup (the project's `.venv`) and `%pip`: a real
//! install from PyPI into a throwaway virtualenv, then an import of it; an
//! upgrade purges the old modules from `sys.modules`.

mod common;
use common::*;
use std::process::Command;
use tool_eval::EvalConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_venv_is_used_and_pip_installs_are_importable() {
    let Some(python3) = test_support::fixtures::require(&["python3"]) else {
        return;
    };
    let run = Run::new(EvalConfig::default());
    let venv = run.root().join(".venv");
    // Without its own pip (fast to create): pip comes from the base install
    // and installs into this venv, which is the interpreter that runs it.
    let status = Command::new(&python3)
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(status.success());

    // No [eval] python: the kernel runs on the project's .venv.
    let out = run.py("import sys\nsys.prefix").await.unwrap();
    let t = text(&out);
    expect_test::expect![[r#"
        eval python  a test cell in python here
        (started a python kernel: Python 3.x from ROOT/.venv/bin/python (.venv))
        'ROOT/.venv'"#]]
    .assert_eq(&masked(&t, run.root()));

    // %pip runs the kernel's own pip; the next cell imports what it installed.
    let out = run
        .py("%pip install --quiet python-dotenv==1.0.0")
        .await
        .unwrap();
    let t = text(&out);
    expect_test::expect![[r#"
        eval python  a test cell in python here
        Changed distributions: python-dotenv; 0 modules purged from sys.modules, so the next import loads the new code."#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("import dotenv.version\ndotenv.version.__version__, dotenv.__file__.startswith(sys.prefix)").await.unwrap());
    assert!(t.ends_with("('1.0.0', True)"), "{t}");

    // An upgrade purges the imported `dotenv` modules (the distribution is
    // called python-dotenv: found through importlib.metadata), so the next
    // import loads the new version instead of the cached one.
    let t = text(
        &run.py("%pip install --quiet python-dotenv==1.0.1")
            .await
            .unwrap(),
    );
    expect_test::expect![[r#"
        eval python  a test cell in python here
        Changed distributions: python-dotenv; 5 modules purged from sys.modules (dotenv), so the next import loads the new code."#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("'dotenv' in sys.modules").await.unwrap());
    assert!(t.ends_with("False"), "{t}");
    let t = text(
        &run.py("import dotenv.version\ndotenv.version.__version__")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("'1.0.1'"), "{t}");
    run.finish().await;
}
