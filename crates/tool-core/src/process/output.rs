//! Bounded capture of a child's output: a ring of bytes with a cursor, so a
//! reader asks for what is new since its last read.
//!
//! Invariant: a ring never holds more than its capacity; what falls off the
//! front is counted, so a reader is told how much it missed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncReadExt};

/// A bounded ring of output bytes with a cursor, so a reader can ask for what
/// is new since its last read. Oldest bytes are dropped past the capacity.
#[derive(Debug)]
pub struct OutputRing {
    buf: VecDeque<u8>,
    capacity: usize,
    /// Bytes ever written; the cursor space.
    written: u64,
}

/// What [`OutputRing::read_since`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    pub text: String,
    /// Pass this as the next cursor.
    pub cursor: u64,
    /// Bytes between the given cursor and what is still kept, now lost.
    pub dropped: u64,
}

impl OutputRing {
    pub fn new(capacity: usize) -> Self {
        OutputRing {
            buf: VecDeque::with_capacity(capacity.min(64 * 1024)),
            capacity,
            written: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        let bytes = if bytes.len() > self.capacity {
            &bytes[bytes.len() - self.capacity..]
        } else {
            bytes
        };
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.capacity);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Everything kept after `cursor`.
    pub fn read_since(&self, cursor: u64) -> OutputChunk {
        let start = self.written - self.buf.len() as u64;
        let from = cursor.max(start).min(self.written);
        let skip = (from - start) as usize;
        let bytes: Vec<u8> = self.buf.iter().skip(skip).copied().collect();
        OutputChunk {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            cursor: self.written,
            dropped: from - cursor.min(from),
        }
    }

    /// The last `n` bytes kept, as text.
    pub fn tail(&self, n: usize) -> String {
        let skip = self.buf.len().saturating_sub(n);
        let bytes: Vec<u8> = self.buf.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A shared ring several readers feed.
pub type SharedOutput = Arc<Mutex<OutputRing>>;

/// Copy a stream into a shared ring until it ends. Returns the task.
pub fn capture_into<R>(mut reader: R, ring: SharedOutput) -> tokio::task::JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => ring.lock().expect("output lock").push(&buf[..n]),
            }
        }
    })
}
