//! How a tool's outcome becomes an MCP `tools/call` answer.
//!
//! Text is text content and images are image content items, never only
//! inside `structuredContent` (several clients flatten or drop it). A tool
//! error is a result with `isError: true` and the message, so the model reads
//! it and can act; only an unknown tool is a protocol error, as the MCP spec
//! asks.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::ErrorData;
use serde_json::json;
use tool_core::{Content, ToolError, ToolOutput};

/// The content blocks of an output, in order.
pub fn content_blocks(out: &ToolOutput) -> Vec<ContentBlock> {
    out.content
        .iter()
        .map(|c| match c {
            Content::Text(t) => ContentBlock::text(t.clone()),
            Content::Image { mime, data } => ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(data),
                mime.clone(),
            ),
        })
        .collect()
}

/// The answer to a `tools/call`.
pub fn call_result(result: Result<ToolOutput, ToolError>) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(out) => {
            let mut r = CallToolResult::success(content_blocks(&out));
            if r.content.is_empty() {
                // An empty content list reads as "nothing happened" to most
                // clients; say that it succeeded.
                r.content.push(ContentBlock::text("(done; no output)"));
            }
            r.structured_content = out.structured;
            Ok(r)
        }
        Err(e @ ToolError::UnknownTool { .. }) => {
            Err(ErrorData::invalid_params(e.to_string(), None))
        }
        Err(e) => {
            let mut r = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            r.structured_content =
                Some(json!({"error": {"kind": e.kind(), "message": e.to_string()}}));
            Ok(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_errors_and_images_map_to_mcp() {
        let mut out = ToolOutput::text("hello");
        out.push_image("image/png", vec![1, 2, 3]);
        let r = serde_json::to_value(call_result(Ok(out)).unwrap()).unwrap();
        assert_eq!(r["content"][0], json!({"type": "text", "text": "hello"}));
        assert_eq!(
            r["content"][1],
            json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
        );
        assert_eq!(r["isError"], false);

        let r = serde_json::to_value(
            call_result(Err(ToolError::timed_out("the cell ran out of time"))).unwrap(),
        )
        .unwrap();
        assert_eq!(r["isError"], true);
        assert_eq!(
            r["content"][0]["text"],
            "timed out: the cell ran out of time"
        );
        assert_eq!(r["structuredContent"]["error"]["kind"], "timed_out");

        let e = call_result(Err(ToolError::UnknownTool {
            name: "nope".into(),
            available: "read".into(),
        }))
        .unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        expect_test::expect![
            "unknown tool `nope`: no tool of that name is available here; available: read"
        ]
        .assert_eq(&e.message);
    }
}
