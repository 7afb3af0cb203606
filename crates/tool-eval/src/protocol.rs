//! The protocol between the host and a kernel driver, and the markers the
//! driver writes into the cell's own output.
//!
//! Requests and replies are newline-delimited JSON on dedicated pipes: the
//! driver reads fd 3 and writes fd 4; fd 5 carries interrupts (one byte each)
//! to the JavaScript driver. The cell's stdout and stderr stay on fd 1 and 2,
//! where the driver writes only markers: where a cell's output begins and
//! ends (the frame: text between `begin;N` and `end;N` is cell N's, and the
//! host has all of it once it read `end;N` on both streams), and where a
//! display sits in the output.

use serde::Deserialize;
use serde_json::Value;

/// The descriptor the driver reads requests from.
pub const REQUESTS_FD: i32 = 3;
/// The descriptor the driver writes replies to.
pub const REPLIES_FD: i32 = 4;
/// The descriptor the JavaScript driver reads interrupts from.
pub const INTERRUPTS_FD: i32 = 5;

/// A message from the driver.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DriverMessage {
    Ready {
        language: String,
        version: String,
        executable: String,
        pid: u32,
    },
    Display {
        cell: u64,
        seq: u64,
        #[serde(default)]
        echo: bool,
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        images: Vec<WireImage>,
    },
    ToolCall {
        #[serde(default)]
        cell: u64,
        id: u64,
        name: String,
        #[serde(default)]
        args: Value,
    },
    Done {
        cell: u64,
        status: CellStatus,
        #[serde(default)]
        error: Option<String>,
    },
    /// The answer to an `inspect` request: the user's variables.
    Inspect {
        #[serde(default)]
        variables: Vec<Variable>,
        /// How many there are, listed or not.
        #[serde(default)]
        total: usize,
        #[serde(default)]
        error: Option<String>,
    },
}

/// One variable a kernel holds, as its driver describes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct Variable {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its shape, length, signature or short value, when it has one.
    #[serde(default)]
    pub detail: Option<String>,
}

/// An image as it travels on the protocol pipe (base64 there, bytes here).
#[derive(Debug, Clone, Deserialize)]
pub struct WireImage {
    pub mime: String,
    pub data: String,
    /// Set when the driver drew a figure smaller than its own size, to fit
    /// the budget (the host fits every other image itself).
    #[serde(default)]
    pub original: Option<OriginalImage>,
}

/// The size a figure would have had at its own dpi.
#[derive(Debug, Clone, Deserialize)]
pub struct OriginalImage {
    pub width: u32,
    pub height: u32,
    /// Its bytes, when it was an image (a figure has no bytes before it is
    /// drawn).
    #[serde(default)]
    pub bytes: Option<usize>,
}

/// How a cell ended, as the driver saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Ok,
    Error,
    Interrupted,
}

/// A piece of a kernel's stdout or stderr, with the markers parsed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputPiece {
    Text(Vec<u8>),
    /// Display `seq` of `cell` sits here.
    Display {
        cell: u64,
        seq: u64,
    },
    /// Everything `cell` writes to this stream comes after this point.
    Begin {
        cell: u64,
    },
    /// The driver left out `bytes` of `cell`'s output here (it caps a flood
    /// before it reaches the pipe; the kept tail follows at the cell's end).
    Skipped {
        cell: u64,
        bytes: u64,
    },
    /// Everything `cell` wrote to this stream is before this point.
    End {
        cell: u64,
    },
}

const MARK_START: &[u8] = b"\x1b]agent-eval;";
const MARK_END: u8 = 0x07;
/// A marker longer than this is not one of ours.
const MARK_MAX: usize = 64;

/// Splits a stream into text and markers, across read boundaries.
#[derive(Debug, Default)]
pub struct MarkerScanner {
    carry: Vec<u8>,
}

impl MarkerScanner {
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<OutputPiece>) {
        let joined;
        let buf: &[u8] = if self.carry.is_empty() {
            chunk
        } else {
            let mut b = std::mem::take(&mut self.carry);
            b.extend_from_slice(chunk);
            joined = b;
            &joined
        };
        let mut text_start = 0;
        let mut i = 0;
        while i < buf.len() {
            if let Some(k) = memchr::memchr(MARK_START[0], &buf[i..]) {
                i += k;
            } else {
                i = buf.len();
                break;
            }
            let rest = &buf[i..];
            let n = rest.len().min(MARK_START.len());
            if rest[..n] != MARK_START[..n] {
                i += 1;
                continue;
            }
            if n < MARK_START.len() {
                break; // a possible marker cut by the read: keep it for later
            }
            match rest.iter().take(MARK_MAX).position(|&b| b == MARK_END) {
                Some(end) => {
                    let body = &rest[MARK_START.len()..end];
                    match parse_marker(body) {
                        Some(piece) => {
                            if text_start < i {
                                out.push(OutputPiece::Text(buf[text_start..i].to_vec()));
                            }
                            out.push(piece);
                            i += end + 1;
                            text_start = i;
                        }
                        None => i += 1,
                    }
                }
                None if rest.len() < MARK_MAX => break,
                None => i += 1,
            }
        }
        if text_start < i {
            out.push(OutputPiece::Text(buf[text_start..i].to_vec()));
        }
        self.carry = buf[i..].to_vec();
    }

    /// What is left at the end of the stream.
    pub fn finish(&mut self, out: &mut Vec<OutputPiece>) {
        if !self.carry.is_empty() {
            out.push(OutputPiece::Text(std::mem::take(&mut self.carry)));
        }
    }
}

fn parse_marker(body: &[u8]) -> Option<OutputPiece> {
    let body = std::str::from_utf8(body).ok()?;
    let mut parts = body.split(';');
    match (parts.next()?, parts.next(), parts.next(), parts.next()) {
        ("begin", Some(cell), None, None) => Some(OutputPiece::Begin {
            cell: cell.parse().ok()?,
        }),
        ("end", Some(cell), None, None) => Some(OutputPiece::End {
            cell: cell.parse().ok()?,
        }),
        ("skipped", Some(cell), Some(bytes), None) => Some(OutputPiece::Skipped {
            cell: cell.parse().ok()?,
            bytes: bytes.parse().ok()?,
        }),
        ("display", Some(cell), Some(seq), None) => Some(OutputPiece::Display {
            cell: cell.parse().ok()?,
            seq: seq.parse().ok()?,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(chunks: &[&[u8]]) -> Vec<OutputPiece> {
        let mut s = MarkerScanner::default();
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        s.finish(&mut out);
        // Merge adjacent text so the split points do not matter.
        let mut merged: Vec<OutputPiece> = Vec::new();
        for p in out {
            match (merged.last_mut(), p) {
                (Some(OutputPiece::Text(a)), OutputPiece::Text(b)) => a.extend(b),
                (_, p) => merged.push(p),
            }
        }
        merged
    }

    #[test]
    fn markers_are_found_across_read_boundaries() {
        let stream = b"\x1b]agent-eval;begin;3\x07hi\n\x1b]agent-eval;display;3;1\x07after\n\x1b]agent-eval;skipped;3;1048576\x07\x1b]agent-eval;end;3\x07";
        let expected = vec![
            OutputPiece::Begin { cell: 3 },
            OutputPiece::Text(b"hi\n".to_vec()),
            OutputPiece::Display { cell: 3, seq: 1 },
            OutputPiece::Text(b"after\n".to_vec()),
            OutputPiece::Skipped {
                cell: 3,
                bytes: 1 << 20,
            },
            OutputPiece::End { cell: 3 },
        ];
        assert_eq!(scan(&[stream]), expected);
        for cut in 1..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(scan(&[a, b]), expected, "cut at {cut}");
        }
    }

    #[test]
    fn escape_sequences_that_are_not_markers_stay_text() {
        let stream = b"\x1b[31mred\x1b[0m \x1b]agent-eval;bogus\x07 \x1b]0;title\x07";
        assert_eq!(scan(&[stream]), vec![OutputPiece::Text(stream.to_vec())]);
    }

    #[test]
    fn driver_messages_parse() {
        let m: DriverMessage = serde_json::from_str(
            r#"{"type":"done","cell":2,"status":"interrupted","error":"KeyboardInterrupt"}"#,
        )
        .unwrap();
        assert!(matches!(
            m,
            DriverMessage::Done {
                cell: 2,
                status: CellStatus::Interrupted,
                ..
            }
        ));
        let m: DriverMessage = serde_json::from_str(
            r#"{"type":"tool_call","cell":1,"id":7,"name":"read","args":{"path":"a"}}"#,
        )
        .unwrap();
        assert!(matches!(m, DriverMessage::ToolCall { id: 7, .. }));
    }
}
