//! `Content-Length` framing: the wire format the Language Server Protocol and
//! the Debug Adapter Protocol share. A frame is a header of `Name: value`
//! lines ended by an empty line, then exactly `Content-Length` bytes of body.
//! Nothing here knows JSON or either protocol; their clients build on it.
//!
//! Invariants of [`read_frame`]:
//! - header names are case-insensitive; headers other than `Content-Length`
//!   (such as `Content-Type`) are read and ignored;
//! - `Content-Length` is required, must be a decimal number, must appear
//!   once, and is at most [`MAX_BODY_BYTES`]: a garbage length never makes us
//!   allocate it;
//! - a malformed header is an error ([`FramingError::Malformed`]) naming what
//!   was wrong, never an empty body: after one the stream is out of step and
//!   the caller must drop it;
//! - a header line is at most [`MAX_HEADER_LINE_BYTES`], so a stream without
//!   newlines cannot grow a line without bound;
//! - empty lines before a header starts are skipped (the stream is still in
//!   step there); the end of the stream there is a clean end (`Ok(None)`),
//!   anywhere later it is an error;
//! - a frame may arrive split over any number of reads, and one read may
//!   hold several frames: each call takes exactly one.
//!
//! [`encode_frame`] and [`write_frame`] write the one header line
//! `Content-Length: N` and the body.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Larger bodies are refused: no server or adapter sends 64 MiB in one
/// message.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Longest header line accepted, its line ending included.
pub const MAX_HEADER_LINE_BYTES: usize = 4096;

/// Why no frame could be read.
#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    /// The bytes are not `Content-Length` framing; the stream is lost.
    #[error("malformed frame header: {0}")]
    Malformed(String),
    /// The stream ended in the middle of a frame: the writer went away
    /// (a process that exits while writing), not a protocol fault.
    #[error("the stream ended inside {0}")]
    Truncated(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Read one frame's body. `Ok(None)` at a clean end of stream (between
/// frames).
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> Result<Option<Vec<u8>>, FramingError> {
    let mut length: Option<usize> = None;
    let mut in_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = (MAX_HEADER_LINE_BYTES + 1) as u64;
        let n = (&mut *r).take(limit).read_until(b'\n', &mut line).await?;
        if n == 0 {
            if in_header {
                return Err(FramingError::Truncated("a header".into()));
            }
            return Ok(None);
        }
        if line.len() > MAX_HEADER_LINE_BYTES {
            return Err(FramingError::Malformed(format!(
                "a header line longer than {MAX_HEADER_LINE_BYTES} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if in_header {
                break;
            }
            continue; // between frames
        }
        if !line.ends_with(b"\n") {
            return Err(FramingError::Truncated("a header".into()));
        }
        in_header = true;
        let Some((name, value)) = text.split_once(':') else {
            return Err(FramingError::Malformed(format!(
                "expected `Name: value`, got {:?}",
                crate::format::cap_chars(text, 80)
            )));
        };
        if !name.trim().eq_ignore_ascii_case("content-length") {
            continue;
        }
        if length.is_some() {
            return Err(FramingError::Malformed(
                "Content-Length appears twice".into(),
            ));
        }
        let v: usize = value.trim().parse().map_err(|_| {
            FramingError::Malformed(format!(
                "Content-Length is not a number: {:?}",
                crate::format::cap_chars(value.trim(), 40)
            ))
        })?;
        if v > MAX_BODY_BYTES {
            return Err(FramingError::Malformed(format!(
                "Content-Length {v} exceeds {MAX_BODY_BYTES}"
            )));
        }
        length = Some(v);
    }
    let Some(length) = length else {
        return Err(FramingError::Malformed(
            "header without Content-Length".into(),
        ));
    };
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            FramingError::Truncated(format!("a body of {length} bytes"))
        } else {
            FramingError::Io(e)
        }
    })?;
    Ok(Some(body))
}

/// One frame: the header and `body`.
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// Write one frame and flush it.
pub async fn write_frame<W: AsyncWrite + Unpin + ?Sized>(
    w: &mut W,
    body: &[u8],
) -> std::io::Result<()> {
    w.write_all(&encode_frame(body)).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, BufReader, ReadBuf};

    /// A reader that hands out its bytes in the given pieces, one per read,
    /// as a pipe does when the writer flushes mid-frame.
    struct PiecewiseReader {
        pieces: std::collections::VecDeque<Vec<u8>>,
    }

    impl AsyncRead for PiecewiseReader {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if let Some(mut piece) = self.pieces.pop_front() {
                let n = piece.len().min(buf.remaining());
                buf.put_slice(&piece[..n]);
                if n < piece.len() {
                    self.pieces.push_front(piece.split_off(n));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    /// Every frame of `bytes` as text, and how reading ended.
    async fn read_all(pieces: &[&[u8]]) -> (Vec<String>, String) {
        let mut r = BufReader::new(PiecewiseReader {
            pieces: pieces.iter().map(|p| p.to_vec()).collect(),
        });
        let mut frames = Vec::new();
        loop {
            match read_frame(&mut r).await {
                Ok(Some(body)) => frames.push(String::from_utf8(body).unwrap()),
                Ok(None) => return (frames, "end".into()),
                Err(e) => return (frames, e.to_string()),
            }
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(std::string::ToString::to_string).collect()
    }

    #[tokio::test]
    async fn two_frames_in_one_read_come_out_one_at_a_time() {
        let got = read_all(&[b"Content-Length: 2\r\n\r\n{}Content-Length: 1\r\n\r\n7"]).await;
        assert_eq!(got, (s(&["{}", "7"]), "end".into()));
    }

    #[tokio::test]
    async fn a_frame_split_across_reads_is_put_back_together() {
        let got = read_all(&[b"Cont", b"ent-Len", b"gth: 5\r", b"\n\r\nhel", b"lo"]).await;
        assert_eq!(got, (s(&["hello"]), "end".into()));
    }

    #[tokio::test]
    async fn names_are_case_insensitive_other_headers_ignored_blank_lines_skipped() {
        let got = read_all(&[
            b"\r\ncontent-length: 2\r\nContent-Type: application/json\r\n\r\n[]",
            b"\r\nCONTENT-LENGTH:3\n\nabc",
        ])
        .await;
        assert_eq!(got, (s(&["[]", "abc"]), "end".into()));
    }

    #[tokio::test]
    async fn a_missing_length_is_an_error_never_an_empty_body() {
        let got = read_all(&[b"Content-Type: x\r\n\r\n{}"]).await;
        assert_eq!(
            got,
            (
                vec![],
                "malformed frame header: header without Content-Length".into()
            )
        );
    }

    #[tokio::test]
    async fn each_malformed_header_says_what_was_wrong() {
        let cases: [(&[u8], &str); 5] = [
            (
                b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
                "Content-Length appears twice",
            ),
            (
                b"Content-Length: lots\r\n\r\n",
                "Content-Length is not a number: \"lots\"",
            ),
            (
                b"Content-Length: -1\r\n\r\n",
                "Content-Length is not a number: \"-1\"",
            ),
            (
                b"Content-Length: 67108865\r\n\r\n",
                "Content-Length 67108865 exceeds 67108864",
            ),
            (
                b"garbage without colon\r\n\r\n{}",
                "expected `Name: value`, got \"garbage without colon\"",
            ),
        ];
        for (bytes, why) in cases {
            let got = read_all(&[bytes]).await;
            assert_eq!(
                got,
                (vec![], format!("malformed frame header: {why}")),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    /// A stream that ends inside a frame is a writer gone (a process that
    /// exited while writing), told apart from a malformed header.
    #[tokio::test]
    async fn a_stream_that_ends_inside_a_frame_is_truncated_not_malformed() {
        let cases: [(&[u8], &str); 3] = [
            (b"Content-Length: 2\r\n", "the stream ended inside a header"),
            (b"Content-Length: 2", "the stream ended inside a header"),
            (
                b"Content-Length: 10\r\n\r\nshort",
                "the stream ended inside a body of 10 bytes",
            ),
        ];
        for (bytes, why) in cases {
            assert_eq!(read_all(&[bytes]).await, (vec![], why.to_string()));
        }
    }

    #[tokio::test]
    async fn the_largest_body_allowed_is_the_cap_and_a_long_line_is_refused() {
        // At the cap the header is accepted (the body then is missing).
        let got = read_all(&[format!("Content-Length: {MAX_BODY_BYTES}\r\n\r\n").as_bytes()]).await;
        assert_eq!(
            got.1,
            format!("the stream ended inside a body of {MAX_BODY_BYTES} bytes")
        );
        let long = vec![b'x'; 10_000];
        let got = read_all(&[&long]).await;
        assert_eq!(
            got,
            (
                vec![],
                "malformed frame header: a header line longer than 4096 bytes".into()
            )
        );
    }

    #[tokio::test]
    async fn written_frames_read_back() {
        let mut buf = Vec::new();
        write_frame(&mut buf, "{\"a\":\"é🙂\"}".as_bytes())
            .await
            .unwrap();
        write_frame(&mut buf, b"").await.unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "Content-Length: 14\r\n\r\n{\"a\":\"é🙂\"}Content-Length: 0\r\n\r\n"
        );
        let got = read_all(&[&buf]).await;
        assert_eq!(got, (s(&["{\"a\":\"é🙂\"}", ""]), "end".into()));
    }
}
