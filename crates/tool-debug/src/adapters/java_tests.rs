//! JUnit tests under the java backend: what a launch with `test` runs.
//! A `test` names one test method of the `program` test file (`meanOfSix`,
//! `StatsTest#meanOfSix`, `StatsTest.meanOfSix`); it becomes the JUnit
//! Platform selection `pkg.StatsTest#meanOfSix`, run by the JUnit console
//! launcher (`org.junit.platform.console.ConsoleLauncher execute
//! --select-method …`) in the JVM under the JDWP agent. The project's test
//! classpath is what Maven resolves offline (`mvn -o dependency:build-
//! classpath`, test scope); the launcher is the
//! `junit-platform-console-standalone` jar of the project's JUnit Platform
//! version, found in the same local repository.
//!
//! Invariant: a name that is not a test method written in the file is
//! refused before anything starts, with the file's tests; a project whose
//! classpath cannot be had, or whose launcher jar is missing, is refused
//! saying which command brings it.

use super::java::package_of;
use std::path::{Path, PathBuf};

/// The annotations that make a method a test the JUnit Platform runs
/// (JUnit 4's `@Test` included).
const TEST_ANNOTATIONS: [&str; 5] = [
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
];

/// The main class of the JUnit console launcher.
pub const CONSOLE_LAUNCHER: &str = "org.junit.platform.console.ConsoleLauncher";

/// The test methods written in a Java source, in order: methods under one
/// of [`TEST_ANNOTATIONS`].
pub fn test_methods(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut annotated = false;
    for line in source.lines() {
        let line = line.trim();
        if line.starts_with('@') {
            annotated |= line.split('@').skip(1).any(|a| {
                let name: String = a
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                    .collect();
                let simple = name.rsplit('.').next().unwrap_or_default();
                TEST_ANNOTATIONS.contains(&simple)
            });
            continue;
        }
        if !annotated || line.is_empty() || line.starts_with("//") {
            continue;
        }
        annotated = false;
        if let Some(open) = line.find('(') {
            let name: String = line[..open]
                .trim_end()
                .chars()
                .rev()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The JUnit selection (`pkg.Class#method`) of the test `test` of the test
/// file `program` (as the model wrote it), whose text is `source`.
pub fn selection(program: &str, file: &Path, source: &str, test: &str) -> Result<String, String> {
    let test = test.trim();
    let class = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let qualified = match package_of(source) {
        Some(p) => format!("{p}.{class}"),
        None => class.clone(),
    };
    let (owner, method) = match test.rsplit_once('#') {
        Some((o, m)) => (Some(o), m),
        None => match test.rsplit_once('.') {
            Some((o, m)) => (Some(o), m),
            None => (None, test),
        },
    };
    if let Some(owner) = owner {
        if owner != class && owner != qualified {
            return Err(format!(
                "`test` is `{test}`, and {program} holds the class {qualified}; name a test method of it (`{class}#METHOD` or `METHOD`)"
            ));
        }
    }
    let tests = test_methods(source);
    if method.is_empty() || !tests.iter().any(|t| t == method) {
        let listed = if tests.is_empty() {
            "it has none (methods annotated @Test, @ParameterizedTest, @RepeatedTest, @TestFactory or @TestTemplate)".to_string()
        } else {
            format!("its tests: {}", tests.join(", "))
        };
        return Err(format!("no test method `{method}` in {program}; {listed}"));
    }
    Ok(format!("{qualified}#{method}"))
}

/// The build files that make a folder a Java project's.
const BUILD_FILES: [&str; 3] = ["pom.xml", "build.gradle", "build.gradle.kts"];

/// The nearest folder above the test file `file` with a Maven or Gradle
/// build file.
pub fn build_folder(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|d| BUILD_FILES.iter().any(|b| d.join(b).is_file()))
        .map(Path::to_path_buf)
}

/// The console launcher's arguments that run `selection` alone: exit code
/// 1 when it fails, 2 when it selects nothing.
pub fn console_args(selection: &str) -> Vec<String> {
    [
        "execute",
        "--disable-banner",
        "--disable-ansi-colors",
        "--fail-if-no-tests",
        "--details=tree",
        "--select-method",
        selection,
    ]
    .map(String::from)
    .to_vec()
}

/// The local repository a jar of `group/artifact` on the classpath comes
/// from, and the jar's version.
fn repository_of(classpath: &[PathBuf], group: &str, artifact: &str) -> Option<(PathBuf, String)> {
    let marker = format!("/{group}/{artifact}/");
    classpath.iter().find_map(|jar| {
        let text = jar.to_str()?;
        let at = text.find(&marker)?;
        let version = text[at + marker.len()..].split('/').next()?.to_string();
        Some((PathBuf::from(&text[..at]), version))
    })
}

/// The `junit-platform-console-standalone` jar for the JUnit on
/// `classpath`: of the same JUnit Platform version where the classpath
/// has the Platform (JUnit 5 and 6), else (JUnit 4, run by the vintage
/// engine the standalone jar carries) the newest in the local repository.
pub fn launcher_jar(classpath: &[PathBuf]) -> Result<PathBuf, String> {
    let dir = |repo: &Path| repo.join("org/junit/platform/junit-platform-console-standalone");
    let jar = |repo: &Path, v: &str| {
        dir(repo)
            .join(v)
            .join(format!("junit-platform-console-standalone-{v}.jar"))
    };
    if let Some((repo, version)) =
        repository_of(classpath, "org/junit/platform", "junit-platform-commons")
    {
        let found = jar(&repo, &version);
        return if found.is_file() {
            Ok(found)
        } else {
            Err(format!(
                "the JUnit console launcher of the project's JUnit Platform {version} is not in the local Maven repository ({}); fetch it with `mvn dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:{version}`",
                repo.display()
            ))
        };
    }
    let Some((repo, _)) = repository_of(classpath, "junit", "junit") else {
        return Err(
            "the project's test classpath has no JUnit (neither junit-platform-commons nor junit:junit): declare org.junit.jupiter:junit-jupiter (or junit:junit) as a test dependency"
                .to_string(),
        );
    };
    let mut versions: Vec<(Vec<u64>, String)> = std::fs::read_dir(dir(&repo))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|v| jar(&repo, v).is_file())
        .map(|v| {
            let key = v
                .split(['.', '-'])
                .map(|p| p.parse().unwrap_or(0))
                .collect();
            (key, v)
        })
        .collect();
    versions.sort();
    versions.last().map(|(_, v)| jar(&repo, v)).ok_or_else(|| {
        format!(
            "JUnit 4 tests run through the JUnit console launcher, and none is in the local Maven repository ({}); fetch it with `mvn dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.1`",
            repo.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_is_named_by_its_method_and_checked_against_the_file() {
        let source = "package demo.stats;\n\nimport org.junit.jupiter.api.Test;\n\nclass StatsTest {\n    @Test\n    void meanOfSix() {}\n\n    @org.junit.jupiter.params.ParameterizedTest @ValueSource(ints = {1})\n    void each(int x) {}\n\n    @Disabled(\"later\")\n    static int[] none() { return null; }\n}\n";
        let file = Path::new("/w/src/test/java/demo/stats/StatsTest.java");
        let show = |test: &str| match selection(
            "src/test/java/demo/stats/StatsTest.java",
            file,
            source,
            test,
        ) {
            Ok(s) => s,
            Err(e) => format!("error: {e}"),
        };
        let lines = [
            show("meanOfSix"),
            show("StatsTest#each"),
            show("demo.stats.StatsTest.meanOfSix"),
            show("none"),
            show("Other#meanOfSix"),
        ];
        expect_test::expect![[r#"
            demo.stats.StatsTest#meanOfSix
            demo.stats.StatsTest#each
            demo.stats.StatsTest#meanOfSix
            error: no test method `none` in src/test/java/demo/stats/StatsTest.java; its tests: meanOfSix, each
            error: `test` is `Other#meanOfSix`, and src/test/java/demo/stats/StatsTest.java holds the class demo.stats.StatsTest; name a test method of it (`StatsTest#METHOD` or `METHOD`)"#]]
        .assert_eq(&lines.join("\n"));
    }

    #[test]
    fn the_launcher_jar_matches_the_platform_on_the_classpath() {
        let repo = tempfile::tempdir().unwrap();
        let standalone = repo
            .path()
            .join("org/junit/platform/junit-platform-console-standalone/1.14.1");
        std::fs::create_dir_all(&standalone).unwrap();
        let jar = standalone.join("junit-platform-console-standalone-1.14.1.jar");
        std::fs::write(&jar, "").unwrap();
        let on = |rel: &str| vec![repo.path().join(rel)];
        let five = on(
            "org/junit/platform/junit-platform-commons/1.14.1/junit-platform-commons-1.14.1.jar",
        );
        assert_eq!(launcher_jar(&five).unwrap(), jar);
        let four = on("junit/junit/4.13.2/junit-4.13.2.jar");
        assert_eq!(launcher_jar(&four).unwrap(), jar);
        let six =
            on("org/junit/platform/junit-platform-commons/6.0.1/junit-platform-commons-6.0.1.jar");
        let err = launcher_jar(&six).unwrap_err();
        assert!(
            err.ends_with("fetch it with `mvn dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:6.0.1`"),
            "{err}"
        );
        expect_test::expect!["the project's test classpath has no JUnit (neither junit-platform-commons nor junit:junit): declare org.junit.jupiter:junit-jupiter (or junit:junit) as a test dependency"]
            .assert_eq(&launcher_jar(&[]).unwrap_err());
    }
}
