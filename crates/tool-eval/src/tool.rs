//! The `eval` tool: its arguments, its spec, and the kernels it keeps (one per
//! language, started on first use, replaced when lost or reset).

use crate::bridge::EVAL_TOOL;
use crate::cell::{self, CellEnd, CellLimits};
use crate::config::Language;
use crate::format::{self, ResultContext};
use crate::job::{Job, JobState, Look};
use crate::kernel::{KernelFactory, KernelProcess};
use crate::output::Saver;
use crate::scratch::Scratch;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tool_core::{async_trait, CallContext, Tool, ToolError, ToolOutput, ToolSpec};

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
    /// Start the cell and answer at once with a job id; the cell keeps
    /// running (under its idle budget) while other calls are made.
    #[serde(default)]
    pub background: bool,
    /// Instead of running code, look at background job `job`: the output
    /// since the last look, and its state (running, done, failed,
    /// interrupted).
    #[serde(default)]
    pub job: Option<u64>,
    /// With `job`: interrupt that job, then report how it ended.
    #[serde(default)]
    pub cancel: bool,
}

/// How many variables `inspect` describes at most.
const INSPECT_MAX: usize = 100;

/// One language's kernel, and why the previous one is gone, if it is.
#[derive(Default)]
struct KernelSlot {
    /// `None` while a background job holds it, or when there is none.
    kernel: Option<KernelProcess>,
    /// Said in the next result, once.
    lost: Option<String>,
    /// The background job running on this language's kernel.
    job: Option<u64>,
}

/// The kernels and the background jobs of a run.
#[derive(Default)]
struct Kernels {
    slots: HashMap<Language, KernelSlot>,
    jobs: BTreeMap<u64, Job>,
    last_job: u64,
}

impl Kernels {
    /// Take back the kernels of background jobs that ended.
    async fn reap(&mut self) {
        for slot in self.slots.values_mut() {
            let Some(id) = slot.job else { continue };
            let Some(job) = self.jobs.get_mut(&id) else {
                slot.job = None;
                continue;
            };
            if !job.is_finished() {
                continue;
            }
            if let Some(back) = job.reap(Duration::from_secs(1)).await {
                slot.job = None;
                match back {
                    Ok(kernel) => slot.kernel = Some(kernel),
                    Err(why) => slot.lost = Some(why),
                }
            }
        }
    }

    /// Refuse work on `language` while a background job holds its kernel.
    fn refuse_if_busy(&self, language: Language, what: &str) -> Result<(), ToolError> {
        let Some(job) = self
            .slots
            .get(&language)
            .and_then(|s| s.job)
            .and_then(|id| self.jobs.get(&id))
        else {
            return Ok(());
        };
        Err(ToolError::refused(format!(
            "{what}: the {language} kernel is running background job {} ({}, {} so far). Look at it with \
             {{\"job\": {0}}}, or stop it with {{\"job\": {0}, \"cancel\": true}}; then run this again",
            job.id,
            job.description,
            format::secs(job.elapsed()),
        )))
    }
}

/// The `eval` tool, bound to one run's kernel factory.
pub struct EvalTool {
    factory: Arc<KernelFactory>,
    kernels: tokio::sync::Mutex<Kernels>,
    scratch: Arc<Scratch>,
}

impl std::fmt::Debug for EvalTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalTool")
            .field("factory", &self.factory)
            .finish_non_exhaustive()
    }
}

const DESCRIPTION: &str = include_str!("../descriptions/eval.md");

/// The call's description, one line of at most 120 characters; refused
/// when empty, or when eval is called from inside an eval cell.
fn call_description(args: &EvalArgs, cx: &CallContext) -> Result<String, ToolError> {
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
    // A tool called from inside a cell that calls eval again would wait for
    // the cell that is waiting for it.
    if cx.call_stack.iter().filter(|n| *n == EVAL_TOOL).count() > 1 {
        return Err(ToolError::refused(
            "eval was called from inside an eval cell; a cell cannot start another cell (it would wait for \
             itself); run the code directly in the first cell",
        ));
    }
    Ok(tool_core::format::cap_chars(&description, 120).into_owned())
}

impl EvalTool {
    /// A kernel in `slot`, started when there is none (or `reset` stopped
    /// it): the notes the answer begins with, and whether the variables of
    /// earlier cells are gone.
    async fn ensure_kernel(
        &self,
        slot: &mut KernelSlot,
        language: Language,
        reset: bool,
    ) -> Result<(Vec<String>, bool), ToolError> {
        let mut notes = Vec::new();
        let mut earlier_variables_lost = false;
        if reset {
            if let Some(mut k) = slot.kernel.take() {
                k.kill().await;
                earlier_variables_lost = true;
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
                earlier_variables_lost = true;
                line = format!(
                    "(new {language} kernel: the previous one {why}; variables from earlier cells are gone — run \
                     the cells that defined them again)\n{line}"
                );
            }
            notes.push(line);
            slot.kernel = Some(kernel);
        }
        Ok((notes, earlier_variables_lost))
    }

    pub fn new(factory: Arc<KernelFactory>) -> Self {
        EvalTool {
            factory,
            kernels: tokio::sync::Mutex::new(Kernels::default()),
            scratch: Arc::new(Scratch::new()),
        }
    }

    /// The pids of the kernels running now (for tests and `doctor`).
    pub async fn kernel_pids(&self) -> Vec<(Language, u32)> {
        let kernels = self.kernels.lock().await;
        let mut out: Vec<(Language, u32)> = kernels
            .slots
            .iter()
            .filter_map(|(l, s)| match (&s.kernel, s.job) {
                (Some(k), _) => Some((*l, k.pid())),
                (None, Some(id)) => kernels.jobs.get(&id).map(|j| (*l, j.kernel_pid)),
                (None, None) => None,
            })
            .collect();
        out.sort_by_key(|(l, _)| l.as_str());
        out
    }

    /// The run's scratch folder, once something was saved in it.
    pub fn scratch_dir(&self) -> Option<std::path::PathBuf> {
        self.scratch.path()
    }

    /// Stop every kernel now (the run ends). Dropping the tool does the same.
    pub async fn shutdown(&self) {
        let mut kernels = self.kernels.lock().await;
        // Dropping a job aborts its task, which kills its kernel.
        kernels.jobs.clear();
        for slot in kernels.slots.values_mut() {
            slot.job = None;
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
        kernels.reap().await;
        kernels.refuse_if_busy(language, "inspect")?;
        let Some(kernel) = kernels
            .slots
            .get_mut(&language)
            .and_then(|s| s.kernel.as_mut())
        else {
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

    /// Look at background job `id`, after interrupting it if `cancel`.
    async fn look(&self, id: u64, cancel: bool) -> Result<ToolOutput, ToolError> {
        let mut kernels = self.kernels.lock().await;
        kernels.reap().await;
        let Some(job) = kernels.jobs.get_mut(&id) else {
            let known: Vec<String> = kernels
                .jobs
                .values()
                .map(|j| format!("{} ({} {})", j.id, j.language, j.state().as_str()))
                .collect();
            return Err(ToolError::bad_args(format!(
                "argument `job`: there is no background job {id} in this run; {}",
                if known.is_empty() {
                    "none was started (start one with `background: true`)".to_string()
                } else {
                    format!("its jobs are {}", known.join(", "))
                }
            )));
        };
        if cancel && job.state() == JobState::Running {
            job.cancel();
            // The cell stops on the interrupt, or its kernel is killed after
            // the grace period: either way it ends within that.
            let within = self.factory.config().interrupt_grace() + Duration::from_secs(5);
            let language = job.language;
            if let Some(back) = job.reap(within).await {
                let slot = kernels.slots.entry(language).or_default();
                slot.job = None;
                match back {
                    Ok(kernel) => slot.kernel = Some(kernel),
                    Err(why) => slot.lost = Some(why),
                }
            }
        }
        let job = kernels.jobs.get_mut(&id).expect("looked up above");
        let (language, job_description) = (job.language, job.description.clone());
        let label = format!("job {id}: {job_description}");
        match job.look() {
            Look::Running { elapsed, output } => {
                let empty = output.is_empty();
                let preamble = format!(
                    "{}\n(job {id} is running, {} so far; {})\n",
                    format::label(language, &label),
                    format::secs(elapsed),
                    if empty {
                        "no output since the last look"
                    } else {
                        "its output since the last look:"
                    }
                );
                let prefix = format!("{language}-job{id}");
                let rendered = output.render(
                    preamble,
                    Saver {
                        scratch: &self.scratch,
                        prefix: &prefix,
                    },
                );
                Ok(ToolOutput {
                    content: rendered.content,
                    structured: Some(serde_json::json!({
                        "job": id,
                        "language": language.as_str(),
                        "state": "running",
                        "elapsed_ms": elapsed.as_millis() as u64,
                        "dropped_output_bytes": rendered.dropped_bytes,
                    })),
                })
            }
            Look::Ended { state, run } => {
                let kernel_pid = job.kernel_pid;
                let note = format!(
                    "(job {id} {}: {} after {}; its output since the last look:)",
                    if cancel { "was cancelled" } else { "ended" },
                    state.as_str(),
                    format::secs(run.elapsed)
                );
                let mut out = format::result(
                    run,
                    &ResultContext {
                        language,
                        description: label,
                        notes: vec![note],
                        kernel_pid,
                        earlier_variables_lost: false,
                        max_budget_secs: self.factory.config().max_idle_timeout().as_secs_f64(),
                        scratch: self.scratch.clone(),
                    },
                )?;
                if let Some(Value::Object(m)) = &mut out.structured {
                    m.insert("job".into(), id.into());
                    m.insert("state".into(), state.as_str().into());
                }
                Ok(out)
            }
            Look::Shown { state } => Ok(ToolOutput::text(format!(
                "{}\n(job {id} ended ({}); its end was shown in an earlier look)",
                format::label(language, &label),
                state.as_str()
            ))
            .with_structured(serde_json::json!({"job": id, "language": language.as_str(), "state": state.as_str()}))),
        }
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
        crate::EVAL
            .spec(
                tool_core::tool::paragraph(DESCRIPTION),
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
        let description = call_description(&args, cx)?;
        let language = args.language;
        if let Some(id) = args.job {
            if !args.code.trim().is_empty() || args.inspect || args.background || args.reset {
                return Err(ToolError::bad_args(
                    "argument `job`: pass it with `description` (and `cancel` to stop the job) only — it looks at \
                     a background job and runs no code",
                ));
            }
            return self.look(id, args.cancel).await;
        }
        if args.cancel {
            return Err(ToolError::bad_args(
                "argument `cancel`: goes with `job`, the id of the background job to stop",
            ));
        }
        if args.inspect {
            if !args.code.trim().is_empty()
                || args.reset
                || args.background
                || args.timeout_seconds.is_some()
            {
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
        kernels.reap().await;
        kernels.refuse_if_busy(
            language,
            if args.background {
                "background cell not started"
            } else {
                "cell not run"
            },
        )?;
        let slot = kernels.slots.entry(language).or_default();
        let (notes, earlier_variables_lost) =
            self.ensure_kernel(slot, language, args.reset).await?;
        if args.background {
            let kernel = slot.kernel.take().expect("kernel just ensured");
            let pid = kernel.pid();
            kernels.last_job += 1;
            let id = kernels.last_job;
            let job = Job::start(id, kernel, args.code, limits, cx, description.clone());
            kernels.jobs.insert(id, job);
            kernels.slots.entry(language).or_default().job = Some(id);
            let mut text = format::label(language, &description);
            text.push('\n');
            for n in &notes {
                text.push_str(n);
                text.push('\n');
            }
            text.push_str(&format!(
                "(started background job {id}; look at it with {{\"job\": {id}}}, stop it with {{\"job\": {id}, \
                 \"cancel\": true}}; other {language} cells are refused until it ends)"
            ));
            return Ok(ToolOutput::text(text).with_structured(serde_json::json!({
                "job": id,
                "language": language.as_str(),
                "state": "running",
                "kernel_pid": pid,
            })));
        }
        let kernel = slot.kernel.as_mut().expect("kernel just ensured");
        let pid = kernel.pid();
        let shared = Arc::new(std::sync::Mutex::new(crate::output::CellOutput::new(
            limits.max_output_bytes,
            limits.max_images,
        )));
        let run = cell::run(kernel, &args.code, limits, cx, &shared).await;
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
                earlier_variables_lost,
                max_budget_secs: self.factory.config().max_idle_timeout().as_secs_f64(),
                scratch: self.scratch.clone(),
            },
        )
    }
}
