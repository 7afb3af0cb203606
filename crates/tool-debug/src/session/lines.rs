//! The debuggee's output kept as whole lines. Adapters hand output over in
//! pieces (debugpy sends each `write`, a captured pipe each read), and a
//! logpoint's message can arrive between two pieces of one line of the
//! program's: written as they came, `total` + `i=0\n` + ` 45\n` would read
//! `totali=0` and ` 45`. So each stream (stdout, stderr, logpoint
//! messages, a captured pipe) keeps its unfinished line apart, and a line
//! goes into the ring only when it is whole.
//!
//! Invariants: a line in the ring is never split by another stream's
//! text; lines enter the ring in the order they were completed; an
//! unfinished line is shown by readers (after the ring's text, without
//! moving any cursor) and committed, with a newline, when the session
//! ends ([`LineOutput::flush`]); no stream's unfinished line grows past
//! the ring's capacity.

use std::sync::{Arc, Mutex};
use tool_core::process::{OutputChunk, OutputRing};

/// Where a piece of output came from: each keeps its own unfinished line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
    /// Logpoint messages (debugpy sends them as stdout with a `source`).
    Logpoint,
    /// A pipe captured from the adapter process (delve's debuggee).
    AdapterStdout,
    AdapterStderr,
}

/// A ring of whole lines plus each stream's unfinished one.
#[derive(Debug)]
pub(crate) struct LineOutput {
    ring: Mutex<OutputRing>,
    capacity: usize,
    /// Unfinished lines, in the order their streams first wrote them.
    partial: Mutex<Vec<(Stream, Vec<u8>)>>,
}

impl LineOutput {
    pub(crate) fn new(capacity: usize) -> Self {
        LineOutput {
            ring: Mutex::new(OutputRing::new(capacity)),
            capacity,
            partial: Mutex::new(Vec::new()),
        }
    }

    /// Add `bytes` from `stream`: its whole lines go into the ring, the
    /// rest waits for the line's end.
    pub(crate) fn push(&self, stream: Stream, bytes: &[u8]) {
        let mut partial = self.partial.lock().expect("partial lock");
        let at = partial.iter().position(|(s, _)| *s == stream);
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            match at {
                Some(i) => partial[i].1.extend_from_slice(bytes),
                None if bytes.is_empty() => {}
                None => partial.push((stream, bytes.to_vec())),
            }
            if let Some(i) = partial.iter().position(|(s, _)| *s == stream) {
                if partial[i].1.len() > self.capacity {
                    // A "line" as long as the ring is not a line: keep it.
                    let (_, long) = partial.remove(i);
                    self.ring.lock().expect("output lock").push(&long);
                }
            }
            return;
        };
        let mut ring = self.ring.lock().expect("output lock");
        if let Some(i) = at {
            let (_, head) = partial.remove(i);
            ring.push(&head);
        }
        ring.push(&bytes[..=end]);
        let rest = &bytes[end + 1..];
        if !rest.is_empty() {
            partial.push((stream, rest.to_vec()));
        }
    }

    /// Commit every unfinished line, each ended with a newline (the
    /// session is ending: nothing will complete them).
    pub(crate) fn flush(&self) {
        let pending = self.pending();
        if !pending.is_empty() {
            self.partial.lock().expect("partial lock").clear();
            self.ring
                .lock()
                .expect("output lock")
                .push(pending.as_bytes());
        }
    }

    /// The unfinished lines as text, each ended with a newline.
    fn pending(&self) -> String {
        let partial = self.partial.lock().expect("partial lock");
        let mut out = String::new();
        for (_, bytes) in partial.iter() {
            out.push_str(&String::from_utf8_lossy(bytes));
            out.push('\n');
        }
        out
    }

    /// What came after `cursor`, and the unfinished lines so far (they are
    /// read again, whole, once they end).
    pub(crate) fn read_since(&self, cursor: u64) -> OutputChunk {
        let mut chunk = self.ring.lock().expect("output lock").read_since(cursor);
        chunk.text.push_str(&self.pending());
        chunk
    }

    /// The last `n` bytes of whole lines, then the unfinished ones.
    pub(crate) fn tail(&self, n: usize) -> String {
        let mut text = self.ring.lock().expect("output lock").tail(n);
        text.push_str(&self.pending());
        text
    }
}

/// Copy a captured stream into `out` as `stream` until it ends.
pub(crate) fn capture_lines<R>(
    mut reader: R,
    out: Arc<LineOutput>,
    stream: Stream,
) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    use tokio::io::AsyncReadExt;
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.push(stream, &buf[..n]),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_in_pieces_stays_whole_around_another_streams_lines() {
        let out = LineOutput::new(1024);
        out.push(Stream::Stdout, b"total");
        out.push(Stream::Logpoint, b"i=0\n");
        assert_eq!(out.read_since(0).text, "i=0\ntotal\n");
        out.push(Stream::Stdout, b" 45\nnext");
        out.push(Stream::Stderr, b"warn");
        out.push(Stream::Logpoint, b"i=1\n");
        assert_eq!(out.read_since(0).text, "i=0\ntotal 45\ni=1\nnext\nwarn\n");
        // The cursor covers only whole lines: `next` is read again whole.
        let cursor = out.read_since(0).cursor;
        out.push(Stream::Stdout, b" line\n");
        assert_eq!(out.read_since(cursor).text, "next line\nwarn\n");
        out.flush();
        assert_eq!(out.tail(1000), "i=0\ntotal 45\ni=1\nnext line\nwarn\n");
        out.flush();
        assert_eq!(out.tail(1000), "i=0\ntotal 45\ni=1\nnext line\nwarn\n");
    }
}
