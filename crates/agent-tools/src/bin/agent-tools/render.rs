//! How results are printed: text for a person, one JSON object for programs.
//! Images are written to files and their paths printed.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use tool_core::{Content, ToolError, ToolOutput};

/// Write `text` to stdout. A reader that went away (`| head -1`) is not an
/// error of ours: the rest is dropped quietly, as other Unix tools do.
pub(crate) fn write_stdout(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => eprintln!("agent-tools: cannot write to stdout: {e}"),
    }
}

static IMAGE_COUNTER: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn default_images_dir() -> PathBuf {
    std::env::temp_dir().join(format!("agent-tools-images-{}", std::process::id()))
}

fn save_image(dir: &Path, mime: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let ext = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/svg+xml" => "svg",
        "image/gif" => "gif",
        _ => "bin",
    };
    let n = IMAGE_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    let path = dir.join(format!("image-{n}.{ext}"));
    std::fs::write(&path, data)?;
    Ok(path)
}

/// Text for a terminal: the text content, and a line per saved image.
pub(crate) fn text(out: &ToolOutput, images_dir: &Path) -> String {
    let mut s = String::new();
    for c in &out.content {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        match c {
            Content::Text(t) => s.push_str(t),
            Content::Image { mime, data } => match save_image(images_dir, mime, data) {
                Ok(p) => s.push_str(&format!(
                    "[image {mime}, {} bytes: {}]",
                    data.len(),
                    p.display()
                )),
                Err(e) => s.push_str(&format!(
                    "[image {mime}, {} bytes: not saved: {e}]",
                    data.len()
                )),
            },
        }
    }
    s
}

/// The `--json` and batch shape.
pub(crate) fn json_result(result: &Result<ToolOutput, ToolError>, images_dir: &Path) -> Value {
    match result {
        Ok(out) => {
            let content: Vec<Value> = out
                .content
                .iter()
                .map(|c| match c {
                    Content::Text(t) => json!({"type": "text", "text": t}),
                    Content::Image { mime, data } => {
                        let path = save_image(images_dir, mime, data)
                            .map(|p| p.display().to_string())
                            .unwrap_or_default();
                        json!({"type": "image", "mime": mime, "bytes": data.len(), "path": path})
                    }
                })
                .collect();
            json!({"ok": true, "content": content, "structured": out.structured})
        }
        Err(e) => json!({"ok": false, "error": {"kind": e.kind(), "message": e.to_string()}}),
    }
}
