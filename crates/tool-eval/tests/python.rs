//! The Python kernel on the fixture venv's real python (pandas, matplotlib).

mod common;
use common::*;
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_echo_display_tables_figures_and_errors() {
    let Some(run) = Run::fixtures() else { return };
    state_echo_display_tables_and_figures(&run).await;
    errors_await_and_captured_output(&run).await;
    run.finish().await;
}

/// The first cells of a kernel: state kept, the last expression echoed,
/// display, rich reprs, tables and figures.
async fn state_echo_display_tables_and_figures(run: &Run) {
    // State persists; the last expression is echoed.
    let out = run.py("x = 20\ny = x + 1").await.unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        (started a python kernel: Python 3.x from FIXTURES/venv/bin/python (config))
        (no output)"#]]
    .assert_eq(&masked(&t, run.root()));
    let pid = kernel_pid(&out);
    let out = run.py("x * 2 + y").await.unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        61"#]]
    .assert_eq(&masked(&t, run.root()));
    assert_eq!(kernel_pid(&out), pid, "same kernel");
    // `;` and None hide the echo.
    assert!(text(&run.py("x;").await.unwrap()).ends_with("(no output)"));
    assert!(text(&run.py("None").await.unwrap()).ends_with("(no output)"));

    // display() sits where it was called, between prints.
    let out = run
        .py("print('before')\ndisplay({'k': [1, 2]})\nprint('after')\n'last'")
        .await
        .unwrap();
    let t = text(&out);
    assert!(t.ends_with("before\n{'k': [1, 2]}\nafter\n'last'"), "{t}");

    // Rich reprs: markdown, html turned into text.
    let out = run
        .py("class M:\n    def _repr_markdown_(self): return '**bold** text'\nclass H:\n    def _repr_html_(self): return '<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>'\ndisplay(M())\nH()")
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        **bold** text
        a | b
        1 | 2"#]]
    .assert_eq(&masked(&t, run.root()));

    // A DataFrame is a readable table with its shape, not HTML.
    let out = run
        .py("import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'] * 50, 'n': range(100)})\ndf")
        .await
        .unwrap();
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        DataFrame: 100 rows × 2 columns
            city   n
        0   Oslo   0
        1   Lima   1
        2   Oslo   2
        3   Lima   3
        4   Oslo   4
        5   Lima   5
        6   Oslo   6
        7   Lima   7
        8   Oslo   8
        9   Lima   9
        ..   ...  ..
        90  Oslo  90
        91  Lima  91
        92  Oslo  92
        93  Lima  93
        94  Oslo  94
        95  Lima  95
        96  Oslo  96
        97  Lima  97
        98  Oslo  98
        99  Lima  99
        (first 10 and last 10 of 100 rows shown — use .head(), .iloc[...] or .to_string() for more)"#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("df.groupby('city')['n'].sum()").await.unwrap());
    expect![[r#"
        eval python  a test cell in python here
        Series 'n': 2 rows, dtype int64
        city
        Lima    2500
        Oslo    2450"#]]
    .assert_eq(&masked(&t, run.root()));

    // matplotlib: plt.show() and figures left open come back as PNGs, then close.
    let out = run
        .py("import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\nfig = plt.figure(figsize=(40, 20))\nplt.bar(['a', 'b'], [3, 5])\nprint(matplotlib.get_backend())")
        .await
        .unwrap();
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 2, "{out:?}");
    for (mime, data) in &images {
        assert_eq!(*mime, "image/png");
        assert_eq!(&data[..8], b"\x89PNG\r\n\x1a\n");
        let (w, h) = png_size(data);
        assert!(w > 100 && h > 100, "{w}x{h}");
        assert!(
            w <= 1568 && h <= 1568,
            "the 40x20 inch figure is downscaled: {w}x{h}"
        );
    }
    let t = text(&out);
    expect![[r#"
        eval python  a test cell in python here
        Agg
        (the image above was downscaled to 1229×620 from 4000×2000: the budget is 1568 px a side and 1,048,576 bytes)"#]].assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("len(plt.get_fignums())").await.unwrap());
    assert!(t.ends_with("\n0"), "figures are closed after the cell: {t}");
    let out = run
        .py("from PIL import Image\nImage.new('RGB', (3000, 1000), 'red')")
        .await
        .unwrap();
    let (_, data) = out.images().next().expect("a PIL image is shown");
    assert_eq!(png_size(data), (1568, 523), "large images are downscaled");
}

/// The same kernel's later cells: errors, top-level await, output written
/// outside Python's streams, caps.
async fn errors_await_and_captured_output(run: &Run) {
    // Exceptions: an error result with the traceback trimmed to the user's frames.
    run.py("def inner(v):\n    return 1 / v\n").await.unwrap();
    let e = run.py("print('partial')\ninner(0)").await.unwrap_err();
    let t = err_text(&e);
    // The driver's own frames are trimmed; the source line is shown.
    expect![[r#"
        failed: eval python  a test cell in python here
        partial
        Traceback (most recent call last):
          File "<cell 13>", line 2, in <module>
            inner(0)
          File "<cell 12>", line 2, in inner
            return 1 / v
                   ~~^~~
        ZeroDivisionError: division by zero
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    // Variables survive an exception.
    assert!(text(&run.py("x").await.unwrap()).ends_with("\n20"));
    let t = err_text(&run.py("def f(:\n  pass").await.unwrap_err());
    expect![[r#"
        failed: eval python  a test cell in python here
          File "<cell 15>", line 1
            def f(:
                  ^
        SyntaxError: invalid syntax
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));

    // Top-level await.
    let t = text(
        &run.py("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("'awaited'"), "{t}");

    // A C-level write to fd 1 and a subprocess's output are captured.
    let t = text(
        &run.py("import ctypes, os, subprocess\nlibc = ctypes.CDLL(None)\nlibc.write(1, b'from C\\n', 7)\nos.write(2, b'raw fd 2\\n')\nsubprocess.run(['echo', 'from a child']);")
            .await
            .unwrap(),
    );
    // Three writers on two pipes: the order between them is not fixed.
    let mut lines: Vec<&str> = t.lines().collect();
    lines.sort_unstable();
    expect![[r#"
        [
            "eval python  a test cell in python here",
            "from C",
            "from a child",
            "raw fd 2",
        ]
    "#]]
    .assert_debug_eq(&lines);

    // Output is capped with a note of what was dropped.
    let out = run
        .py("for i in range(20000):\n    print('line', i)")
        .await
        .unwrap();
    let t = text(&out);
    let kept: Vec<&str> = t.lines().collect();
    // The start and the end are kept, with a note of what was dropped.
    let dropped_note: Vec<&&str> = kept.iter().filter(|l| l.contains("dropped")).collect();
    expect![[r#"
        (
            [
                "eval python  a test cell in python here",
                "line 0",
                "line 1",
            ],
            [
                "… 176122 bytes of output dropped here (the first 16384 and last 16384 bytes are kept) — print less, or write the output to a file and read parts of it",
            ],
            [
                "line 19998",
                "line 19999",
            ],
        )
    "#]].assert_debug_eq(&(
        kept[..3].to_vec(),
        dropped_note,
        kept[kept.len() - 2..].to_vec(),
    ));
    assert!(t.len() < 40_000, "{}", t.len());
    let dropped = out.structured.as_ref().unwrap()["dropped_output_bytes"]
        .as_u64()
        .unwrap();
    assert!(dropped > 150_000, "{dropped}");

    // description is required and must not be empty.
    let e = run
        .call(json!({"code": "1", "description": "  "}))
        .await
        .unwrap_err();
    expect!["bad arguments: argument `description`: must not be empty; say in 5–10 words what the cell does"].assert_eq(&err_text(&e));
    let e = run.call(json!({"code": "1"})).await.unwrap_err();
    expect!["bad arguments: missing field `description`; check the tool's input schema"]
        .assert_eq(&err_text(&e));
    let e = run
        .call(json!({"code": "1", "description": "d d d d d", "bogus": 1}))
        .await
        .unwrap_err();
    expect!["bad arguments: argument `bogus`: unknown field `bogus`, expected one of `code`, `description`, `language`, `reset`, `timeout_seconds`, `inspect`, `background`, `job`, `cancel`; check the tool's input schema"].assert_eq(&err_text(&e));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipython_idioms_are_rewritten() {
    let Some(run) = Run::fixtures() else { return };
    let root = run.root().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();

    let t = text(&run.py("%pwd").await.unwrap());
    assert!(t.ends_with(&format!("'{}'", root.display())), "{t}");
    let t = text(&run.py("%cd sub").await.unwrap());
    assert!(
        t.ends_with(&format!("{}", root.join("sub").display())),
        "{t}"
    );
    let t = text(&run.py("import os\nos.getcwd()").await.unwrap());
    assert!(
        t.ends_with(&format!("'{}'", root.join("sub").display())),
        "{t}"
    );
    run.py("%cd -").await.unwrap();

    let t = text(
        &run.py("name = 'world'\n!echo hello {name} $name")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("hello world world"), "{t}");
    let t = text(
        &run.py("files = !printf 'a\\nb\\n'\nfiles, files.s")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("(['a', 'b'], 'a b')"), "{t}");
    let t = text(
        &run.py("for i in range(2):\n    !echo loop {i}\n")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        loop 0
        loop 1"#]]
    .assert_eq(&masked(&t, run.root()));

    let t = text(
        &run.py("%%bash\necho from bash $((40 + 2))\necho to stderr >&2")
            .await
            .unwrap(),
    );
    // stdout and stderr are two pipes: the order between them is not fixed.
    let mut lines: Vec<&str> = t.lines().collect();
    lines.sort_unstable();
    expect![[r#"
        [
            "eval python  a test cell in python here",
            "from bash 42",
            "to stderr",
        ]
    "#]]
    .assert_debug_eq(&lines);

    let t = text(&run.py("%env GREETING=hi").await.unwrap());
    expect![[r#"
        eval python  a test cell in python here
        env: GREETING=hi"#]]
    .assert_eq(&masked(&t, run.root()));
    assert!(text(&run.py("%env GREETING").await.unwrap()).ends_with("'hi'"));
    assert!(text(&run.py("!echo $GREETING").await.unwrap()).ends_with("hi"));

    let t = text(
        &run.py("%time total = sum(range(1000))\ntotal")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        CPU times: total: T
        Wall time: T
        499500"#]]
    .assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("%timeit -n 10 -r 2 sum(range(10))").await.unwrap());
    expect![[r#"
        eval python  a test cell in python here
        T ± T per loop (mean ± std. dev. of 2 runs, 10 loops each)"#]]
    .assert_eq(&masked(&t, run.root()));
    let t = text(
        &run.py("%%timeit -n 5 -r 3\nsorted(range(50))")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        T ± T per loop (mean ± std. dev. of 3 runs, 5 loops each)"#]]
    .assert_eq(&masked(&t, run.root()));

    let t = text(
        &run.py("%%capture cap\nprint('hidden')\nimport sys; print('err', file=sys.stderr)")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        (no output)"#]]
    .assert_eq(&masked(&t, run.root()));
    let t = text(&run.py("cap.stdout, cap.stderr").await.unwrap());
    assert!(t.ends_with("('hidden\\n', 'err\\n')"), "{t}");

    let t = text(
        &run.py("%%writefile notes.txt\nfirst line\nsecond")
            .await
            .unwrap(),
    );
    expect![[r#"
        eval python  a test cell in python here
        Writing notes.txt"#]]
    .assert_eq(&masked(&t, run.root()));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "first line\nsecond\n"
    );

    // %matplotlib inline is accepted (figures are inline anyway).
    run.py("%matplotlib inline").await.unwrap();

    // Unknown magics name the supported ones; a `%` inside a string is left alone.
    let e = run.py("%load_ext autoreload").await.unwrap_err();
    let t = err_text(&e);
    expect![[r#"
        failed: eval python  a test cell in python here
        MagicError: %load_ext is not supported here; supported: line magics %pip, %cd, %pwd, %env, %time, %timeit, %matplotlib; cell magics (first line) %%bash, %%sh, %%timeit, %%capture, %%writefile; shell lines `!cmd` and `x = !cmd`. Write plain Python for anything else.
        The cell raised an error; what it assigned before the error is kept. Fix the cell and run it again."#]].assert_eq(&masked(&t, run.root()));
    let t = text(
        &run.py("s = '''\n%not a magic\n!nor this\n'''\nlen(s.splitlines())")
            .await
            .unwrap(),
    );
    assert!(t.ends_with('3'), "{t}");

    run.finish().await;
}

fn png_size(data: &[u8]) -> (u32, u32) {
    (
        u32::from_be_bytes(data[16..20].try_into().unwrap()),
        u32::from_be_bytes(data[20..24].try_into().unwrap()),
    )
}
