//! Results of `modules`, `disassemble` and `read_memory`.

use super::Answer;
use serde::Serialize;
use tool_core::format::capped_note;

#[derive(Debug, Serialize)]
pub(in crate::ops) struct ModuleLine {
    pub name: String,
    pub path: Option<String>,
    pub symbols: Option<String>,
}

/// `modules`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct ModulesResult {
    pub modules: Vec<ModuleLine>,
    pub total: usize,
    #[serde(skip)]
    pub cap: usize,
}

impl Answer for ModulesResult {
    fn text(&self) -> String {
        let mut out = vec![format!("debug modules  {} loaded", self.total)];
        for m in &self.modules {
            let mut line = m.name.clone();
            if let Some(p) = m.path.as_deref().filter(|p| *p != m.name) {
                line.push_str(&format!("  {p}"));
            }
            if let Some(sym) = &m.symbols {
                line.push_str(&format!("  ({sym})"));
            }
            out.push(line);
        }
        if self.total > self.cap {
            out.push(capped_note(
                self.cap,
                self.total,
                "the first loaded are shown",
            ));
        }
        out.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub(in crate::ops) struct InstructionLine {
    pub address: String,
    pub instruction: String,
    pub symbol: Option<String>,
    pub line: Option<u64>,
}

/// `disassemble`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct DisassembleResult {
    pub instructions: Vec<InstructionLine>,
    #[serde(skip)]
    pub at: String,
}

impl Answer for DisassembleResult {
    fn text(&self) -> String {
        let mut out = vec![format!(
            "debug disassemble  {} instructions at {}",
            self.instructions.len(),
            self.at
        )];
        for i in &self.instructions {
            let mut line = format!("{}  {}", i.address, i.instruction);
            if let Some(s) = i.symbol.as_deref().filter(|s| !s.is_empty()) {
                line.push_str(&format!("  <{s}>"));
            }
            if let Some(l) = i.line {
                line.push_str(&format!("  line {l}"));
            }
            out.push(line);
        }
        out.join("\n")
    }
}

/// `read_memory`.
#[derive(Debug, Serialize)]
pub(in crate::ops) struct MemoryResult {
    pub address: String,
    pub hex: String,
    pub unreadable: u64,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

impl Answer for MemoryResult {
    fn text(&self) -> String {
        let mut out = vec![format!(
            "debug read_memory  {} bytes at {}",
            self.bytes.len(),
            self.address
        )];
        for (i, row) in self.bytes.chunks(16).enumerate() {
            let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
            let ascii: String = row
                .iter()
                .map(|b| {
                    if b.is_ascii_graphic() || *b == b' ' {
                        *b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            out.push(format!("+{:04x}  {:<47}  {ascii}", i * 16, hex.join(" ")));
        }
        if self.unreadable > 0 {
            out.push(format!(
                "{} bytes after these could not be read",
                self.unreadable
            ));
        }
        out.join("\n")
    }
}
