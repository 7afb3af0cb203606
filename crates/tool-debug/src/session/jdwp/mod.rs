//! The third backend: Java programs under the JDK's own JDWP agent, driven
//! through the same session, ops and answers as the DAP adapters.
//!
//! The seam is the Node.js backend's ([`super::inspector`]): the JVM speaks
//! no DAP, so this module is a DAP adapter that runs inside this process.
//! [`start`] compiles the `.java` program with the JDK's `javac -g` into
//! the session's scratch folder, runs `java -agentlib:jdwp=…,suspend=y,
//! address=127.0.0.1:0`, reads the agent's port from the JVM's stdout,
//! connects and shakes hands ([`wire`]), and serves DAP on one end of an
//! in-memory pipe ([`bridge`]); the session's
//! [`crate::transport::DapClient`] gets the other end. Nothing above the
//! transport knows which backend it drives.
//!
//! Invariants: the JVM is the session's adapter process (its own process
//! group, killed with the session), and its exit is the program's: the
//! session reads the exit code from its status
//! ([`crate::adapters::Adapter::process_is_debuggee`]); the compile and
//! the wait for the agent's line are bounded and quote what `javac` or the
//! JVM printed when they fail; the agent's own line reaches neither the
//! program's output nor the adapter log.

pub mod bridge;
pub mod classfile;
pub mod commands;
pub mod values;
pub mod wire;

use crate::adapters::{java, java_tests};
use crate::session::inproc::{started, Started};
use crate::session::lines::{LineOutput, Stream};
use crate::session::{LaunchPlan, SessionLimits};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tool_core::process::{ChildSpec, Io, SharedOutput};
use tool_core::ToolError;

/// Strings of the launch arguments under `key`.
fn strings(args: &Value, key: &str) -> Vec<String> {
    args.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// Compile the program and start it under the JDWP agent; serve DAP for it.
pub(crate) async fn start(
    plan: &LaunchPlan,
    limits: &SessionLimits,
    output: &Arc<LineOutput>,
    adapter_log: &SharedOutput,
) -> Result<Started, ToolError> {
    if plan.request == "attach" {
        return attach(plan, limits).await;
    }
    let java = plan
        .adapter
        .command
        .first()
        .ok_or_else(|| ToolError::failed("the java entry has no command line"))?
        .clone();
    let args = &plan.arguments;
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(PathBuf::from);
    let (Some(program), Some(classes)) = (text("program"), text("classesDir")) else {
        return Err(ToolError::failed(
            "the java launch has no program or classes folder",
        ));
    };
    let cwd = text("cwd").unwrap_or_else(|| plan.adapter.project_dir.clone());
    let roots: Vec<PathBuf> = strings(args, "sourceRoots")
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let mut class_dirs = vec![classes.clone()];
    class_dirs.extend(strings(args, "classpath").into_iter().map(PathBuf::from));
    // A JUnit test runs with the project's test classpath, under the
    // console launcher of its JUnit.
    let (jars, launcher) = match args.get("junit").and_then(Value::as_str) {
        Some(_) => {
            let jars = maven_test_classpath(plan, &classes, limits.handshake).await?;
            let launcher = java_tests::launcher_jar(&jars).map_err(ToolError::refused)?;
            (jars, Some(launcher))
        }
        None => (Vec::new(), None),
    };
    let join = |paths: Vec<&PathBuf>| {
        std::env::join_paths(paths)
            .map_err(|e| ToolError::failed(format!("a classpath entry cannot be joined: {e}")))
    };
    let compile_classpath = join(class_dirs.iter().chain(&jars).collect())?;
    let classpath = join(launcher.iter().chain(&class_dirs).chain(&jars).collect())?;
    let mut sourcepath: Vec<PathBuf> = strings(args, "sourcepath")
        .into_iter()
        .map(PathBuf::from)
        .collect();
    if sourcepath.is_empty() {
        sourcepath.push(text("sourceRoot").unwrap_or_else(|| cwd.clone()));
    }
    let sourcepath = join(sourcepath.iter().collect())?;
    // A class a build compiled runs as it is.
    if args.get("compiled").and_then(Value::as_bool) != Some(true) {
        compile(
            plan,
            &java,
            &program,
            &sourcepath,
            &classes,
            &compile_classpath,
            limits.handshake,
        )
        .await?;
    }
    let line = java::command_line(&java, args, &classpath);
    let spec = crate::session::inproc::debuggee_spec(plan, &line, &cwd);
    let mut child = spec.spawn().map_err(|e| {
        ToolError::failed(format!(
            "{e}; check `debug adapters` for what resolves here"
        ))
    })?;
    let stdout = child.stdout.take().expect("stdout piped");
    let stderr = child.stderr.take().expect("stderr piped");
    let stdin = child.stdin.take().expect("stdin piped");
    let mut stdout = BufReader::new(stdout);
    let Some(port) = agent_port(&mut stdout, limits.request, adapter_log).await else {
        child.terminate(Duration::from_millis(200)).await;
        let mut err = String::new();
        let mut stderr = stderr;
        let _ =
            tokio::time::timeout(Duration::from_millis(500), stderr.read_to_string(&mut err)).await;
        adapter_log.lock().expect("log lock").push(err.as_bytes());
        let log = adapter_log.lock().expect("log lock").tail(2000);
        return Err(ToolError::failed(format!(
            "`{}` did not print the port of its JDWP agent within {} ms; its output: {}",
            java.to_string_lossy(),
            limits.request.as_millis(),
            log.trim()
        )));
    };
    let (drained_tx, drained) = watch::channel(0usize);
    let drained_tx = Arc::new(drained_tx);
    let mut tasks = vec![
        capture(
            stdout,
            output.clone(),
            Stream::AdapterStdout,
            drained_tx.clone(),
        ),
        capture(stderr, output.clone(), Stream::AdapterStderr, drained_tx),
    ];
    tasks.extend(crate::session::inproc::feed_stdin(
        plan.adapter_stdin.clone(),
        stdin,
    ));
    let (jdwp, jdwp_events) = match connect(port, limits.request).await {
        Ok(c) => c,
        Err(why) => {
            child.terminate(Duration::from_millis(200)).await;
            for t in &tasks {
                t.abort();
            }
            return Err(ToolError::failed(why));
        }
    };
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let places = bridge::Places {
        source_roots: roots,
        class_dirs,
    };
    tasks.extend(bridge::Bridge::spawn(
        jdwp,
        jdwp_events,
        theirs,
        drained,
        places,
    ));
    Ok(started(Some(child), ours, tasks))
}

/// Attach to a JVM someone started with its JDWP agent listening on
/// 127.0.0.1:`port`: the same bridge, with no process of ours (its output
/// stays where it goes).
async fn attach(plan: &LaunchPlan, limits: &SessionLimits) -> Result<Started, ToolError> {
    let args = &plan.arguments;
    let port = args
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(|| ToolError::bad_args("attaching to a JVM needs `port`"))?;
    let (jdwp, jdwp_events) = connect(port, limits.request)
        .await
        .map_err(|why| {
            ToolError::failed(format!(
                "{why}; is it a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,address=127.0.0.1:{port}?"
            ))
        })?;
    // Nothing of its output reaches us: the pipes count as drained.
    let (_, drained) = watch::channel(2usize);
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let places = bridge::Places {
        source_roots: strings(args, "sourceRoots")
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        class_dirs: strings(args, "classpath")
            .into_iter()
            .map(PathBuf::from)
            .collect(),
    };
    let tasks = bridge::Bridge::spawn(jdwp, jdwp_events, theirs, drained, places);
    Ok(started(None, ours, tasks))
}

/// Connect to the JDWP agent on 127.0.0.1:`port` and shake hands, each
/// within `within`.
async fn connect(
    port: u16,
    within: Duration,
) -> Result<(Arc<wire::JdwpClient>, mpsc::UnboundedReceiver<Vec<u8>>), String> {
    let tcp = tokio::time::timeout(within, tokio::net::TcpStream::connect(("127.0.0.1", port)))
        .await
        .map_err(|_| format!("connecting to the JDWP agent on 127.0.0.1:{port} timed out"))?
        .map_err(|e| format!("cannot connect to the JDWP agent on 127.0.0.1:{port}: {e}"))?;
    wire::JdwpClient::start(tcp, within)
        .await
        .map_err(|e| e.to_string())
}

/// The port the JDWP agent prints on the JVM's stdout (`Listening for
/// transport dt_socket at address: N`), read within `within`; the lines
/// before it go to the adapter log.
async fn agent_port<R>(stdout: &mut R, within: Duration, log: &SharedOutput) -> Option<u16>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    tokio::time::timeout(within, async {
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            if let Some(port) = java::agent_port(&line) {
                return Some(port);
            }
            log.lock().expect("log lock").push(line.as_bytes());
        }
    })
    .await
    .ok()
    .flatten()
}

/// Run `spec` to its end within `within`: whether it succeeded, and what
/// it printed (stdout, then stderr); `None` when the bound ran out (it is
/// killed then).
async fn run_bounded(spec: ChildSpec, within: Duration) -> std::io::Result<Option<(bool, String)>> {
    let mut child = spec
        .stdin(Io::Null)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe)
        .spawn()?;
    let mut out = child.stdout.take().expect("stdout piped");
    let mut err = child.stderr.take().expect("stderr piped");
    let run = async {
        let mut o = String::new();
        let mut e = String::new();
        let _ = tokio::join!(out.read_to_string(&mut o), err.read_to_string(&mut e));
        (child.wait().await, o + &e)
    };
    let Ok((status, printed)) = tokio::time::timeout(within, run).await else {
        child.kill().await;
        return Ok(None);
    };
    Ok(Some((status.is_ok_and(|s| s.success()), printed)))
}

/// The project's test classpath (its jars, test scope) as Maven resolves
/// it offline: `mvn -o -q dependency:build-classpath` in the project
/// folder, written to a file beside `classes`. Refused, quoting Maven,
/// when there is no pom.xml or Maven cannot resolve it.
async fn maven_test_classpath(
    plan: &LaunchPlan,
    classes: &Path,
    within: Duration,
) -> Result<Vec<PathBuf>, ToolError> {
    let project = plan
        .arguments
        .get("buildDir")
        .and_then(Value::as_str)
        .map_or_else(|| plan.adapter.project_dir.clone(), PathBuf::from);
    let project = &project;
    if project.join("src/main/java/module-info.java").is_file()
        && !project.join("target/classes").is_dir()
    {
        return Err(ToolError::refused(format!(
            "the main sources of {} are a module (src/main/java/module-info.java), so a test compiles against their built classes, and target/classes is not there: build them first (`mvn -o -q compile` in that folder)",
            project.display()
        )));
    }
    if !project.join("pom.xml").is_file() {
        let gradle = ["build.gradle", "build.gradle.kts"]
            .iter()
            .any(|f| project.join(f).is_file());
        return Err(ToolError::refused(if gradle {
            format!(
                "a JUnit test's classpath is read from Maven, and {} is a Gradle build: its test classpath is not read yet; run the test with `gradle test --debug-jvm` and attach with `port`",
                project.display()
            )
        } else {
            format!(
                "a JUnit test needs its project's test classpath, and {} has no pom.xml: put the test in a Maven project that declares JUnit",
                project.display()
            )
        }));
    }
    let Some(mvn) =
        tool_core::programs::find_program("mvn", project, &[], Some(plan.search_path.as_os_str()))
    else {
        return Err(ToolError::refused(
            "a JUnit test's classpath is read with Maven, and `mvn` is not on PATH: install Maven (Debian's `maven`)",
        ));
    };
    let out = classes.with_file_name("test-classpath.txt");
    let mut spec = ChildSpec::new(&mvn)
        .args([
            "-o",
            "-q",
            "-B",
            "-Dstyle.color=never",
            "dependency:build-classpath",
            "-Dmdep.includeScope=test",
        ])
        .arg(format!("-Dmdep.outputFile={}", out.display()))
        .cwd(project)
        .env("PATH", &plan.search_path);
    // The run's environment: a harness's MAVEN_OPTS (its local
    // repository) reaches Maven.
    for (k, v) in plan.adapter.env.iter().chain(&plan.env) {
        spec = spec.env(k, v);
    }
    let ran = run_bounded(spec, within)
        .await
        .map_err(|e| ToolError::failed(format!("cannot run {}: {e}", mvn.display())))?;
    let Some((ok, printed)) = ran else {
        return Err(ToolError::timed_out(format!(
            "`mvn -o dependency:build-classpath` did not finish within {} s in {}",
            within.as_secs(),
            project.display()
        )));
    };
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    if !ok {
        let errors: Vec<&str> = printed
            .lines()
            .filter(|l| l.starts_with("[ERROR]") && !l.trim_end().ends_with("[ERROR]"))
            .take(6)
            .collect();
        return Err(ToolError::refused(format!(
            "Maven could not resolve the test classpath of {} offline (`mvn -o dependency:build-classpath`), so nothing was started:\n{}",
            project.display(),
            tool_core::format::cap_chars(errors.join("\n").trim(), 3000)
        )));
    }
    Ok(std::env::split_paths(text.trim())
        .filter(|p| !p.as_os_str().is_empty())
        .collect())
}

/// `javac -g -d CLASSES -sourcepath ROOTS -cp CLASSPATH PROGRAM`, bounded
/// by `within`; a failure quotes what javac printed.
async fn compile(
    plan: &LaunchPlan,
    java: &OsString,
    program: &Path,
    sourcepath: &OsString,
    classes: &Path,
    classpath: &OsString,
    within: Duration,
) -> Result<(), ToolError> {
    let javac = Path::new(java).with_file_name("javac");
    std::fs::create_dir_all(classes)
        .map_err(|e| ToolError::failed(format!("cannot make {}: {e}", classes.display())))?;
    let spec = ChildSpec::new(&javac)
        .arg("-g")
        .arg("-encoding")
        .arg("UTF-8")
        .arg("-d")
        .arg(classes)
        .arg("-sourcepath")
        .arg(sourcepath)
        .arg("-cp")
        .arg(classpath)
        .arg(program)
        .cwd(&plan.adapter.project_dir)
        .env("PATH", &plan.search_path);
    let ran = run_bounded(spec, within)
        .await
        .map_err(|e| ToolError::failed(format!("cannot run {}: {e}", javac.display())))?;
    let Some((ok, printed)) = ran else {
        return Err(ToolError::timed_out(format!(
            "javac did not finish compiling {} within {} s",
            program.display(),
            within.as_secs()
        )));
    };
    if ok {
        return Ok(());
    }
    // Refused: the program is bad input, and nothing was started.
    Err(ToolError::refused(format!(
        "javac could not compile {}, so nothing was started:\n{}",
        program.display(),
        tool_core::format::cap_chars(printed.trim_end(), 3000)
    )))
}

/// Copy one of the JVM's pipes into the program's output as `stream`;
/// count the pipe as drained at its end.
fn capture<R>(
    reader: R,
    out: Arc<LineOutput>,
    stream: Stream,
    drained: Arc<watch::Sender<usize>>,
) -> JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let copy = crate::session::lines::capture_lines(reader, out, stream);
    tokio::spawn(async move {
        let _ = copy.await;
        drained.send_modify(|n| *n += 1);
    })
}
