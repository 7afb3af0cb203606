//! The JDWP commands the backend sends, typed: each is a function of the
//! client that writes its data and reads its reply (command set and number
//! from the JDWP specification), and the composite event packet read into
//! [`Event`]s.

use super::wire::{JdwpClient, JdwpError, Location, Value};

/// Event kinds (JDWP `EventKind`).
pub const SINGLE_STEP: u8 = 1;
pub const BREAKPOINT: u8 = 2;
pub const EXCEPTION: u8 = 4;
pub const CLASS_PREPARE: u8 = 8;
pub const VM_START: u8 = 90;
pub const VM_DEATH: u8 = 99;

/// Suspend policy: every thread stops when the event comes.
pub const SUSPEND_ALL: u8 = 2;

/// `StepDepth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepDepth {
    Into = 0,
    Over = 1,
    Out = 2,
}

/// A filter of an event request (JDWP `Modifier`).
#[derive(Debug, Clone)]
pub enum Modifier {
    /// Kind 1: only the first `n` events.
    Count(i32),
    /// Kind 6: not in classes matching the pattern (`java.*`).
    ClassExclude(String),
    /// Kind 7: only at this location.
    LocationOnly(Location),
    /// Kind 8: exceptions of every class, caught and/or uncaught.
    ExceptionOnly { caught: bool, uncaught: bool },
    /// Kind 10: a step of one line of `thread`.
    Step { thread: u64, depth: StepDepth },
    /// Kind 12: classes whose source file name matches (`Stats.java`).
    SourceNameMatch(String),
}

/// A method of a class (`ReferenceType.Methods`).
#[derive(Debug, Clone)]
pub struct Method {
    pub id: u64,
    pub name: String,
    pub mod_bits: i32,
}

/// A method's line table: (code index, line), in the VM's order.
#[derive(Debug, Clone, Default)]
pub struct LineTable {
    pub lines: Vec<(u64, u32)>,
}

impl LineTable {
    /// The line of the code at `index`: the last entry at or before it.
    pub fn line_at(&self, index: u64) -> Option<u32> {
        self.lines
            .iter()
            .filter(|(i, _)| *i <= index)
            .max_by_key(|(i, _)| *i)
            .map(|(_, l)| *l)
    }

    /// The first code of `line`, if the method has code there.
    pub fn first_index_of(&self, line: u32) -> Option<u64> {
        self.lines
            .iter()
            .filter(|(_, l)| *l == line)
            .map(|(i, _)| *i)
            .min()
    }
}

/// A local variable's slot and where it lives (`Method.VariableTable`).
#[derive(Debug, Clone)]
pub struct Variable {
    pub start: u64,
    pub length: u64,
    pub name: String,
    pub signature: String,
    pub slot: i32,
}

/// A field of a class (`ReferenceType.Fields`).
#[derive(Debug, Clone)]
pub struct Field {
    pub id: u64,
    pub name: String,
    pub signature: String,
    pub mod_bits: i32,
}

/// A loaded class (`VirtualMachine.AllClasses`).
#[derive(Debug, Clone)]
pub struct LoadedClass {
    pub id: u64,
    pub signature: String,
}

/// One event of a composite packet.
#[derive(Debug, Clone)]
pub enum Event {
    VmStart,
    VmDeath,
    /// A breakpoint, a step or an exception: where a thread stopped.
    Stop {
        kind: u8,
        request: i32,
        thread: u64,
        location: Location,
        /// The exception object, for an exception.
        exception: Option<u64>,
        /// Whether some code catches it, for an exception.
        caught: bool,
    },
    ClassPrepare {
        class: u64,
        signature: String,
    },
    Other,
}

/// A composite event packet: its suspend policy and its events.
pub fn read_events(client: &JdwpClient, data: &[u8]) -> Result<(u8, Vec<Event>), JdwpError> {
    let mut r = client.reader(data, "Event.Composite");
    let policy = r.u8()?;
    let n = r.count()?;
    let mut events = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = r.u8()?;
        let request = r.i32()?;
        events.push(match kind {
            VM_START => {
                r.object()?;
                Event::VmStart
            }
            VM_DEATH => Event::VmDeath,
            SINGLE_STEP | BREAKPOINT | 40 | 41 => {
                let thread = r.object()?;
                let location = r.location()?;
                Event::Stop {
                    kind,
                    request,
                    thread,
                    location,
                    exception: None,
                    caught: false,
                }
            }
            EXCEPTION => {
                let thread = r.object()?;
                let location = r.location()?;
                let exception = r.value()?.bits;
                let catch = r.location()?;
                Event::Stop {
                    kind,
                    request,
                    thread,
                    location,
                    exception: Some(exception),
                    caught: catch.class != 0,
                }
            }
            CLASS_PREPARE => {
                r.object()?;
                r.u8()?;
                let class = r.reference_type()?;
                let signature = r.string()?;
                r.i32()?;
                Event::ClassPrepare { class, signature }
            }
            // Thread start/death (and nothing else is asked for): the
            // rest of the packet cannot be read past an unknown kind.
            6 | 7 => {
                r.object()?;
                Event::Other
            }
            _ => break,
        });
    }
    Ok((policy, events))
}

impl JdwpClient {
    pub async fn all_classes(&self) -> Result<Vec<LoadedClass>, JdwpError> {
        let data = self
            .command("VirtualMachine.AllClasses", 1, 3, Vec::new())
            .await?;
        let mut r = self.reader(&data, "VirtualMachine.AllClasses");
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            r.u8()?;
            let id = r.reference_type()?;
            let signature = r.string()?;
            r.i32()?;
            out.push(LoadedClass { id, signature });
        }
        Ok(out)
    }

    pub async fn all_threads(&self) -> Result<Vec<u64>, JdwpError> {
        let data = self
            .command("VirtualMachine.AllThreads", 1, 4, Vec::new())
            .await?;
        let mut r = self.reader(&data, "VirtualMachine.AllThreads");
        (0..r.count()?).map(|_| r.object()).collect()
    }

    /// Let go of the VM: its event requests cancelled, the threads the
    /// debugger suspended resumed.
    pub async fn dispose(&self) -> Result<(), JdwpError> {
        self.command("VirtualMachine.Dispose", 1, 6, Vec::new())
            .await
            .map(|_| ())
    }

    pub async fn suspend_all(&self) -> Result<(), JdwpError> {
        self.command("VirtualMachine.Suspend", 1, 8, Vec::new())
            .await
            .map(|_| ())
    }

    pub async fn resume_all(&self) -> Result<(), JdwpError> {
        self.command("VirtualMachine.Resume", 1, 9, Vec::new())
            .await
            .map(|_| ())
    }

    pub async fn signature(&self, class: u64) -> Result<String, JdwpError> {
        let data = self
            .command(
                "ReferenceType.Signature",
                2,
                1,
                self.data().reference_type(class).bytes,
            )
            .await?;
        self.reader(&data, "ReferenceType.Signature").string()
    }

    pub async fn fields(&self, class: u64) -> Result<Vec<Field>, JdwpError> {
        let data = self
            .command(
                "ReferenceType.Fields",
                2,
                4,
                self.data().reference_type(class).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "ReferenceType.Fields");
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(Field {
                id: r.field()?,
                name: r.string()?,
                signature: r.string()?,
                mod_bits: r.i32()?,
            });
        }
        Ok(out)
    }

    pub async fn methods(&self, class: u64) -> Result<Vec<Method>, JdwpError> {
        let data = self
            .command(
                "ReferenceType.Methods",
                2,
                5,
                self.data().reference_type(class).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "ReferenceType.Methods");
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let id = r.method()?;
            let name = r.string()?;
            r.string()?;
            out.push(Method {
                id,
                name,
                mod_bits: r.i32()?,
            });
        }
        Ok(out)
    }

    /// The class's `SourceFile` attribute (`Stats.java`), if compiled in.
    pub async fn source_file(&self, class: u64) -> Result<Option<String>, JdwpError> {
        match self
            .command(
                "ReferenceType.SourceFile",
                2,
                7,
                self.data().reference_type(class).bytes,
            )
            .await
        {
            Ok(data) => Ok(Some(
                self.reader(&data, "ReferenceType.SourceFile").string()?,
            )),
            Err(e) if e.code() == Some(101) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn superclass(&self, class: u64) -> Result<u64, JdwpError> {
        let data = self
            .command(
                "ClassType.Superclass",
                3,
                1,
                self.data().reference_type(class).bytes,
            )
            .await?;
        self.reader(&data, "ClassType.Superclass").reference_type()
    }

    pub async fn line_table(&self, class: u64, method: u64) -> Result<LineTable, JdwpError> {
        let data = self
            .command(
                "Method.LineTable",
                6,
                1,
                self.data().reference_type(class).method(method).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "Method.LineTable");
        r.u64()?;
        r.u64()?;
        let n = r.count()?;
        let mut lines = Vec::with_capacity(n);
        for _ in 0..n {
            let index = r.u64()?;
            let line = r.i32()?;
            lines.push((index, u32::try_from(line).unwrap_or(0)));
        }
        Ok(LineTable { lines })
    }

    pub async fn variable_table(
        &self,
        class: u64,
        method: u64,
    ) -> Result<Vec<Variable>, JdwpError> {
        let data = self
            .command(
                "Method.VariableTable",
                6,
                2,
                self.data().reference_type(class).method(method).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "Method.VariableTable");
        r.i32()?;
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(Variable {
                start: r.u64()?,
                name: r.string()?,
                signature: r.string()?,
                length: u64::from(r.i32()? as u32),
                slot: r.i32()?,
            });
        }
        Ok(out)
    }

    /// The class of an object.
    pub async fn object_class(&self, object: u64) -> Result<u64, JdwpError> {
        let data = self
            .command(
                "ObjectReference.ReferenceType",
                9,
                1,
                self.data().object(object).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "ObjectReference.ReferenceType");
        r.u8()?;
        r.reference_type()
    }

    pub async fn object_values(
        &self,
        object: u64,
        fields: &[u64],
    ) -> Result<Vec<Value>, JdwpError> {
        let mut w = self.data().object(object).i32(fields.len() as i32);
        for f in fields {
            w = w.field(*f);
        }
        let data = self
            .command("ObjectReference.GetValues", 9, 2, w.bytes)
            .await?;
        let mut r = self.reader(&data, "ObjectReference.GetValues");
        (0..r.count()?).map(|_| r.value()).collect()
    }

    pub async fn string_value(&self, string: u64) -> Result<String, JdwpError> {
        let data = self
            .command(
                "StringReference.Value",
                10,
                1,
                self.data().object(string).bytes,
            )
            .await?;
        self.reader(&data, "StringReference.Value").string()
    }

    pub async fn thread_name(&self, thread: u64) -> Result<String, JdwpError> {
        let data = self
            .command(
                "ThreadReference.Name",
                11,
                1,
                self.data().object(thread).bytes,
            )
            .await?;
        self.reader(&data, "ThreadReference.Name").string()
    }

    /// How many frames a suspended thread has.
    pub async fn frame_count(&self, thread: u64) -> Result<usize, JdwpError> {
        let data = self
            .command(
                "ThreadReference.FrameCount",
                11,
                7,
                self.data().object(thread).bytes,
            )
            .await?;
        self.reader(&data, "ThreadReference.FrameCount").count()
    }

    /// `length` frames of a thread from `start`, innermost first: (frame
    /// id, location).
    pub async fn frames(
        &self,
        thread: u64,
        start: usize,
        length: usize,
    ) -> Result<Vec<(u64, Location)>, JdwpError> {
        if length == 0 {
            return Ok(Vec::new());
        }
        let w = self
            .data()
            .object(thread)
            .i32(i32::try_from(start).unwrap_or(i32::MAX))
            .i32(i32::try_from(length).unwrap_or(i32::MAX));
        let data = self
            .command("ThreadReference.Frames", 11, 6, w.bytes)
            .await?;
        let mut r = self.reader(&data, "ThreadReference.Frames");
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push((r.frame()?, r.location()?));
        }
        Ok(out)
    }

    pub async fn array_length(&self, array: u64) -> Result<usize, JdwpError> {
        let data = self
            .command(
                "ArrayReference.Length",
                13,
                1,
                self.data().object(array).bytes,
            )
            .await?;
        self.reader(&data, "ArrayReference.Length").count()
    }

    /// `length` elements of an array from `first`.
    pub async fn array_values(
        &self,
        array: u64,
        first: usize,
        length: usize,
    ) -> Result<Vec<Value>, JdwpError> {
        // The VM refuses a region of none (INVALID_LENGTH).
        if length == 0 {
            return Ok(Vec::new());
        }
        let w = self
            .data()
            .object(array)
            .i32(first as i32)
            .i32(length as i32);
        let data = self
            .command("ArrayReference.GetValues", 13, 2, w.bytes)
            .await?;
        let mut r = self.reader(&data, "ArrayReference.GetValues");
        let tag = r.u8()?;
        let n = r.count()?;
        let primitive = matches!(tag, b'Z' | b'B' | b'C' | b'S' | b'I' | b'J' | b'F' | b'D');
        (0..n)
            .map(|_| {
                if primitive {
                    r.untagged(tag)
                } else {
                    r.value()
                }
            })
            .collect()
    }

    /// Ask for events of `kind`; the request's id.
    pub async fn set_event(&self, kind: u8, modifiers: &[Modifier]) -> Result<i32, JdwpError> {
        let mut w = self
            .data()
            .u8(kind)
            .u8(SUSPEND_ALL)
            .i32(modifiers.len() as i32);
        for m in modifiers {
            w = match m {
                Modifier::Count(n) => w.u8(1).i32(*n),
                Modifier::ClassExclude(p) => w.u8(6).string(p),
                Modifier::LocationOnly(l) => w.u8(7).location(l),
                Modifier::ExceptionOnly { caught, uncaught } => {
                    w.u8(8).reference_type(0).bool(*caught).bool(*uncaught)
                }
                Modifier::Step { thread, depth } => {
                    w.u8(10).object(*thread).i32(1).i32(*depth as i32)
                }
                Modifier::SourceNameMatch(p) => w.u8(12).string(p),
            };
        }
        let data = self.command("EventRequest.Set", 15, 1, w.bytes).await?;
        self.reader(&data, "EventRequest.Set").i32()
    }

    pub async fn clear_event(&self, kind: u8, request: i32) -> Result<(), JdwpError> {
        self.command(
            "EventRequest.Clear",
            15,
            2,
            self.data().u8(kind).i32(request).bytes,
        )
        .await
        .map(|_| ())
    }

    /// The values in `slots` (slot, signature tag) of a frame.
    pub async fn frame_values(
        &self,
        thread: u64,
        frame: u64,
        slots: &[(i32, u8)],
    ) -> Result<Vec<Value>, JdwpError> {
        let mut w = self
            .data()
            .object(thread)
            .frame(frame)
            .i32(slots.len() as i32);
        for (slot, tag) in slots {
            w = w.i32(*slot).u8(*tag);
        }
        let data = self.command("StackFrame.GetValues", 16, 1, w.bytes).await?;
        let mut r = self.reader(&data, "StackFrame.GetValues");
        (0..r.count()?).map(|_| r.value()).collect()
    }

    /// The class a `java.lang.Class` object stands for.
    pub async fn reflected_type(&self, class_object: u64) -> Result<u64, JdwpError> {
        let data = self
            .command(
                "ClassObjectReference.ReflectedType",
                17,
                1,
                self.data().object(class_object).bytes,
            )
            .await?;
        let mut r = self.reader(&data, "ClassObjectReference.ReflectedType");
        r.u8()?;
        r.reference_type()
    }

    /// A new string in the VM; its id.
    pub async fn create_string(&self, text: &str) -> Result<u64, JdwpError> {
        let data = self
            .command(
                "VirtualMachine.CreateString",
                1,
                11,
                self.data().string(text).bytes,
            )
            .await?;
        self.reader(&data, "VirtualMachine.CreateString").object()
    }

    pub async fn set_frame_value(
        &self,
        thread: u64,
        frame: u64,
        slot: i32,
        value: &Value,
    ) -> Result<(), JdwpError> {
        let w = self
            .data()
            .object(thread)
            .frame(frame)
            .i32(1)
            .i32(slot)
            .value(value);
        self.command("StackFrame.SetValues", 16, 2, w.bytes)
            .await
            .map(|_| ())
    }

    pub async fn set_field_value(
        &self,
        object: u64,
        field: u64,
        value: &Value,
    ) -> Result<(), JdwpError> {
        let w = self
            .data()
            .object(object)
            .i32(1)
            .field(field)
            .untagged(value);
        self.command("ObjectReference.SetValues", 9, 3, w.bytes)
            .await
            .map(|_| ())
    }

    pub async fn set_element_value(
        &self,
        array: u64,
        index: usize,
        value: &Value,
    ) -> Result<(), JdwpError> {
        let w = self
            .data()
            .object(array)
            .i32(i32::try_from(index).unwrap_or(i32::MAX))
            .i32(1)
            .untagged(value);
        self.command("ArrayReference.SetValues", 13, 3, w.bytes)
            .await
            .map(|_| ())
    }

    /// The frame's `this`, 0 in a static method.
    pub async fn this_object(&self, thread: u64, frame: u64) -> Result<u64, JdwpError> {
        let data = self
            .command(
                "StackFrame.ThisObject",
                16,
                3,
                self.data().object(thread).frame(frame).bytes,
            )
            .await?;
        Ok(self.reader(&data, "StackFrame.ThisObject").value()?.bits)
    }
}
