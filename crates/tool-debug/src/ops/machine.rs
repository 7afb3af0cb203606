//! The ops that look at the program as the machine runs it: `modules`,
//! `disassemble` and `read_memory`. Each needs a capability only some
//! adapters announce, and is refused, naming the adapter and the
//! capability, where it is missing.

use super::results::{DisassembleResult, InstructionLine, MemoryResult, ModuleLine, ModulesResult};
use super::{done, OpContext};
use crate::args::{DebugArgs, Op};
use base64::Engine;
use serde_json::{json, Value};
use tool_core::{ToolError, ToolOutput};

const MODULE_CAP: usize = 50;
const INSTRUCTIONS_DEFAULT: u64 = 20;
const INSTRUCTIONS_MAX: u64 = 200;
const BYTES_DEFAULT: u64 = 64;
const BYTES_MAX: u64 = 1024;

/// `count` within `1..=max`, or why not.
fn count_within(args: &DebugArgs, default: u64, max: u64, what: &str) -> Result<u64, ToolError> {
    match args.count {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::bad_args(format!(
            "`count` is {n}; {what} between 1 and {max}"
        ))),
    }
}

impl OpContext<'_> {
    pub(super) async fn modules(&self) -> Result<ToolOutput, ToolError> {
        let s = self.live()?;
        s.require("supportsModulesRequest", "listing modules")?;
        let body = s
            .request(
                "modules",
                json!({"startModule": 0, "moduleCount": MODULE_CAP + 1}),
            )
            .await?;
        let all = body
            .get("modules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let total = body
            .get("totalModules")
            .and_then(Value::as_u64)
            .map_or(all.len(), |t| t as usize)
            .max(all.len());
        let text = |m: &Value, k: &str| m.get(k).and_then(Value::as_str).map(String::from);
        done(ModulesResult {
            modules: all
                .iter()
                .take(MODULE_CAP)
                .map(|m| ModuleLine {
                    name: text(m, "name").unwrap_or_default(),
                    path: text(m, "path").map(|p| relative_path(self, &p)),
                    symbols: text(m, "symbolStatus"),
                })
                .collect(),
            total,
            cap: MODULE_CAP,
        })
    }

    pub(super) async fn disassemble(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let count = count_within(args, INSTRUCTIONS_DEFAULT, INSTRUCTIONS_MAX, "give")?;
        let (s, stop) = self.stopped(Op::Disassemble)?;
        s.require("supportsDisassembleRequest", "disassembly")?;
        let at = match args.memory_reference.as_deref() {
            Some(r) if !r.trim().is_empty() => r.trim().to_string(),
            Some(_) => return Err(ToolError::bad_args("`memory_reference` is empty")),
            None => {
                let thread = stop.thread_id.ok_or_else(|| {
                    ToolError::bad_args("the stop names no thread; pass `memory_reference`")
                })?;
                self.top_frame(&s, thread)
                    .await
                    .and_then(|f| f.instruction_pointer_reference)
                    .ok_or_else(|| {
                        ToolError::failed(format!(
                            "the {} adapter gave no instruction pointer for the top frame; pass `memory_reference`",
                            s.adapter_id()
                        ))
                    })?
            }
        };
        let body = s
            .request(
                "disassemble",
                json!({"memoryReference": at, "instructionOffset": 0, "instructionCount": count, "resolveSymbols": true}),
            )
            .await
            .map_err(|e| bad_reference(e, &at))?;
        let text = |m: &Value, k: &str| m.get(k).and_then(Value::as_str).map(String::from);
        done(DisassembleResult {
            instructions: body
                .get("instructions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|i| InstructionLine {
                    address: text(i, "address").unwrap_or_default(),
                    instruction: text(i, "instruction").unwrap_or_default(),
                    symbol: text(i, "symbol"),
                    line: i.get("line").and_then(Value::as_u64),
                })
                .collect(),
            at,
        })
    }

    pub(super) async fn read_memory(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let count = count_within(args, BYTES_DEFAULT, BYTES_MAX, "read")?;
        let at = args
            .memory_reference
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .ok_or_else(|| {
                ToolError::bad_args(
                    "read_memory needs `memory_reference`: an address like 0xc000012345, or one an evaluate or disassemble answer gave",
                )
            })?
            .to_string();
        let (s, _) = self.stopped(Op::ReadMemory)?;
        s.require("supportsReadMemoryRequest", "reading memory")?;
        let body = s
            .request(
                "readMemory",
                json!({"memoryReference": at, "offset": 0, "count": count}),
            )
            .await
            .map_err(|e| bad_reference(e, &at))?;
        let data = body
            .get("data")
            .and_then(Value::as_str)
            .map(|d| base64::engine::general_purpose::STANDARD.decode(d))
            .transpose()
            .map_err(|e| {
                ToolError::failed(format!("the adapter's memory data is not base64: {e}"))
            })?
            .unwrap_or_default();
        done(MemoryResult {
            address: body
                .get("address")
                .and_then(Value::as_str)
                .unwrap_or(&at)
                .to_string(),
            unreadable: body
                .get("unreadableBytes")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            hex: data.iter().map(|b| format!("{b:02x}")).collect(),
            bytes: data,
        })
    }
}

/// A path inside the workspace relative to it; others as they are.
fn relative_path(cx: &OpContext<'_>, p: &str) -> String {
    let path = std::path::Path::new(p);
    if cx.workspace.contains(path) {
        cx.rel(path)
    } else {
        p.to_string()
    }
}

/// The adapter's refusal of a memory reference, said as bad input.
fn bad_reference(e: ToolError, at: &str) -> ToolError {
    match e {
        ToolError::Failed(m) => ToolError::bad_args(format!(
            "the adapter refused memory reference `{at}`: {m}; take one that locals or variables show as `[memory …]` (delve accepts only those), or an address from disassemble where the adapter reads any address"
        )),
        other => other,
    }
}
