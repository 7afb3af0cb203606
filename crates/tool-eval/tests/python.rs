//! The Python kernel on the fixture venv's real python (pandas, matplotlib).

mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_echo_display_tables_figures_and_errors() {
    let Some(run) = Run::fixtures() else { return };

    // State persists; the last expression is echoed.
    let out = run.py("x = 20\ny = x + 1").await.unwrap();
    let t = text(&out);
    assert!(
        t.starts_with("eval python  a test cell in python here\n"),
        "{t}"
    );
    assert!(t.contains("(started a python kernel: Python 3."), "{t}");
    assert!(t.ends_with("(no output)"), "{t}");
    let pid = kernel_pid(&out);
    let out = run.py("x * 2 + y").await.unwrap();
    assert!(text(&out).ends_with("\n61"), "{}", text(&out));
    assert_eq!(kernel_pid(&out), pid, "same kernel");
    assert!(!text(&out).contains("started a python kernel"));
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
    assert!(t.contains("**bold** text"), "{t}");
    assert!(t.contains("a | b\n1 | 2"), "{t}");
    assert!(!t.contains("<td>"), "{t}");

    // A DataFrame is a readable table with its shape, not HTML.
    let out = run
        .py("import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'] * 50, 'n': range(100)})\ndf")
        .await
        .unwrap();
    let t = text(&out);
    assert!(t.contains("DataFrame: 100 rows × 2 columns"), "{t}");
    assert!(t.contains("city   n") || t.contains("city  n"), "{t}");
    assert!(t.contains("Oslo"), "{t}");
    assert!(t.contains("first 10 and last 10 of 100 rows shown"), "{t}");
    assert!(!t.contains("<table"), "{t}");
    let t = text(&run.py("df.groupby('city')['n'].sum()").await.unwrap());
    assert!(t.contains("Series 'n': 2 rows, dtype int64"), "{t}");
    assert!(t.contains("Lima    2500") || t.contains("Lima"), "{t}");

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
    assert!(text(&out).to_lowercase().contains("agg"), "{}", text(&out));
    let t = text(&run.py("len(plt.get_fignums())").await.unwrap());
    assert!(t.ends_with("\n0"), "figures are closed after the cell: {t}");
    let out = run
        .py("from PIL import Image\nImage.new('RGB', (3000, 1000), 'red')")
        .await
        .unwrap();
    let (_, data) = out.images().next().expect("a PIL image is shown");
    assert_eq!(png_size(data), (1568, 523), "large images are downscaled");

    // Exceptions: an error result with the traceback trimmed to the user's frames.
    run.py("def inner(v):\n    return 1 / v\n").await.unwrap();
    let e = run.py("print('partial')\ninner(0)").await.unwrap_err();
    let t = err_text(&e);
    assert!(t.starts_with("failed: eval python  a test cell"), "{t}");
    assert!(t.contains("partial"), "{t}");
    assert!(t.contains("Traceback (most recent call last):"), "{t}");
    assert!(t.contains("File \"<cell"), "{t}");
    assert!(t.contains("return 1 / v"), "the source line is shown: {t}");
    assert!(t.contains("ZeroDivisionError: division by zero"), "{t}");
    assert!(
        !t.contains("run_cell") && !t.contains("run_compiled"),
        "driver frames are trimmed: {t}"
    );
    assert!(
        t.contains("what it assigned before the error is kept"),
        "{t}"
    );
    // Variables survive an exception.
    assert!(text(&run.py("x").await.unwrap()).ends_with("\n20"));
    let t = err_text(&run.py("def f(:\n  pass").await.unwrap_err());
    assert!(t.contains("SyntaxError"), "{t}");

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
    assert!(t.contains("from C"), "{t}");
    assert!(t.contains("raw fd 2"), "{t}");
    assert!(t.contains("from a child"), "{t}");

    // Output is capped with a note of what was dropped.
    let out = run
        .py("for i in range(20000):\n    print('line', i)")
        .await
        .unwrap();
    let t = text(&out);
    assert!(t.contains("line 0\n"), "{}", &t[..200]);
    assert!(t.contains("line 19999"), "the end is kept");
    assert!(t.contains("bytes of output dropped here"), "capped");
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
    assert!(err_text(&e).contains("description"), "{e}");
    let e = run.call(json!({"code": "1"})).await.unwrap_err();
    assert!(err_text(&e).contains("missing field `description`"), "{e}");
    let e = run
        .call(json!({"code": "1", "description": "d d d d d", "bogus": 1}))
        .await
        .unwrap_err();
    assert!(err_text(&e).contains("unknown field `bogus`"), "{e}");

    run.finish().await;
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
    assert!(t.contains("loop 0\nloop 1"), "{t}");

    let t = text(
        &run.py("%%bash\necho from bash $((40 + 2))\necho to stderr >&2")
            .await
            .unwrap(),
    );
    assert!(t.contains("from bash 42"), "{t}");
    assert!(t.contains("to stderr"), "{t}");

    let t = text(&run.py("%env GREETING=hi").await.unwrap());
    assert!(t.contains("env: GREETING=hi"), "{t}");
    assert!(text(&run.py("%env GREETING").await.unwrap()).ends_with("'hi'"));
    assert!(text(&run.py("!echo $GREETING").await.unwrap()).ends_with("hi"));

    let t = text(
        &run.py("%time total = sum(range(1000))\ntotal")
            .await
            .unwrap(),
    );
    assert!(t.contains("Wall time:"), "{t}");
    assert!(t.ends_with("499500"), "{t}");
    let t = text(&run.py("%timeit -n 10 -r 2 sum(range(10))").await.unwrap());
    assert!(
        t.contains("per loop (mean ± std. dev. of 2 runs, 10 loops each)"),
        "{t}"
    );
    let t = text(
        &run.py("%%timeit -n 5 -r 3\nsorted(range(50))")
            .await
            .unwrap(),
    );
    assert!(t.contains("3 runs, 5 loops each"), "{t}");

    let t = text(
        &run.py("%%capture cap\nprint('hidden')\nimport sys; print('err', file=sys.stderr)")
            .await
            .unwrap(),
    );
    assert!(!t.contains("hidden"), "{t}");
    let t = text(&run.py("cap.stdout, cap.stderr").await.unwrap());
    assert!(t.ends_with("('hidden\\n', 'err\\n')"), "{t}");

    let t = text(
        &run.py("%%writefile notes.txt\nfirst line\nsecond")
            .await
            .unwrap(),
    );
    assert!(t.contains("Writing notes.txt"), "{t}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "first line\nsecond\n"
    );

    // %matplotlib inline is accepted (figures are inline anyway).
    run.py("%matplotlib inline").await.unwrap();

    // Unknown magics name the supported ones; a `%` inside a string is left alone.
    let e = run.py("%load_ext autoreload").await.unwrap_err();
    let t = err_text(&e);
    assert!(t.contains("%load_ext is not supported here"), "{t}");
    assert!(
        t.contains("%pip") && t.contains("%%bash") && t.contains("!cmd"),
        "{t}"
    );
    let t = text(
        &run.py("s = '''\n%not a magic\n!nor this\n'''\nlen(s.splitlines())")
            .await
            .unwrap(),
    );
    assert!(t.ends_with("3"), "{t}");

    run.finish().await;
}

fn png_size(data: &[u8]) -> (u32, u32) {
    (
        u32::from_be_bytes(data[16..20].try_into().unwrap()),
        u32::from_be_bytes(data[20..24].try_into().unwrap()),
    )
}
