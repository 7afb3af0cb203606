//! The Java Debug Wire Protocol on a socket: packets, typed reading and
//! writing of their data, the handshake, and a client that matches replies
//! to commands and hands the VM's event packets on.
//!
//! Facts from the JDWP specification: a packet is `length u32, id u32,
//! flags u8` then `command set u8, command u8` (a command) or `error u16`
//! (a reply, flag 0x80); numbers are big-endian; strings are a `u32`
//! length and UTF-8; object, reference type, method, field and frame ids
//! have the sizes `VirtualMachine.IDSizes` gives; a location is a type tag,
//! a class id, a method id and a `u64` code index.
//!
//! Invariants: every command waits for its reply at most the bound it is
//! given; when the socket ends every waiting command fails at once with
//! why, and the event channel closes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

/// What the client and the VM say first, each to the other.
const HANDSHAKE: &[u8] = b"JDWP-Handshake";

/// The sizes of the VM's ids, in bytes (`VirtualMachine.IDSizes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSizes {
    pub field: usize,
    pub method: usize,
    pub object: usize,
    pub reference_type: usize,
    pub frame: usize,
}

impl Default for IdSizes {
    fn default() -> Self {
        IdSizes {
            field: 8,
            method: 8,
            object: 8,
            reference_type: 8,
            frame: 8,
        }
    }
}

/// Where code is: a method of a class and an index into its bytecode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    pub type_tag: u8,
    pub class: u64,
    pub method: u64,
    pub index: u64,
}

/// A value as JDWP tags it: its tag (`I`, `L`, `[`, `s`, …) and its bits
/// (an object id for references, the number otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    pub tag: u8,
    pub bits: u64,
}

impl Value {
    /// Whether the value is a reference to an object (of any kind).
    pub fn is_object(&self) -> bool {
        matches!(self.tag, b'L' | b's' | b't' | b'g' | b'l' | b'c' | b'[')
    }
}

/// How a command failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JdwpError {
    #[error("the JVM refused {command}: {}", error_name(*.code))]
    Refused { command: &'static str, code: u16 },
    #[error("the JVM did not answer {command} within {ms} ms")]
    Timeout { command: &'static str, ms: u128 },
    #[error("the connection to the JVM ended: {0}")]
    Closed(String),
    #[error("the JVM's answer to {command} is cut short")]
    Short { command: &'static str },
}

impl JdwpError {
    /// The VM's error code, when it refused.
    pub fn code(&self) -> Option<u16> {
        match self {
            JdwpError::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// JDWP's names for the error codes a debugger meets.
pub fn error_name(code: u16) -> String {
    let name = match code {
        10 => "INVALID_THREAD",
        13 => "THREAD_NOT_SUSPENDED",
        20 => "INVALID_OBJECT",
        21 => "INVALID_CLASS",
        23 => "INVALID_METHODID",
        24 => "INVALID_LOCATION",
        25 => "INVALID_FIELDID",
        30 => "INVALID_FRAMEID",
        34 => "TYPE_MISMATCH",
        35 => "INVALID_SLOT",
        41 => "NOT_FOUND",
        99 => "NOT_IMPLEMENTED",
        101 => "ABSENT_INFORMATION",
        102 => "INVALID_EVENT_TYPE",
        112 => "VM_DEAD",
        503 => "INVALID_LENGTH",
        511 => "NATIVE_METHOD",
        _ => "",
    };
    if name.is_empty() {
        format!("error {code}")
    } else {
        format!("{name} ({code})")
    }
}

/// A command's data, written as the VM reads it.
#[derive(Debug, Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
    sizes: IdSizes,
}

impl Writer {
    pub fn new(sizes: IdSizes) -> Self {
        Writer {
            bytes: Vec::new(),
            sizes,
        }
    }

    pub fn u8(mut self, v: u8) -> Self {
        self.bytes.push(v);
        self
    }

    pub fn i32(mut self, v: i32) -> Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn bool(self, v: bool) -> Self {
        self.u8(u8::from(v))
    }

    fn id(mut self, v: u64, size: usize) -> Self {
        self.bytes
            .extend_from_slice(&v.to_be_bytes()[8 - size.min(8)..]);
        self
    }

    pub fn object(self, v: u64) -> Self {
        let s = self.sizes.object;
        self.id(v, s)
    }

    pub fn reference_type(self, v: u64) -> Self {
        let s = self.sizes.reference_type;
        self.id(v, s)
    }

    pub fn method(self, v: u64) -> Self {
        let s = self.sizes.method;
        self.id(v, s)
    }

    pub fn field(self, v: u64) -> Self {
        let s = self.sizes.field;
        self.id(v, s)
    }

    pub fn frame(self, v: u64) -> Self {
        let s = self.sizes.frame;
        self.id(v, s)
    }

    pub fn string(mut self, v: &str) -> Self {
        self.bytes
            .extend_from_slice(&(v.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(v.as_bytes());
        self
    }

    /// A value without its tag, in its tag's size.
    pub fn untagged(self, v: &Value) -> Self {
        let size = match v.tag {
            b'Z' | b'B' => 1,
            b'C' | b'S' => 2,
            b'I' | b'F' => 4,
            b'J' | b'D' => 8,
            _ => self.sizes.object,
        };
        self.id(v.bits, size)
    }

    /// A value with its tag.
    pub fn value(self, v: &Value) -> Self {
        self.u8(v.tag).untagged(v)
    }

    pub fn location(self, l: &Location) -> Self {
        let mut w = self.u8(l.type_tag).reference_type(l.class).method(l.method);
        w.bytes.extend_from_slice(&l.index.to_be_bytes());
        w
    }
}

/// A reply's or an event's data, read in order.
#[derive(Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    sizes: IdSizes,
    command: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], sizes: IdSizes, command: &'static str) -> Self {
        Reader {
            data,
            pos: 0,
            sizes,
            command,
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], JdwpError> {
        let end = self.pos + n;
        let bytes = self.data.get(self.pos..end).ok_or(JdwpError::Short {
            command: self.command,
        })?;
        self.pos = end;
        Ok(bytes)
    }

    /// `n` bytes, big-endian, as a number (`n` up to 8).
    fn number(&mut self, n: usize) -> Result<u64, JdwpError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    pub fn u8(&mut self) -> Result<u8, JdwpError> {
        Ok(self.take(1)?[0])
    }

    pub fn bool(&mut self) -> Result<bool, JdwpError> {
        Ok(self.u8()? != 0)
    }

    pub fn i32(&mut self) -> Result<i32, JdwpError> {
        Ok(self.number(4)? as u32 as i32)
    }

    /// A count: an `int` that is never negative.
    pub fn count(&mut self) -> Result<usize, JdwpError> {
        Ok(usize::try_from(self.i32()?.max(0)).unwrap_or(0))
    }

    pub fn u64(&mut self) -> Result<u64, JdwpError> {
        self.number(8)
    }

    pub fn object(&mut self) -> Result<u64, JdwpError> {
        let s = self.sizes.object;
        self.number(s)
    }

    pub fn reference_type(&mut self) -> Result<u64, JdwpError> {
        let s = self.sizes.reference_type;
        self.number(s)
    }

    pub fn method(&mut self) -> Result<u64, JdwpError> {
        let s = self.sizes.method;
        self.number(s)
    }

    pub fn field(&mut self) -> Result<u64, JdwpError> {
        let s = self.sizes.field;
        self.number(s)
    }

    pub fn frame(&mut self) -> Result<u64, JdwpError> {
        let s = self.sizes.frame;
        self.number(s)
    }

    pub fn string(&mut self) -> Result<String, JdwpError> {
        let n = self.count()?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    pub fn location(&mut self) -> Result<Location, JdwpError> {
        Ok(Location {
            type_tag: self.u8()?,
            class: self.reference_type()?,
            method: self.method()?,
            index: self.u64()?,
        })
    }

    /// A value whose tag is known (an array region of primitives).
    pub fn untagged(&mut self, tag: u8) -> Result<Value, JdwpError> {
        let bits = match tag {
            b'Z' | b'B' => self.number(1)?,
            b'C' | b'S' => self.number(2)?,
            b'I' | b'F' => self.number(4)?,
            b'J' | b'D' => self.number(8)?,
            b'V' => 0,
            _ => self.object()?,
        };
        Ok(Value { tag, bits })
    }

    /// A tagged value: its tag, then its bits.
    pub fn value(&mut self) -> Result<Value, JdwpError> {
        let tag = self.u8()?;
        self.untagged(tag)
    }
}

/// One packet the VM sent on its own: a composite event's data.
pub type EventData = Vec<u8>;

type Pending = Arc<Mutex<HashMap<u32, oneshot::Sender<Result<Vec<u8>, u16>>>>>;

/// A JDWP connection: commands with bounded waits for their replies.
pub struct JdwpClient {
    out: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Pending,
    next_id: AtomicU32,
    closed: Arc<Mutex<Option<String>>>,
    pub sizes: IdSizes,
    bound: Duration,
}

impl JdwpClient {
    /// Shake hands on `stream`, read the VM's id sizes, and start reading
    /// its packets; events go to the returned channel. Every wait is
    /// bounded by `bound`.
    pub async fn start(
        mut stream: TcpStream,
        bound: Duration,
    ) -> Result<(Arc<JdwpClient>, mpsc::UnboundedReceiver<EventData>), JdwpError> {
        let _ = stream.set_nodelay(true);
        let shake = async {
            stream.write_all(HANDSHAKE).await?;
            let mut answer = [0u8; HANDSHAKE.len()];
            stream.read_exact(&mut answer).await?;
            Ok::<_, std::io::Error>(answer)
        };
        let answer = tokio::time::timeout(bound, shake)
            .await
            .map_err(|_| JdwpError::Timeout {
                command: "the handshake",
                ms: bound.as_millis(),
            })?
            .map_err(|e| JdwpError::Closed(format!("during the handshake: {e}")))?;
        if answer != HANDSHAKE {
            return Err(JdwpError::Closed(format!(
                "the handshake was answered with {:?}, not JDWP-Handshake",
                String::from_utf8_lossy(&answer)
            )));
        }
        let (read, write) = stream.into_split();
        let pending: Pending = Arc::default();
        let closed = Arc::new(Mutex::new(None));
        let (events_tx, events) = mpsc::unbounded_channel();
        tokio::spawn(read_packets(
            read,
            pending.clone(),
            closed.clone(),
            events_tx,
        ));
        let mut client = JdwpClient {
            out: tokio::sync::Mutex::new(write),
            pending,
            next_id: AtomicU32::new(1),
            closed,
            sizes: IdSizes::default(),
            bound,
        };
        let data = client
            .command("VirtualMachine.IDSizes", 1, 7, Vec::new())
            .await?;
        let mut r = Reader::new(&data, client.sizes, "VirtualMachine.IDSizes");
        let mut size = || -> Result<usize, JdwpError> { Ok(r.count()?.clamp(1, 8)) };
        client.sizes = IdSizes {
            field: size()?,
            method: size()?,
            object: size()?,
            reference_type: size()?,
            frame: size()?,
        };
        Ok((Arc::new(client), events))
    }

    /// A writer for a command's data with the VM's id sizes.
    pub fn data(&self) -> Writer {
        Writer::new(self.sizes)
    }

    /// A reader of a reply's data.
    pub fn reader<'a>(&self, data: &'a [u8], command: &'static str) -> Reader<'a> {
        Reader::new(data, self.sizes, command)
    }

    /// Send command `set`/`cmd` named `name` with `data`; its reply's data.
    pub async fn command(
        &self,
        name: &'static str,
        set: u8,
        cmd: u8,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, JdwpError> {
        if let Some(why) = self.closed.lock().expect("closed lock").clone() {
            return Err(JdwpError::Closed(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, tx);
        let mut packet = Vec::with_capacity(11 + data.len());
        packet.extend_from_slice(&((11 + data.len()) as u32).to_be_bytes());
        packet.extend_from_slice(&id.to_be_bytes());
        packet.extend_from_slice(&[0, set, cmd]);
        packet.extend_from_slice(&data);
        if let Err(e) = self.out.lock().await.write_all(&packet).await {
            self.pending.lock().expect("pending lock").remove(&id);
            return Err(JdwpError::Closed(e.to_string()));
        }
        match tokio::time::timeout(self.bound, rx).await {
            Err(_) => {
                self.pending.lock().expect("pending lock").remove(&id);
                Err(JdwpError::Timeout {
                    command: name,
                    ms: self.bound.as_millis(),
                })
            }
            Ok(Err(_)) => Err(JdwpError::Closed(
                self.closed
                    .lock()
                    .expect("closed lock")
                    .clone()
                    .unwrap_or_else(|| "the socket closed".into()),
            )),
            Ok(Ok(Err(code))) => Err(JdwpError::Refused {
                command: name,
                code,
            }),
            Ok(Ok(Ok(reply))) => Ok(reply),
        }
    }

    /// Whether the socket has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.lock().expect("closed lock").is_some()
    }
}

/// Read the VM's packets until the socket ends: replies to their commands,
/// composite events to `events`.
async fn read_packets(
    mut read: tokio::net::tcp::OwnedReadHalf,
    pending: Pending,
    closed: Arc<Mutex<Option<String>>>,
    events: mpsc::UnboundedSender<EventData>,
) {
    let why = loop {
        let mut header = [0u8; 11];
        if let Err(e) = read.read_exact(&mut header).await {
            break if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "the JVM closed it".to_string()
            } else {
                e.to_string()
            };
        }
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let id = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        let mut data = vec![0u8; length.saturating_sub(11)];
        if let Err(e) = read.read_exact(&mut data).await {
            break e.to_string();
        }
        if header[8] & 0x80 != 0 {
            let code = u16::from_be_bytes([header[9], header[10]]);
            let waiter = pending.lock().expect("pending lock").remove(&id);
            if let Some(w) = waiter {
                let _ = w.send(if code == 0 { Ok(data) } else { Err(code) });
            }
        } else if header[9] == 64 && header[10] == 100 {
            // Event.Composite: the only command a VM sends.
            let _ = events.send(data);
        }
    };
    *closed.lock().expect("closed lock") = Some(why);
    // Dropping the senders fails every waiting command at once.
    pending.lock().expect("pending lock").clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_reads_back_as_written() {
        let sizes = IdSizes {
            object: 4,
            ..IdSizes::default()
        };
        let loc = Location {
            type_tag: 1,
            class: 0x1234,
            method: 7,
            index: 42,
        };
        let w = Writer::new(sizes)
            .u8(3)
            .i32(-2)
            .object(0xdead_beef)
            .string("héllo")
            .location(&loc);
        let mut r = Reader::new(&w.bytes, sizes, "test");
        assert_eq!(r.u8().unwrap(), 3);
        assert_eq!(r.i32().unwrap(), -2);
        assert_eq!(r.object().unwrap(), 0xdead_beef);
        assert_eq!(r.string().unwrap(), "héllo");
        assert_eq!(r.location().unwrap(), loc);
        assert_eq!(r.u8().unwrap_err(), JdwpError::Short { command: "test" });
        assert_eq!(error_name(101), "ABSENT_INFORMATION (101)");
        assert_eq!(error_name(7), "error 7");
    }
}
