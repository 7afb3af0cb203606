//! The JavaScript kernel on the real Node.js.

mod common;
use common::*;
use expect_test::expect;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declarations_await_display_require_and_errors() {
    let Some(run) = Run::fixtures() else { return };
    std::fs::write(
        run.root().join("helper.js"),
        "module.exports = { twice: (n) => n * 2 };\n",
    )
    .unwrap();
    std::fs::write(run.root().join("esm.mjs"), "export const answer = 42;\n").unwrap();

    // Top-level let/const/function/class persist into later cells.
    let out = run
        .js("let count = 1;\nconst base = 10;\nfunction add(a, b) { return a + b }\nclass Box { constructor(v) { this.v = v } }")
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval javascript  a test cell in javascript here
        (started a javascript kernel: Node.js N from NODE (config))
        (no output)"#]]
    .assert_eq(&masked(&t, run.root()));
    let pid = kernel_pid(&out);
    let t = text(
        &run.js("count += 1;\nnew Box(add(base, count)).v")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("\n12"), "{t}");

    // Top-level await, and what it assigns persists.
    let t = text(
        &run.js(
            "const later = await new Promise((r) => setTimeout(() => r('resolved'), 30));\nlater",
        )
        .await
        .unwrap(),
    );
    assert!(t.ends_with("'resolved'") || t.ends_with("resolved"), "{t}");
    assert!(text(&run.js("later.length").await.unwrap()).ends_with("\n8"));
    // A declaration may be made again in a later cell, as in a console.
    assert!(text(&run.js("let count = 100; count").await.unwrap()).ends_with("\n100"));

    // The last expression goes through util.inspect; undefined is not echoed.
    let t = text(
        &run.js("({ a: [1, 2], m: new Map([['k', 1]]) })")
            .await
            .unwrap(),
    );
    assert!(
        t.ends_with("{ a: [ 1, 2 ], m: Map(1) { 'k' => 1 } }"),
        "{t}"
    );
    assert!(text(&run.js("undefined").await.unwrap()).ends_with("(no output)"));

    // console.log/error are captured; display() sits where it was called
    // (stdout and stderr are separate pipes, so only stdout's order is fixed).
    let t = text(
        &run.js(
            "console.log('out line');\ndisplay({ shown: true });\nconsole.log('next line');\n'end'",
        )
        .await
        .unwrap(),
    );
    expect![[r#"
        eval javascript  a test cell in javascript here
        out line
        { shown: true }
        next line
        end"#]]
    .assert_eq(&masked(&t, run.root()));
    let t = text(&run.js("console.error('err line')").await.unwrap());
    assert!(t.ends_with("err line"), "{t}");
    // A PNG buffer displays as an image.
    let out = run
        .js("display(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'))")
        .await
        .unwrap();
    let (mime, data) = out.images().next().expect("an image");
    assert_eq!(mime, "image/png");
    assert_eq!(&data[..4], b"\x89PNG");

    // require and dynamic import resolve from the workspace.
    let t = text(
        &run.js("const { twice } = require('./helper.js');\ntwice(21)")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("\n42"), "{t}");
    let t = text(
        &run.js("const esm = await import('./esm.mjs');\nesm.answer + 1")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("\n43"), "{t}");
    let t = text(
        &run.js("(await import('node:path')).join('a', 'b')")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("a/b"), "{t}");

    // A child process's output to fd 1 is captured.
    let t = text(
        &run.js("require('child_process').execSync('echo from a child', { stdio: 'inherit' }); 1")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval javascript  a test cell in javascript here
        from a child
        1"#]]
    .assert_eq(&masked(&t, run.root()));

    // Errors come back with their stack, trimmed to the cell's frames.
    let e = run.js("function explode() { throw new TypeError('bad input') }\nconsole.log('partial');\nexplode()").await.unwrap_err();
    let t = err_text(&e);
    // The driver's frames are trimmed.
    expect![[r#"
        failed: eval javascript  a test cell in javascript here
        partial
        TypeError: bad input
            at explode (cell15.js:1:28)
            at cell15.js:3:1
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    let t = err_text(&run.js("this is not javascript").await.unwrap_err());
    expect![[r#"
        failed: eval javascript  a test cell in javascript here
        SyntaxError: Unexpected identifier 'is'
            at cell16.js:1
          1 | this is not javascript
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    // A hint for static imports.
    let t = err_text(&run.js("import fs from 'fs'").await.unwrap_err());
    expect![[r#"
        failed: eval javascript  a test cell in javascript here
        SyntaxError: Cannot use import statement outside a module
            at cell17.js:1
          1 | import fs from 'fs'
        (static import is for modules: write `const m = await import('pkg')` or `const m = require('pkg')`)
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    let t = err_text(
        &run.js("await Promise.reject(new Error('rejected'))")
            .await
            .unwrap_err(),
    );
    expect![[r#"
        failed: eval javascript  a test cell in javascript here
        Error: rejected
            at cell18.js:1:22
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    // State survives errors.
    assert!(text(&run.js("base").await.unwrap()).ends_with("\n10"));

    // Python and JavaScript kernels are separate and both live.
    let py = text(&run.py("'py alive'").await.unwrap());
    assert!(py.ends_with("'py alive'"), "{py}");
    let out = run.js("base").await.unwrap();
    assert_eq!(kernel_pid(&out), pid);

    run.finish().await;
}
