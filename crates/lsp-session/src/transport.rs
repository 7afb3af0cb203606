//! JSON-RPC messages over a byte stream: [`tool_core::framing`] frames with a
//! body of JSON. Nothing here knows LSP methods; the client builds on it.
//!
//! A broken header leaves the stream unsynchronized, so it is fatal
//! ([`FrameError::Malformed`]); a well-framed body that is not JSON is skipped
//! by the caller, since the next frame still starts where the length said.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncWrite};
use tool_core::framing::FramingError;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The header was not `Content-Length: N` framing; the stream is lost.
    #[error("malformed frame header: {0}")]
    Malformed(String),
    /// Framed correctly, but the body is not JSON; the stream is still usable.
    /// The stream ended inside a frame: the server went away mid-write.
    #[error("the stream ended inside {0}")]
    Truncated(String),
    #[error("frame body is not JSON ({error}): {excerpt}")]
    BadBody { error: String, excerpt: String },
    #[error("reading from the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Read one frame ([`tool_core::framing`] rules) and decode its JSON.
/// `Ok(None)` at a clean end of stream.
pub async fn read_frame<R: AsyncBufRead + Unpin>(r: &mut R) -> Result<Option<Value>, FrameError> {
    let body = match tool_core::framing::read_frame(r).await {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(None),
        Err(FramingError::Malformed(why)) => return Err(FrameError::Malformed(why)),
        Err(FramingError::Truncated(what)) => return Err(FrameError::Truncated(what)),
        Err(FramingError::Io(e)) => return Err(FrameError::Io(e)),
    };
    match serde_json::from_slice(&body) {
        Ok(v) => Ok(Some(v)),
        Err(e) => Err(FrameError::BadBody {
            error: e.to_string(),
            excerpt: tool_core::format::cap_chars(&String::from_utf8_lossy(&body), 120)
                .into_owned(),
        }),
    }
}

/// Write one frame and flush it.
pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, msg: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg)?;
    tool_core::framing::write_frame(w, &body).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Option<Value>, String>> {
        let mut r = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match read_frame(&mut r).await {
                Ok(None) => break,
                Ok(Some(v)) => out.push(Ok(Some(v))),
                Err(e @ FrameError::BadBody { .. }) => out.push(Err(e.to_string())),
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        out
    }

    #[tokio::test]
    async fn frames_round_trip_and_bad_bodies_are_skipped() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &json!({"a": "é🙂"})).await.unwrap();
        buf.extend_from_slice(b"Content-Length: 5\r\nContent-Type: x\r\n\r\nnope!");
        write_frame(&mut buf, &json!(2)).await.unwrap();
        let got = read_all(&buf).await;
        assert_eq!(got[0], Ok(Some(json!({"a": "é🙂"}))));
        expect_test::expect!["frame body is not JSON (expected ident at line 1 column 2): nope!"]
            .assert_eq(got[1].as_ref().unwrap_err());
        assert_eq!(got[2], Ok(Some(json!(2))));
        assert_eq!(got.len(), 3);
    }

    #[tokio::test]
    async fn broken_headers_are_fatal() {
        let got = read_all(b"garbage without colon\r\n\r\n{}").await;
        expect_test::expect![[
            r#"malformed frame header: expected `Name: value`, got "garbage without colon""#
        ]]
        .assert_eq(got[0].as_ref().unwrap_err());
        let got = read_all(b"Content-Length: lots\r\n\r\n").await;
        expect_test::expect![[r#"malformed frame header: Content-Length is not a number: "lots""#]]
            .assert_eq(got[0].as_ref().unwrap_err());
        let got = read_all(b"Content-Length: 99999999999\r\n\r\n").await;
        expect_test::expect!["malformed frame header: Content-Length 99999999999 exceeds 67108864"]
            .assert_eq(got[0].as_ref().unwrap_err());
        let got = read_all(b"X: 1\r\n\r\n").await;
        expect_test::expect!["malformed frame header: header without Content-Length"]
            .assert_eq(got[0].as_ref().unwrap_err());
    }
}
