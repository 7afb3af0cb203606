//! Java (`java -agentlib:jdwp=…`): no DAP adapter for Java is on the
//! package registries, so the program runs under the JDK's own JDWP agent
//! and [`crate::session::jdwp`] translates. What is Java's here: which JDK
//! (the one `tool_core::jdk` finds, with `javac` beside its `java`), what
//! a `.java` program compiles to (its package, its main class, its source
//! root), the JVM's command line and the line its agent prints, and what
//! an attach to a JVM's agent on a port looks in. A JUnit test (`test`)
//! is [`super::java_tests`]'s.

use super::{Adapter, LaunchInput, LaunchTarget, ProgramLaunch, RequestArguments, StdinRoute};
use crate::catalog::{AdapterSpec, Catalog, CommandLine, ResolvedAdapter};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The oldest JDK the backend drives (JDWP's `SourceNameMatch` filter and
/// `address=127.0.0.1:0` need 9; 11 is the oldest still maintained).
const MIN_JDK: u32 = 11;

/// Java, through the JDK's JDWP agent.
pub struct Java;

impl Adapter for Java {
    /// The `java` of the JDK `tool_core::jdk` finds on this machine
    /// (`$JAVA_HOME`, the `java` on the search path, the usual folders),
    /// which must have `javac` beside it.
    fn command(
        &self,
        catalog: &Catalog,
        _spec: &AdapterSpec,
        _project: &Path,
        _root: &Path,
    ) -> Result<CommandLine, String> {
        let java_home = catalog
            .env()
            .iter()
            .find(|(k, _)| k == "JAVA_HOME")
            .map(|(_, v)| OsString::from(v))
            .or_else(|| std::env::var_os("JAVA_HOME"));
        let jdk = tool_core::jdk::find(MIN_JDK, java_home.as_ref(), Some(catalog.search_path()))?;
        let javac = jdk.bin().join("javac");
        if !tool_core::programs::is_executable(&javac) {
            return Err(format!(
                "the Java at {} ({}) has no javac: a JDK, not a JRE, is needed to compile the program",
                jdk.home.display(),
                jdk.version
            ));
        }
        Ok((
            vec![jdk.bin().join("java").into_os_string()],
            None,
            Vec::new(),
        ))
    }

    fn launch_target(&self, l: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        if l.path.extension().is_some_and(|e| e == "class") && classes_root(l.path).is_some() {
            return l.plain();
        }
        if l.path.is_dir() || l.path.extension().is_none_or(|e| e != "java") {
            return Err(format!(
                "`{}` is not a Java source file; the java adapter launches a .java file with a main method (compiled with javac -g)",
                l.program
            ));
        }
        match (l.mode, l.test) {
            (None, Some(test)) => {
                let source = std::fs::read_to_string(l.path)
                    .map_err(|e| format!("cannot read the test file {}: {e}", l.program))?;
                let name = super::java_tests::selection(l.program, l.path, &source, test)?;
                Ok(LaunchTarget::NamedTest {
                    label: format!("junit {name}"),
                    name,
                })
            }
            _ => l.plain(),
        }
    }

    /// The JVM is the debuggee: its standard input is the adapter's.
    fn stdin_route(&self) -> Option<StdinRoute> {
        Some(StdinRoute::AdapterStdin)
    }

    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        if let Some((classes, main_class)) = classes_root(input.program) {
            return Ok(compiled_launch(input, &classes, main_class));
        }
        let source = std::fs::read_to_string(input.program)?;
        let package = package_of(&source);
        let root = source_root(input.program, package.as_deref());
        let stem = input
            .program
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut main_class = match &package {
            Some(p) => format!("{p}.{stem}"),
            None => stem,
        };
        // A test's project is its build's folder (the adapter's marker may
        // be the test file's own folder: a lone `*.java`).
        let build = input
            .named_test
            .and_then(|_| super::java_tests::build_folder(input.program));
        let project = build.as_ref().unwrap_or(&input.adapter.project_dir);
        // Where frames' sources are looked for.
        let mut source_roots = vec![root.clone()];
        for dir in ["src/main/java", "src/test/java"] {
            let d = project.join(dir);
            if d.is_dir() && !source_roots.contains(&d) {
                source_roots.push(d);
            }
        }
        // javac reads the program's own root; a JUnit test's compile reads
        // the Maven layout's main sources too, unless they are a module's
        // (a `module-info.java` there would turn the compile into a
        // module's: seen on gson; its `target/classes` serve then).
        let mut sourcepath = vec![root.clone()];
        let mut args = input.args.clone();
        let mut junit = None;
        if let Some(selection) = input.named_test {
            let main = project.join("src/main/java");
            if main.is_dir() && !main.join("module-info.java").is_file() && main != root {
                sourcepath.push(main);
            }
            args.splice(0..0, super::java_tests::console_args(selection));
            main_class = super::java_tests::CONSOLE_LAUNCHER.to_string();
            junit = Some(selection);
        }
        // A Maven build's classes, when there: the program may use them.
        let classpath: Vec<PathBuf> = ["target/classes"]
            .iter()
            .map(|d| project.join(d))
            .filter(|d| d.is_dir())
            .collect();
        // The classes go to a scratch folder, not into the workspace.
        let dir = super::scratch_dir()?;
        Ok(RequestArguments {
            arguments: json!({
                "program": input.program,
                "mainClass": main_class,
                "args": args,
                "cwd": input.cwd,
                "env": input.env,
                "classesDir": dir.join("classes"),
                "classpath": classpath,
                "sourceRoot": root,
                "sourcepath": sourcepath,
                "sourceRoots": source_roots,
                "junit": junit,
                "buildDir": build,
            }),
            scratch_dir: Some(dir),
            connect_to: None,
        })
    }

    /// A JVM started with its JDWP agent listening on 127.0.0.1:`port`:
    /// the project's source folders and classes are where its frames'
    /// sources and its breakpoints' class files are looked for.
    fn attach_port(&self, adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        let project = &adapter.project_dir;
        let mut source_roots = vec![project.clone()];
        source_roots.extend(
            ["src/main/java", "src/test/java"]
                .iter()
                .map(|d| project.join(d))
                .filter(|d| d.is_dir()),
        );
        let classpath: Vec<PathBuf> = ["target/classes", "target/test-classes"]
            .iter()
            .map(|d| project.join(d))
            .filter(|d| d.is_dir())
            .collect();
        RequestArguments::plain(json!({
            "port": port,
            "sourceRoots": source_roots,
            "classpath": classpath,
        }))
    }

    fn attach_pid(
        &self,
        _adapter: &ResolvedAdapter,
        _pid: u32,
    ) -> Result<RequestArguments, String> {
        Err("the java backend attaches to a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:PORT (pass that `port`), not to a pid".to_string())
    }

    fn process_is_debuggee(&self) -> bool {
        true
    }
}

/// The launch of a class a build compiled: no compile, its classes folder
/// as the classpath, the project folder and the Maven layout's source
/// folders for its frames' sources.
fn compiled_launch(
    input: &LaunchInput<'_>,
    classes: &Path,
    main_class: String,
) -> RequestArguments {
    let project = &input.adapter.project_dir;
    let mut source_roots = vec![project.clone()];
    source_roots.extend(
        ["src/main/java", "src/test/java"]
            .iter()
            .map(|d| project.join(d))
            .filter(|d| d.is_dir()),
    );
    RequestArguments::plain(json!({
        "program": input.program,
        "mainClass": main_class,
        "args": input.args,
        "cwd": input.cwd,
        "env": input.env,
        "classesDir": classes,
        "compiled": true,
        "classpath": [],
        "sourceRoots": source_roots,
    }))
}

/// For a class file under a build's `target/classes` (or Gradle's
/// `build/classes/java/main`): that folder and the class's name
/// (`target/classes/a/b/Main.class` → `a.b.Main`). Nested classes
/// (`Outer$Inner.class`) are not main classes here.
pub fn classes_root(class_file: &Path) -> Option<(PathBuf, String)> {
    let stem = class_file.file_stem()?.to_str()?;
    if stem.contains('$') {
        return None;
    }
    let mut parts = vec![stem.to_string()];
    let mut dir = class_file.parent()?;
    loop {
        let ends = |tail: &[&str]| {
            let names: Vec<&str> = dir
                .components()
                .rev()
                .take(tail.len())
                .filter_map(|c| c.as_os_str().to_str())
                .collect();
            names.iter().rev().eq(tail.iter())
        };
        if ends(&["target", "classes"]) || ends(&["build", "classes", "java", "main"]) {
            parts.reverse();
            return Some((dir.to_path_buf(), parts.join(".")));
        }
        parts.push(dir.file_name()?.to_str()?.to_string());
        dir = dir.parent()?;
    }
}

/// The class file a build compiled for the class name `name`
/// (`com.example.Main`) under the workspace `root`: in its
/// `target/classes` or a module's (one folder down), Maven's layout, or
/// Gradle's `build/classes/java/main`. `None` when `name` is not a
/// dotted class name or no build has it.
pub fn class_file(root: &Path, name: &str) -> Option<PathBuf> {
    let ok = !name.is_empty()
        && name.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && p.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        });
    if !ok {
        return None;
    }
    let rel = format!("{}.class", name.replace('.', "/"));
    let mut projects = vec![root.to_path_buf()];
    let mut modules: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    modules.sort();
    projects.extend(modules);
    projects.iter().find_map(|p| {
        ["target/classes", "build/classes/java/main"]
            .iter()
            .map(|d| p.join(d).join(&rel))
            .find(|f| f.is_file())
    })
}

/// The package a Java source declares (`package a.b;`), if any.
pub fn package_of(source: &str) -> Option<String> {
    let mut in_comment = false;
    for line in source.lines() {
        let mut rest = line.trim();
        if in_comment {
            match rest.find("*/") {
                Some(i) => {
                    in_comment = false;
                    rest = rest[i + 2..].trim();
                }
                None => continue,
            }
        }
        if rest.starts_with("/*") {
            in_comment = !rest.contains("*/");
            continue;
        }
        if rest.is_empty() || rest.starts_with("//") || rest.starts_with('@') {
            continue;
        }
        let name = rest.strip_prefix("package ")?;
        return Some(name.trim().trim_end_matches(';').trim().to_string());
    }
    None
}

/// The folder a source's package path starts in: `src/main/java` for
/// `src/main/java/a/b/C.java` in package `a.b` (its own folder when the
/// folders do not spell the package).
pub fn source_root(file: &Path, package: Option<&str>) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let Some(package) = package else {
        return dir;
    };
    let mut root = dir.clone();
    for part in package.split('.').rev() {
        if root.file_name().is_some_and(|n| n == part) {
            root.pop();
        } else {
            return dir;
        }
    }
    root
}

/// `java -agentlib:jdwp=…,address=127.0.0.1:0 -cp CLASSPATH MAIN ARGS…`:
/// the agent listens on a free port of the loopback and holds the program
/// before its first line until a debugger resumes it.
pub fn command_line(java: &OsString, arguments: &Value, classpath: &OsString) -> Vec<OsString> {
    let mut line = vec![
        java.clone(),
        "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0".into(),
        "-cp".into(),
        classpath.clone(),
    ];
    if let Some(main) = arguments.get("mainClass").and_then(Value::as_str) {
        line.push(main.into());
    }
    line.extend(
        arguments
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(OsString::from),
    );
    line
}

/// `Listening for transport dt_socket at address: 40123` → the port.
pub fn agent_port(line: &str) -> Option<u16> {
    let rest = line
        .trim()
        .strip_prefix("Listening for transport dt_socket at address: ")?;
    rest.rsplit(':').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_knows_its_package_and_root() {
        let src =
            "/* a\n * licence */\n// note\n@Deprecated\npackage com.example.stats;\n\nclass X {}";
        assert_eq!(package_of(src).as_deref(), Some("com.example.stats"));
        assert_eq!(package_of("import java.util.List;\nclass X {}"), None);
        let file = Path::new("/w/src/main/java/com/example/stats/Stats.java");
        assert_eq!(
            source_root(file, Some("com.example.stats")),
            Path::new("/w/src/main/java")
        );
        assert_eq!(source_root(file, Some("org.other")), file.parent().unwrap());
        assert_eq!(source_root(file, None), file.parent().unwrap());
    }

    #[test]
    fn a_class_file_knows_its_build_folder_and_name() {
        let maven = Path::new("/w/m/target/classes/com/example/Main.class");
        assert_eq!(
            classes_root(maven),
            Some((
                PathBuf::from("/w/m/target/classes"),
                "com.example.Main".into()
            ))
        );
        let gradle = Path::new("/w/build/classes/java/main/Main.class");
        assert_eq!(
            classes_root(gradle),
            Some((PathBuf::from("/w/build/classes/java/main"), "Main".into()))
        );
        assert_eq!(
            classes_root(Path::new("/w/target/classes/a/Outer$Inner.class")),
            None
        );
        assert_eq!(classes_root(Path::new("/w/out/a/Main.class")), None);
        assert_eq!(
            class_file(Path::new("/nonexistent"), "demo/Main.java"),
            None
        );
    }

    #[test]
    fn the_agent_s_line_gives_its_port() {
        assert_eq!(
            agent_port("Listening for transport dt_socket at address: 40123\n"),
            Some(40123)
        );
        assert_eq!(
            agent_port("Listening for transport dt_socket at address: 127.0.0.1:5005"),
            Some(5005)
        );
        assert_eq!(agent_port("hello"), None);
    }
}
