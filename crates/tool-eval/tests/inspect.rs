//! `inspect: true` lists what a kernel holds — the user's variables with
//! their type and shape, length or signature — and leaves out modules, what
//! was imported from them, and `_`-names.

mod common;
use common::*;
use serde_json::json;

fn inspect(language: &str) -> serde_json::Value {
    json!({"inspect": true, "language": language, "description": "what the kernel holds now"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_variables_are_listed_without_modules_or_helpers() {
    let Some(run) = Run::fixtures() else { return };
    let out = run.call(inspect("python")).await.unwrap();
    expect_test::expect![[r#"
        eval python  what the kernel holds now
        (no python kernel is running, so it holds nothing; a cell starts one)"#]]
    .assert_eq(&text(&out));
    assert!(
        run.eval.kernel_pids().await.is_empty(),
        "inspect starts no kernel"
    );

    run.py(
        "import os\nimport pandas as pd\nfrom os.path import join\nfrom collections import OrderedDict\n\
         df = pd.DataFrame({'city': ['Oslo', 'Lima'] * 50, 'n': range(100)})\n\
         cities = ['Oslo', 'Lima', 'Kyiv']\n\
         def per_city(frame, column='n'):\n    return frame.groupby('city')[column].sum()\n\
         class Trip:\n    def __init__(self, start, end): pass\n\
         count = 3\nname = 'short'\n_hidden = 1\nordered = OrderedDict(a=1)",
    )
    .await
    .unwrap();
    let out = run.call(inspect("python")).await.unwrap();
    expect_test::expect![[r#"
        eval python  what the kernel holds now
        7 variables in the python kernel (modules, what was imported from them, and _names are left out):
        df        pandas.DataFrame         shape (100, 2)
        cities    list                     len 3
        per_city  function                 per_city(frame, column='n')
        Trip      class                    Trip(start, end)
        count     int                      = 3
        name      str                      = 'short'
        ordered   collections.OrderedDict  len 1"#]]
    .assert_eq(&text(&out));
    assert_eq!(out.structured.as_ref().unwrap()["total"], 7);
    // The echo of a later cell (`_`) does not show up.
    run.py("cities").await.unwrap();
    let out = run.call(inspect("python")).await.unwrap();
    assert_eq!(out.structured.as_ref().unwrap()["total"], 7);

    // The list is capped, and says how many more there are.
    run.py("for i in range(150):\n    globals()['v%03d' % i] = i")
        .await
        .unwrap();
    let t = text(&run.call(inspect("python")).await.unwrap());
    expect_test::expect!["… showing 100 of 158 (58 more) — look the others up by name in a cell"]
        .assert_eq(t.lines().last().unwrap());
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_variables_are_listed_without_modules_or_helpers() {
    let Some(run) = Run::fixtures() else { return };
    run.js(
        "const path = require('path');\nconst { join } = require('path');\nconst fs = await import('fs');\n\
         const rows = [1, 2, 3, 4];\nlet seen = new Map([['a', 1]]);\n\
         function total(items, start = 0) { return items.reduce((a, b) => a + b, start); }\n\
         const twice = x => x * 2;\nclass Trip { constructor(start, end) {} }\n\
         var config = { retries: 3, verbose: true };\nglobalThis.label = 'short';\nconst _hidden = 1;\nrows",
    )
    .await
    .unwrap();
    let out = run.call(inspect("javascript")).await.unwrap();
    expect_test::expect![[r#"
        eval javascript  what the kernel holds now
        7 variables in the javascript kernel (modules, what was imported from them, and _names are left out):
        rows    Array     length 4
        seen    Map       size 1
        twice   function  twice(x)
        Trip    class     Trip(start, end)
        total   function  total(items, start = 0)
        config  Object    2 keys
        label   string    = "short""#]]
    .assert_eq(&text(&out));
    // A cell after inspect sees only its own output.
    let out = run.js("console.log('after')").await.unwrap();
    assert_eq!(text(&out).lines().last(), Some("after"));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_with_code_is_refused() {
    let Some(run) = Run::fixtures() else { return };
    let e = run
        .call(json!({"inspect": true, "code": "x = 1", "description": "both at once here"}))
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: argument `inspect`: pass it with `language` and `description` only — it lists what the kernel holds and runs no code"]
        .assert_eq(&err_text(&e));
    let e = run
        .call(json!({"description": "no code at all here"}))
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: argument `code`: must not be empty (or pass `inspect: true` to list the kernel's variables)"]
        .assert_eq(&err_text(&e));
    run.finish().await;
}
