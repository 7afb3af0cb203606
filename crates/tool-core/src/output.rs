//! What a tool call returns: content the model reads, plus optional
//! structured JSON for programs.

use serde_json::Value;

/// One piece of a result. Images are bytes, never base64 inside text.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Image { mime: String, data: Vec<u8> },
}

/// The successful result of a tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::Text(text.into())],
            structured: None,
        }
    }

    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    pub fn push_text(&mut self, text: impl Into<String>) {
        self.content.push(Content::Text(text.into()));
    }

    pub fn push_image(&mut self, mime: impl Into<String>, data: Vec<u8>) {
        self.content.push(Content::Image {
            mime: mime.into(),
            data,
        });
    }

    /// All text content joined by newlines (images left out).
    pub fn joined_text(&self) -> String {
        let mut out = String::new();
        for c in &self.content {
            if let Content::Text(t) = c {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }

    pub fn images(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.content.iter().filter_map(|c| match c {
            Content::Image { mime, data } => Some((mime.as_str(), data.as_slice())),
            Content::Text(_) => None,
        })
    }
}
