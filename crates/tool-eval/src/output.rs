//! What one cell produced, collected as it arrives and capped: text from
//! stdout and stderr with displays at the places they were made, images, and
//! the echoed last value.
//!
//! The text cap keeps the first and the last part of the output (the start
//! says what ran, the end usually holds the error) and counts what was
//! dropped between them.

use crate::image_fit::{self, Fit};
pub use crate::image_fit::{IMAGE_MAX_BYTES, IMAGE_MAX_SIDE};
use crate::protocol::{OriginalImage, WireImage};
use crate::scratch::Scratch;
use base64::Engine;
use std::collections::{BTreeMap, VecDeque};
use tool_core::Content;

/// Where what does not fit an answer goes: the run's scratch folder, under
/// names that start with `prefix` (the language and cell).
#[derive(Debug, Clone, Copy)]
pub struct Saver<'a> {
    pub scratch: &'a Scratch,
    pub prefix: &'a str,
}

/// One displayed object.
#[derive(Debug, Clone, Default)]
pub struct Display {
    pub text: Option<String>,
    pub images: Vec<WireImage>,
}

#[derive(Debug)]
enum Segment {
    Text(Vec<u8>),
    Display(u64),
}

/// A running cell's output, shared with whoever looks at it before the cell
/// ends (a background job): each look takes what arrived since the last.
pub type SharedOutput = std::sync::Arc<std::sync::Mutex<CellOutput>>;

/// The output of one cell.
#[derive(Debug)]
pub struct CellOutput {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<Segment>,
    head_bytes: usize,
    tail: VecDeque<u8>,
    dropped: u64,
    displays: BTreeMap<u64, Display>,
    echo: Option<Display>,
    max_images: usize,
}

/// The rendered output and how much the caps left out.
#[derive(Debug, Default)]
pub struct Rendered {
    pub content: Vec<Content>,
    pub dropped_bytes: u64,
    pub images: usize,
    pub dropped_images: usize,
}

impl CellOutput {
    pub fn new(max_bytes: usize, max_images: usize) -> Self {
        CellOutput {
            head_cap: max_bytes / 2,
            tail_cap: max_bytes - max_bytes / 2,
            head: Vec::new(),
            head_bytes: 0,
            tail: VecDeque::new(),
            dropped: 0,
            displays: BTreeMap::new(),
            echo: None,
            max_images,
        }
    }

    /// All that arrived so far; this keeps collecting afresh, under the
    /// same caps.
    pub fn take(&mut self) -> CellOutput {
        let fresh = CellOutput::new(self.head_cap + self.tail_cap, self.max_images);
        std::mem::replace(self, fresh)
    }

    /// What a look at a running cell shows: all but the echoed last value,
    /// which is the cell's end and stays for it (a look can come between the
    /// value's arrival and the cell's end).
    pub fn take_for_look(&mut self) -> CellOutput {
        let echo = self.echo.take();
        let taken = self.take();
        self.echo = echo;
        taken
    }

    pub fn push_text(&mut self, mut bytes: &[u8]) {
        if self.tail.is_empty() && self.head_bytes < self.head_cap {
            let room = self.head_cap - self.head_bytes;
            let take = room.min(bytes.len());
            match self.head.last_mut() {
                Some(Segment::Text(t)) => t.extend_from_slice(&bytes[..take]),
                _ => self.head.push(Segment::Text(bytes[..take].to_vec())),
            }
            self.head_bytes += take;
            bytes = &bytes[take..];
        }
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.dropped += (self.tail.len() + bytes.len() - self.tail_cap) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.dropped += overflow as u64;
        self.tail.extend(bytes);
    }

    /// `bytes` of output were left out at this point before they reached us
    /// (the driver caps a flood as it streams): counted as dropped, and what
    /// comes after goes to the tail.
    pub fn skip(&mut self, bytes: u64) {
        self.head_bytes = self.head_cap;
        self.dropped += bytes;
    }

    /// Display `seq` was made at this point of the output.
    pub fn mark_display(&mut self, seq: u64) {
        // Once the head is full, later displays go after the text.
        if self.tail.is_empty() && self.head_bytes < self.head_cap {
            self.head.push(Segment::Display(seq));
        }
    }

    pub fn add_display(&mut self, seq: u64, echo: bool, display: Display) {
        if echo {
            self.echo = Some(display);
        } else {
            self.displays.insert(seq, display);
        }
    }

    /// Whether the cell produced nothing at all.
    pub fn is_empty(&self) -> bool {
        self.head_bytes == 0
            && self.tail.is_empty()
            && self.displays.is_empty()
            && self.echo.is_none()
    }

    /// The output as content for the model, after `preamble` (label lines);
    /// a value or image over its cap is saved through `saver` and named.
    pub fn render(self, preamble: String, saver: Saver<'_>) -> Rendered {
        let mut w = Writer {
            content: Vec::new(),
            text: preamble,
            images: 0,
            dropped_images: 0,
            max_images: self.max_images,
            max_text: self.head_cap + self.tail_cap,
            saver,
            saved: 0,
        };
        let mut displays = self.displays;
        for seg in self.head {
            match seg {
                Segment::Text(t) => w.text(&String::from_utf8_lossy(&t)),
                Segment::Display(seq) => {
                    if let Some(d) = displays.remove(&seq) {
                        w.display(d);
                    }
                }
            }
        }
        if self.dropped > 0 {
            w.line(&format!(
                "… {} bytes of output dropped here (the first {} and last {} bytes are kept) — print less, \
                 or write the output to a file and read parts of it",
                self.dropped, self.head_cap, self.tail_cap
            ));
        }
        if !self.tail.is_empty() {
            let tail: Vec<u8> = self.tail.into_iter().collect();
            w.text(&String::from_utf8_lossy(&tail));
        }
        // Displays whose place in the text was lost to the cap, or that were
        // made without one (a background thread), come after the text.
        for d in displays.into_values() {
            w.display(d);
        }
        if let Some(echo) = self.echo {
            w.display(echo);
        }
        if w.dropped_images > 0 {
            w.line(&format!(
                "… {} more image(s) dropped (at most {} per cell) — close figures you do not need, \
                 or save them to files",
                w.dropped_images, w.max_images
            ));
        }
        let (images, dropped_images) = (w.images, w.dropped_images);
        let mut content = w.finish();
        if content.is_empty() {
            content.push(Content::Text(String::new()));
        }
        Rendered {
            content,
            dropped_bytes: self.dropped,
            images,
            dropped_images,
        }
    }
}

struct Writer<'a> {
    content: Vec<Content>,
    text: String,
    images: usize,
    dropped_images: usize,
    max_images: usize,
    max_text: usize,
    saver: Saver<'a>,
    /// Files saved so far for this answer.
    saved: usize,
}

impl Writer<'_> {
    /// Save what did not fit; the path, or why it could not be saved.
    fn save(&mut self, what: &str, ext: &str, bytes: &[u8]) -> Result<String, String> {
        self.saved += 1;
        let name = format!("{}-{what}{}.{ext}", self.saver.prefix, self.saved);
        self.saver
            .scratch
            .save(&name, bytes)
            .map(|p| p.display().to_string())
    }

    fn text(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// `s` on a line of its own.
    fn line(&mut self, s: &str) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    fn display(&mut self, d: Display) {
        if let Some(t) = d.text {
            let (kept, dropped) = tool_core::format::cap_bytes(&t, self.max_text);
            let mut shown = kept.to_string();
            if dropped > 0 {
                shown.push_str(&match self.save("value", "txt", t.as_bytes()) {
                    Ok(path) => format!(
                        "\n… {dropped} more bytes of this value are not shown; the whole value ({} bytes) is \
                         saved in {path}",
                        t.len()
                    ),
                    Err(why) => format!(
                        "\n… {dropped} more bytes of this value dropped ({why}) — show a slice of it"
                    ),
                });
            }
            self.line(shown.trim_end_matches('\n'));
        }
        for img in d.images {
            if self.images >= self.max_images {
                self.dropped_images += 1;
                continue;
            }
            let Ok(data) = base64::engine::general_purpose::STANDARD.decode(img.data.as_bytes())
            else {
                self.line("(an image could not be decoded)");
                continue;
            };
            self.image(img.mime, data, img.original);
        }
    }

    /// One image, fitted into the budget: shown as it is, downscaled and
    /// said so, or saved and named.
    fn image(&mut self, mime: String, data: Vec<u8>, original: Option<OriginalImage>) {
        let budget = format!(
            "the budget is {IMAGE_MAX_SIDE} px a side and {} bytes",
            tool_core::format::thousands(IMAGE_MAX_BYTES)
        );
        let bytes = data.len();
        let (mime, data, size, from) = match image_fit::fit(&data) {
            // A figure the kernel drew smaller than its own size says so.
            Fit::AsIs { size } => (
                mime,
                data,
                size,
                original.map(|o| (o.width, o.height, o.bytes)),
            ),
            Fit::Downscaled {
                mime,
                data,
                size,
                from,
            } => (
                mime.to_string(),
                data,
                Some(size),
                Some((from.0, from.1, Some(bytes))),
            ),
            Fit::Refused { size, why } => {
                let ext = match mime.as_str() {
                    "image/jpeg" => "jpg",
                    "image/png" => "png",
                    "image/gif" => "gif",
                    "image/webp" => "webp",
                    "image/svg+xml" => "svg",
                    _ => "bin",
                };
                let size = match size {
                    Some((w, h)) => {
                        format!("{w}×{h}, {} bytes", tool_core::format::thousands(bytes))
                    }
                    None => format!("{} bytes", tool_core::format::thousands(bytes)),
                };
                let line = match self.save("image", ext, &data) {
                    Ok(path) => format!(
                        "(an image of {size} is over the budget ({budget}) and could not be downscaled \
                         ({why}), so it is saved in {path} instead of shown — make it smaller before \
                         displaying it)"
                    ),
                    Err(e) => format!(
                        "(an image of {size} is over the budget ({budget}), could not be downscaled ({why}) \
                         and could not be saved: {e})"
                    ),
                };
                self.line(&line);
                return;
            }
        };
        self.flush();
        self.content.push(Content::Image { mime, data });
        self.images += 1;
        if let (Some((w, h)), Some((w0, h0, bytes0))) = (size, from) {
            let bytes0 = bytes0
                .map(|b| format!(", {} bytes", tool_core::format::thousands(b)))
                .unwrap_or_default();
            self.line(&format!(
                "(the image above was downscaled to {w}×{h} from {w0}×{h0}{bytes0}: {budget})"
            ));
        }
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            let t = std::mem::take(&mut self.text);
            self.content
                .push(Content::Text(t.trim_end_matches('\n').to_string()));
        }
    }

    fn finish(mut self) -> Vec<Content> {
        self.flush();
        self.content
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_saver(scratch: &Scratch) -> Saver<'_> {
        Saver {
            scratch,
            prefix: "python-cell1",
        }
    }

    fn text_of(r: &Rendered) -> String {
        r.content
            .iter()
            .map(|c| match c {
                Content::Text(t) => t.clone(),
                Content::Image { .. } => "<img>".into(),
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    #[test]
    fn displays_sit_where_they_were_made() {
        let mut out = CellOutput::new(1024, 8);
        out.push_text(b"before\n");
        out.mark_display(1);
        out.add_display(
            1,
            false,
            Display {
                text: Some("{'a': 1}".into()),
                images: vec![],
            },
        );
        out.push_text(b"after\n");
        out.add_display(
            2,
            true,
            Display {
                text: Some("42".into()),
                images: vec![],
            },
        );
        let r = out.render("label\n".into(), test_saver(&Scratch::new()));
        assert_eq!(text_of(&r), "label\nbefore\n{'a': 1}\nafter\n42");
    }

    #[test]
    fn a_look_before_the_end_leaves_the_last_value_for_the_end() {
        let mut out = CellOutput::new(1024, 8);
        out.push_text(b"5\n");
        out.add_display(
            1,
            true,
            Display {
                text: Some("'counted'".into()),
                images: vec![],
            },
        );
        let look = out.take_for_look();
        let r = look.render(String::new(), test_saver(&Scratch::new()));
        assert_eq!(text_of(&r), "5");
        let end = out.take();
        let r = end.render(String::new(), test_saver(&Scratch::new()));
        assert_eq!(text_of(&r), "'counted'");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_rest() {
        let mut out = CellOutput::new(100, 8);
        for i in 0..1000 {
            out.push_text(format!("{i:04}\n").as_bytes());
        }
        let r = out.render(String::new(), test_saver(&Scratch::new()));
        let t = text_of(&r);
        assert!(t.starts_with("0000\n0001\n"), "{t}");
        assert!(t.ends_with("0999"), "{t}");
        assert_eq!(r.dropped_bytes, 5000 - 100);
        expect_test::expect![[r#"
            0000
            0001
            0002
            0003
            0004
            0005
            0006
            0007
            0008
            0009
            … 4900 bytes of output dropped here (the first 50 and last 50 bytes are kept) — print less, or write the output to a file and read parts of it
            0990
            0991
            0992
            0993
            0994
            0995
            0996
            0997
            0998
            0999"#]].assert_eq(&t);
    }

    #[test]
    fn images_are_capped_per_cell() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG fake");
        let mut out = CellOutput::new(1024, 2);
        for seq in 1..=3 {
            out.mark_display(seq);
            out.add_display(
                seq,
                false,
                Display {
                    text: None,
                    images: vec![WireImage {
                        mime: "image/png".into(),
                        data: png.clone(),
                        original: None,
                    }],
                },
            );
        }
        let r = out.render("x\n".into(), test_saver(&Scratch::new()));
        assert_eq!((r.images, r.dropped_images), (2, 1));
        expect_test::expect!["x|<img>|<img>|… 1 more image(s) dropped (at most 2 per cell) — close figures you do not need, or save them to files"].assert_eq(&text_of(&r));
    }
}
