//! The `debug` tool's arguments: one `op` and the fields it uses.

use crate::breakpoint::LineBreakpoint;
use schemars::JsonSchema;
use serde::Deserialize;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session is running, and where it stopped.
    Status,
    /// Set the breakpoints of `file` to `lines` (numbers, or objects with a condition, hit count or log message; empty clears the file); works before launch.
    Breakpoints,
    /// Set the function breakpoints to `functions` (names, or objects with a condition, hit count or log message; empty clears them); works before launch.
    FunctionBreakpoints,
    /// Choose which exceptions stop the program: `filters` from the adapter's own list (status shows it; debugpy raised/uncaught/userUnhandled, lldb cpp_throw/cpp_catch, delve unrecovered-panic); works before launch.
    ExceptionBreakpoints,
    /// Start `program` with `args`, stopped at your breakpoints.
    Launch,
    /// End the program and launch it again with the same arguments and the breakpoints set now.
    Restart,
    /// Attach to a debuggee listening on `port`, or to the running process `pid`.
    Attach,
    /// Run to the next stop.
    Continue,
    /// Stop the program where it is.
    Pause,
    /// Step over one line.
    StepOver,
    /// Step into the call on this line.
    StepIn,
    /// Run until the current function returns.
    StepOut,
    /// Thread ids and names.
    Threads,
    /// Frames of a stopped thread (capped at 30).
    Stack,
    /// Scopes of `frame_id`, each with a reference.
    Scopes,
    /// Children of `reference` (capped at 50, values at 400 characters).
    Variables,
    /// The local variables of `frame_id` (default: the top frame of the stopped thread) in one call, capped as `variables` is.
    Locals,
    /// Evaluate `expression` in `frame_id` (default: the top frame), in `context` (watch, repl or hover).
    Evaluate,
    /// Set the variable `name` to `value` in `reference` (default: the top frame's locals).
    SetVariable,
    /// The modules (executables, shared libraries, Python modules) the program has loaded (capped at 50).
    Modules,
    /// Disassemble `count` instructions (default 20) at `memory_reference` (default: the stopped thread's instruction pointer).
    Disassemble,
    /// Read `count` bytes (default 64, at most 1024) at `memory_reference`.
    ReadMemory,
    /// The program's stdout/stderr since the last `output` call.
    Output,
    /// End the session: the program, the adapter and all they started.
    Terminate,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Adapters => "adapters",
            Op::Status => "status",
            Op::Breakpoints => "breakpoints",
            Op::FunctionBreakpoints => "function_breakpoints",
            Op::ExceptionBreakpoints => "exception_breakpoints",
            Op::Launch => "launch",
            Op::Restart => "restart",
            Op::Attach => "attach",
            Op::Continue => "continue",
            Op::Pause => "pause",
            Op::StepOver => "step_over",
            Op::StepIn => "step_in",
            Op::StepOut => "step_out",
            Op::Threads => "threads",
            Op::Stack => "stack",
            Op::Scopes => "scopes",
            Op::Variables => "variables",
            Op::Locals => "locals",
            Op::Evaluate => "evaluate",
            Op::SetVariable => "set_variable",
            Op::Modules => "modules",
            Op::Disassemble => "disassemble",
            Op::ReadMemory => "read_memory",
            Op::Output => "output",
            Op::Terminate => "terminate",
        }
    }
}

/// How delve launches a Go program (its `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoMode {
    /// Build the package (or .go file) and run it.
    Debug,
    /// Run an executable built already.
    Exec,
    /// Build the package's tests and run them.
    Test,
}

/// How `evaluate` means its expression (DAP's `context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvaluateContext {
    /// An expression whose value is watched.
    Watch,
    /// What a user types in the debug console (debugpy: statements too; lldb: lldb commands).
    Repl,
    /// The value under the mouse: side-effect free where the adapter can tell.
    Hover,
}

impl EvaluateContext {
    pub fn name(self) -> &'static str {
        match self {
            EvaluateContext::Watch => "watch",
            EvaluateContext::Repl => "repl",
            EvaluateContext::Hover => "hover",
        }
    }
}

/// Arguments of the `debug` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// The operation.
    pub op: Op,
    /// breakpoints: the source file, relative to the workspace root.
    #[serde(default)]
    pub file: Option<String>,
    /// breakpoints: 1-based line numbers, or objects `{"line": 12, "condition": "x > 3", "hit_condition": "5", "log_message": "x={x}"}`; an empty list clears the file.
    #[serde(default)]
    #[schemars(with = "Option<Vec<crate::breakpoint::LineEntry>>")]
    pub lines: Option<Vec<LineBreakpoint>>,
    /// function_breakpoints: function names (`main.process`, `mean`), or objects `{"name": "foo", "condition": "n == 0"}`; an empty list clears them.
    #[serde(default)]
    #[schemars(with = "Option<Vec<crate::breakpoint::FunctionEntry>>")]
    pub functions: Option<Vec<crate::breakpoint::FunctionBreakpoint>>,
    /// exception_breakpoints: the adapter's filter ids to enable (an empty list stops on no exception).
    #[serde(default)]
    pub filters: Option<Vec<String>>,
    /// launch: the program (a .py, .go, .js, .mjs, .cjs or .java file, a Go package directory, or a compiled executable), relative to the workspace root.
    #[serde(default)]
    pub program: Option<String>,
    /// launch: the program's command-line arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// launch: text given to the program on its standard input, then end of file (debugpy, lldb, delve).
    #[serde(default)]
    pub stdin: Option<String>,
    /// launch: extra environment variables for the program.
    #[serde(default)]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    /// launch: the program's working directory, relative to the workspace root (default: its project folder).
    #[serde(default)]
    pub cwd: Option<String>,
    /// launch (delve): `debug` builds a package or .go file, `exec` runs a compiled Go program, `test` builds a package's tests; default: told from `program` (a `_test.go` file or `test` means test).
    #[serde(default)]
    pub mode: Option<GoMode>,
    /// launch: the test to run alone. Python: a pytest node id (`tests/test_stats.py::test_mean`, no `program` needed) or a test's name in the `program` test file (`test_mean`, `TestStats::test_mean`), run with pytest, or unittest where the project has no pytest. Rust (lldb): a test's name (`mean_of_six`, `tests::mean_of_one`) in the `program` file under tests/ or src/, built with cargo and run alone. Go (delve, mode test): a test function, e.g. `TestMean` (default: all of the package's tests). Java: a test method of the `program` test file (`meanOfSix`, `StatsTest#meanOfSix`) in a Maven project, run alone by JUnit's console launcher.
    #[serde(default)]
    pub test: Option<String>,
    /// launch (debugpy): run `python -m MODULE` with `args` instead of a program, e.g. `pytest` with args `["-k", "mean"]`; from `cwd` (default: the workspace root).
    #[serde(default)]
    pub module: Option<String>,
    /// launch/attach: the adapter id (debugpy, lldb, delve, dart, …); default: chosen from the program.
    #[serde(default)]
    pub adapter: Option<String>,
    /// attach: the TCP port the debuggee (or its debug server) listens on at 127.0.0.1.
    #[serde(default)]
    pub port: Option<u16>,
    /// attach: the id of a running process to attach to (lldb, delve; debugpy where ptrace and gdb allow), instead of `port`.
    #[serde(default)]
    pub pid: Option<u32>,
    /// continue/pause/step_*/stack: the thread; default the thread that stopped.
    #[serde(default)]
    pub thread_id: Option<u64>,
    /// scopes/evaluate/locals: a frame id from stack (valid for the current stop only).
    #[serde(default)]
    pub frame_id: Option<u64>,
    /// variables: a reference from scopes, variables or evaluate (current stop only).
    #[serde(default)]
    pub reference: Option<u64>,
    /// evaluate: the expression.
    #[serde(default)]
    pub expression: Option<String>,
    /// evaluate: how the expression is meant (default: the adapter's usual one).
    #[serde(default)]
    pub context: Option<EvaluateContext>,
    /// set_variable: the variable's name, as variables or locals list it.
    #[serde(default)]
    pub name: Option<String>,
    /// set_variable: the new value, an expression in the program's language.
    #[serde(default)]
    pub value: Option<String>,
    /// disassemble/read_memory: a memory reference (an address like `0x4a2f10`, or one an answer gave).
    #[serde(default)]
    pub memory_reference: Option<String>,
    /// disassemble: instructions (default 20, at most 200); read_memory: bytes (default 64, at most 1024).
    #[serde(default)]
    pub count: Option<u64>,
    /// launch/attach/restart/continue/pause/step_*: how long to wait for the next stop (default 30); evaluate: how long the expression may run (default 15).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
}
