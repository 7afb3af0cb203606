//! The `eval` tool: its arguments, its spec, and the kernels it keeps (one per
//! language, started on first use, replaced when lost or reset).

use crate::bridge::EVAL_TOOL;
use crate::cell::{self, CellEnd, CellLimits};
use crate::config::Language;
use crate::format::{self, ResultContext};
use crate::kernel::{KernelFactory, KernelProcess};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tool_core::{async_trait, CallContext, Tier, Tool, ToolError, ToolOutput, ToolSpec};

/// The arguments of `eval`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// The cell: Python or JavaScript source. Variables, imports and loaded
    /// data persist into later cells of the same language. Required unless
    /// `inspect` is set.
    #[serde(default)]
    pub code: String,
    /// 5–10 words saying what the cell does, for the transcript label.
    pub description: String,
    /// `python` (default) or `javascript`.
    #[serde(default)]
    pub language: Language,
    /// Drop the interpreter and start a clean one before running the cell.
    #[serde(default)]
    pub reset: bool,
    /// The cell's idle budget in seconds (default 300): how long it may run
    /// with no output and no bridged tool call pending before it is
    /// interrupted.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Instead of running code, list the variables the kernel of `language`
    /// holds: name, type, and shape, length or signature (modules and what
    /// was imported from them are left out).
    #[serde(default)]
    pub inspect: bool,
}

/// How many variables `inspect` describes at most.
const INSPECT_MAX: usize = 100;

/// One language's kernel, and why the previous one is gone, if it is.
#[derive(Default)]
struct KernelSlot {
    kernel: Option<KernelProcess>,
    /// Said in the next result, once.
    lost: Option<String>,
}

/// The `eval` tool, bound to one run's kernel factory.
pub struct EvalTool {
    factory: Arc<KernelFactory>,
    kernels: tokio::sync::Mutex<HashMap<Language, KernelSlot>>,
}

impl std::fmt::Debug for EvalTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalTool")
            .field("factory", &self.factory)
            .finish_non_exhaustive()
    }
}

const DESCRIPTION: &str = "Run a Python or JavaScript (Node.js) cell in a persistent kernel: variables, imports \
and loaded data persist between calls of the same language. The last expression is echoed as in a notebook \
(end it with `;` to hide it). display(obj) shows objects anywhere in a cell; a pandas DataFrame renders as a \
table and matplotlib figures come back as images. Python accepts the IPython idioms %pip (then imports see the \
new packages), %cd, %pwd, %env, %time, %timeit, !cmd, x = !cmd, and the cell magics %%bash, %%timeit, \
%%capture, %%writefile. JavaScript has top-level await, and declarations persist. Inside a cell, \
tool(name, args) calls this run's other tools with the same permissions (await it in JavaScript). A cell is \
interrupted after timeout_seconds (default 300) with no output and no tool call pending. inspect: true (no code) \
lists the variables the kernel holds: name, type, and shape, length or signature.";

impl EvalTool {
    pub fn new(factory: Arc<KernelFactory>) -> Self {
        EvalTool {
            factory,
            kernels: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The pids of the kernels running now (for tests and `doctor`).
    pub async fn kernel_pids(&self) -> Vec<(Language, u32)> {
        let kernels = self.kernels.lock().await;
        let mut out: Vec<(Language, u32)> = kernels
            .iter()
            .filter_map(|(l, s)| s.kernel.as_ref().map(|k| (*l, k.pid())))
            .collect();
        out.sort_by_key(|(l, _)| l.as_str());
        out
    }

    /// Stop every kernel now (the run ends). Dropping the tool does the same.
    pub async fn shutdown(&self) {
        let mut kernels = self.kernels.lock().await;
        for slot in kernels.values_mut() {
            if let Some(mut k) = slot.kernel.take() {
                k.kill().await;
            }
        }
    }

    /// The variables of `language`'s kernel, without starting one.
    async fn inspect(
        &self,
        language: Language,
        description: &str,
    ) -> Result<ToolOutput, ToolError> {
        let mut kernels = self.kernels.lock().await;
        let Some(kernel) = kernels.get_mut(&language).and_then(|s| s.kernel.as_mut()) else {
            return Ok(ToolOutput::text(format!(
                "{}\n(no {language} kernel is running, so it holds nothing; a cell starts one)",
                format::label(language, description)
            )));
        };
        let (variables, total) = kernel
            .inspect(INSPECT_MAX)
            .await
            .map_err(|e| ToolError::failed(format!("inspect {language}: {e}")))?;
        Ok(format::variables(language, description, &variables, total))
    }

    fn limits(&self, args: &EvalArgs) -> Result<CellLimits, ToolError> {
        let cfg = self.factory.config();
        let max = cfg.max_idle_timeout();
        let idle_budget = match args.timeout_seconds {
            None => cfg.idle_timeout(),
            Some(s) if !(s.is_finite() && s > 0.0) => {
                return Err(ToolError::bad_args(
                    "argument `timeout_seconds`: must be a positive number of seconds",
                ))
            }
            Some(s) if s > max.as_secs_f64() => {
                return Err(ToolError::bad_args(format!(
                "argument `timeout_seconds`: {s} is above the maximum of {} s; pass at most that, \
                     or have the cell print progress (output keeps it alive)",
                max.as_secs_f64()
            )))
            }
            Some(s) => Duration::from_secs_f64(s),
        };
        Ok(CellLimits {
            idle_budget,
            grace: cfg.interrupt_grace(),
            max_output_bytes: cfg.max_output_bytes,
            max_images: cfg.max_images,
        })
    }
}

#[async_trait]
impl Tool for EvalTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            EVAL_TOOL,
            DESCRIPTION,
            Tier::Exec,
            tool_core::schema_for::<EvalArgs>(),
        )
        .serial()
    }

    fn describe_call(&self, args: &Value) -> String {
        let lang = args
            .get("language")
            .and_then(Value::as_str)
            .unwrap_or("python");
        let desc = args
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        let code = args.get("code").and_then(Value::as_str).unwrap_or("");
        let code = tool_core::format::cap_chars(code, 300);
        format!("run a {lang} cell ({desc}):\n{code}")
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EvalArgs = tool_core::parse_args(args)?;
        let description = args
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if description.is_empty() {
            return Err(ToolError::bad_args(
                "argument `description`: must not be empty; say in 5–10 words what the cell does",
            ));
        }
        let description = tool_core::format::cap_chars(&description, 120).into_owned();
        // A tool called from inside a cell that calls eval again would wait for
        // the cell that is waiting for it.
        if cx.call_stack.iter().filter(|n| *n == EVAL_TOOL).count() > 1 {
            return Err(ToolError::refused(
                "eval was called from inside an eval cell; a cell cannot start another cell (it would wait for \
                 itself); run the code directly in the first cell",
            ));
        }
        let language = args.language;
        if args.inspect {
            if !args.code.trim().is_empty() || args.reset || args.timeout_seconds.is_some() {
                return Err(ToolError::bad_args(
                    "argument `inspect`: pass it with `language` and `description` only — it lists what the \
                     kernel holds and runs no code",
                ));
            }
            return self.inspect(language, &description).await;
        }
        if args.code.trim().is_empty() {
            return Err(ToolError::bad_args(
                "argument `code`: must not be empty (or pass `inspect: true` to list the kernel's variables)",
            ));
        }
        let limits = self.limits(&args)?;

        let mut kernels = self.kernels.lock().await;
        let slot = kernels.entry(language).or_default();
        let mut notes = Vec::new();
        if args.reset {
            if let Some(mut k) = slot.kernel.take() {
                k.kill().await;
                notes.push(format!(
                    "(reset: the previous {language} kernel was stopped; this cell runs in a clean one)"
                ));
            }
            slot.lost = None;
        }
        if slot.kernel.is_none() {
            let kernel = self
                .factory
                .start(language)
                .await
                .map_err(|e| ToolError::Unavailable(e.0))?;
            let where_ = self
                .factory
                .sandbox()
                .map(|s| format!(", {}", s.describe()))
                .unwrap_or_default();
            let mut line = format!(
                "(started a {language} kernel: {} {} from {}{where_})",
                match language {
                    Language::Python => "Python",
                    Language::Javascript => "Node.js",
                },
                kernel.version.trim_start_matches('v'),
                if kernel.interpreter.origin == "$PATH" {
                    kernel.interpreter.program.display().to_string()
                } else {
                    format!(
                        "{} ({})",
                        kernel.interpreter.program.display(),
                        kernel.interpreter.origin
                    )
                }
            );
            if let Some(why) = slot.lost.take() {
                line = format!(
                    "(new {language} kernel: the previous one {why}; variables from earlier cells are gone — run \
                     the cells that defined them again)\n{line}"
                );
            }
            notes.push(line);
            slot.kernel = Some(kernel);
        }
        let kernel = slot.kernel.as_mut().expect("kernel just ensured");
        let pid = kernel.pid();
        let run = cell::run(kernel, &args.code, limits, cx).await;
        match &run.end {
            CellEnd::Killed { .. } => {
                slot.kernel = None;
                slot.lost = Some("was killed after an interrupt it did not stop for".into());
            }
            CellEnd::Died { how } => {
                slot.kernel = None;
                slot.lost = Some(format!("died ({how})"));
            }
            _ => {}
        }
        drop(kernels);
        format::result(
            run,
            &ResultContext {
                language,
                description,
                notes,
                kernel_pid: pid,
                max_budget_secs: self.factory.config().max_idle_timeout().as_secs_f64(),
            },
        )
    }
}
