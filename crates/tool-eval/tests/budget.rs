//! What does not fit an answer: images over the budget (1568 px a side,
//! 1 MiB) are downscaled in the host, for both kernels, and the answer says
//! from what size; an image that cannot be downscaled (not a PNG or JPEG, or
//! over what the host decodes) and a display value over the text cap are
//! saved in the run's scratch folder and the answer names the file.

mod common;
use common::*;
use image::{DynamicImage, ImageFormat, RgbImage};

/// The line of `text` that starts with `prefix`.
fn line_starting<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| {
            let tail = &text[text.len().saturating_sub(600)..];
            panic!("no line starting with {prefix:?} in (the end of) the answer:\n{tail}")
        })
}

/// The path an answer's line names after `saved in `.
fn saved_path(line: &str) -> std::path::PathBuf {
    let (_, rest) = line.split_once("saved in ").expect("a saved-in line");
    rest.split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches(')')
        .into()
}

fn png_size(data: &[u8]) -> (u32, u32) {
    (
        u32::from_be_bytes(data[16..20].try_into().unwrap()),
        u32::from_be_bytes(data[20..24].try_into().unwrap()),
    )
}

/// A `w`×`h` picture (a gradient: it compresses, and resizing shows) as
/// `format`, made here so its bytes are the same on every machine.
fn picture(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
    let img = RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, 128])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(img)
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_kernels_images_are_downscaled_in_the_host() {
    let Some(run) = Run::fixtures() else { return };
    let png = picture(4000, 3000, ImageFormat::Png);
    let jpeg = picture(3000, 1000, ImageFormat::Jpeg);
    std::fs::write(run.root().join("big.png"), &png).unwrap();
    std::fs::write(run.root().join("wide.jpg"), &jpeg).unwrap();
    // Kernels started first, so the answers below carry no start-up line.
    run.py("1").await.unwrap();
    run.js("1").await.unwrap();

    let out = run
        .py("class Big:\n    def _repr_png_(self):\n        return open('big.png', 'rb').read()\n\ndisplay(Big())")
        .await
        .unwrap();
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 1);
    assert_eq!(
        (images[0].0, png_size(images[0].1)),
        ("image/png", (1568, 1176))
    );
    expect_test::expect![[r#"
        eval python  a test cell in python here
        (the image above was downscaled to 1568×1176 from 4000×3000, 182,793 bytes: the budget is 1568 px a side and 1,048,576 bytes)"#]].assert_eq(&text(&out));

    let out = run
        .js("const fs = require('fs');\ndisplay(fs.readFileSync('big.png'));\ndisplay(fs.readFileSync('wide.jpg'))")
        .await
        .unwrap();
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 2);
    assert_eq!(
        (images[0].0, png_size(images[0].1)),
        ("image/png", (1568, 1176))
    );
    let small = image::load_from_memory(images[1].1).unwrap();
    assert_eq!(
        (images[1].0, small.width(), small.height()),
        ("image/jpeg", 1568, 523)
    );
    expect_test::expect![[r#"
        eval javascript  a test cell in javascript here
        (the image above was downscaled to 1568×1176 from 4000×3000, 182,793 bytes: the budget is 1568 px a side and 1,048,576 bytes)
        (the image above was downscaled to 1568×523 from 3000×1000, 101,006 bytes: the budget is 1568 px a side and 1,048,576 bytes)"#]].assert_eq(&text(&out));
    assert_eq!(
        (png.len(), jpeg.len()),
        (182_793, 101_006),
        "the byte counts in the snapshots"
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_images_over_the_budget_are_downscaled_and_say_so() {
    let Some(run) = Run::fixtures() else { return };
    // Over the pixel budget.
    let out = run
        .py("from PIL import Image\ndisplay(Image.new('RGB', (4000, 3000), 'red'))")
        .await
        .unwrap();
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 1);
    assert_eq!(png_size(images[0].1), (1568, 1176));
    let t = text(&out);
    let line = line_starting(&t, "(the image above was downscaled");
    assert!(
        line.starts_with("(the image above was downscaled to 1568×1176 from 4000×3000, ")
            && line.ends_with(" bytes: the budget is 1568 px a side and 1,048,576 bytes)"),
        "{line}"
    );
    // Within the pixel budget but over the byte budget: noise does not compress.
    let out = run
        .py("import os\nnoise = Image.frombytes('RGB', (1200, 1200), os.urandom(1200 * 1200 * 3))\ndisplay(noise)")
        .await
        .unwrap();
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 1);
    assert!(images[0].1.len() <= 1 << 20, "{} bytes", images[0].1.len());
    let (w, h) = png_size(images[0].1);
    assert!(w < 1200 && w == h, "{w}×{h}");
    let t = text(&out);
    let line = line_starting(&t, "(the image above was downscaled");
    // The PNG's size in bytes depends on the renderer's build: masked.
    let line = line.replace(&format!("{w}×{h}"), "<w>×<h>");
    let (head, tail) = line.split_once("1200×1200, ").unwrap();
    let (_bytes, tail) = tail.split_once(" bytes: ").unwrap();
    expect_test::expect!["(the image above was downscaled to <w>×<h> from 1200×1200, <n> bytes: the budget is 1568 px a side and 1,048,576 bytes)"]
        .assert_eq(&format!("{head}1200×1200, <n> bytes: {tail}"));
    // A figure drawn smaller than its own size says so too.
    let out = run
        .py("import matplotlib.pyplot as plt\nplt.figure(figsize=(40, 20), dpi=100)\nplt.plot([1, 2])\nplt.show()")
        .await
        .unwrap();
    let t = text(&out);
    let (w, h) = png_size(out.images().next().unwrap().1);
    let line = line_starting(&t, "(the image above was downscaled");
    expect_test::expect!["(the image above was downscaled to <w>×<h> from 4000×2000: the budget is 1568 px a side and 1,048,576 bytes)"]
        .assert_eq(&line.replace(&format!("{w}×{h}"), "<w>×<h>"));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_shown_is_saved_in_the_scratch_folder() {
    let Some(run) = Run::fixtures() else { return };
    // A display value over the text cap (32 KiB): the whole value is saved.
    let out = run.py("display('v' * 100000)").await.unwrap();
    let t = text(&out);
    let line = line_starting(&t, "… 67234 more bytes");
    let path = saved_path(line);
    expect_test::expect!["… 67234 more bytes of this value are not shown; the whole value (100002 bytes) is saved in <scratch>/1-python-cell1-value1.txt"]
        .assert_eq(&line.replace(path.parent().unwrap().to_str().unwrap(), "<scratch>"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("'{}'", "v".repeat(100000))
    );

    // A PNG from JavaScript that declares 100000×100000 pixels in a few
    // hundred bytes (a decompression bomb): never decoded, saved as it is.
    let out = run
        .js(r#"const zlib = require('zlib');
function crc32(buf) { let c = ~0; for (const b of buf) { c ^= b; for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1)); } return ~c >>> 0; }
function chunk(type, data) { const len = Buffer.alloc(4); len.writeUInt32BE(data.length); const td = Buffer.concat([Buffer.from(type), data]); const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td)); return Buffer.concat([len, td, crc]); }
const [w, h] = [100000, 100000];
const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 0;
const rows = Buffer.alloc((w + 1) * 4);
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
display(png);
png.length"#)
        .await
        .unwrap();
    assert_eq!(out.images().count(), 0);
    let t = text(&out);
    let len: usize = t.lines().last().unwrap().parse().unwrap();
    let line = line_starting(&t, "(an image of 100000×100000");
    let path = saved_path(line);
    let scratch = path.parent().unwrap().to_path_buf();
    expect_test::expect!["(an image of 100000×100000, <len> bytes is over the budget (the budget is 1568 px a side and 1,048,576 bytes) and could not be downscaled (it is over what this host decodes: 16,384 px a side and 256 MiB of pixels), so it is saved in <scratch>/2-javascript-cell1-image1.png instead of shown — make it smaller before displaying it)"].assert_eq(
        &line
            .replace(scratch.to_str().unwrap(), "<scratch>")
            .replace(&tool_core::format::thousands(len), "<len>"),
    );
    let saved = std::fs::read(&path).unwrap();
    assert_eq!((saved.len(), png_size(&saved)), (len, (100000, 100000)));
    assert_eq!(run.eval.scratch_dir().as_deref(), Some(scratch.as_path()));
    // The scratch folder goes with the run.
    run.finish().await;
    assert!(!scratch.exists(), "{} outlived the run", scratch.display());
}
