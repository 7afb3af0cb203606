//! Which JDK a Java program runs on: a server that needs a newer Java than
//! the project builds with (Eclipse JDT LS needs 21) gets a JDK of its own
//! while the project's build keeps the one it finds.
//!
//! A JDK is known by its `release` file (`JAVA_VERSION="25.0.3"`), read, never
//! run: `$JAVA_HOME` first, then the `java` on the search path, then the JDKs
//! installed side by side in the usual folders, newest first.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The usual folders JDKs are installed in, one JDK per subfolder.
const JDK_DIRS: &[&str] = &[
    "/usr/lib/jvm",
    "/usr/java",
    "/opt",
    "/opt/java",
    "/Library/Java/JavaVirtualMachines",
];

/// A JDK (or JRE) found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jdk {
    /// Its home: `bin/java` and `release` are in it.
    pub home: PathBuf,
    /// Its `JAVA_VERSION` (`25.0.3`, `1.8.0_402`).
    pub version: String,
}

impl Jdk {
    /// The feature release (`25`; `8` for `1.8.0_402`).
    pub fn major(&self) -> u32 {
        major_of(&self.version)
    }

    /// The folder of its `java`.
    pub fn bin(&self) -> PathBuf {
        self.home.join("bin")
    }

    /// `path` with this JDK's `bin` in front.
    pub fn path_with_bin(&self, path: Option<&OsString>) -> OsString {
        let mut dirs = vec![self.bin()];
        dirs.extend(path.map(std::env::split_paths).into_iter().flatten());
        std::env::join_paths(dirs).unwrap_or_else(|_| self.bin().into_os_string())
    }
}

/// The feature release of a `JAVA_VERSION`: `25` of `25.0.3`, `8` of `1.8.0`.
fn major_of(version: &str) -> u32 {
    let mut parts = version.split(['.', '_', '-', '+']);
    match parts.next().and_then(|p| p.parse().ok()) {
        Some(1) => parts.next().and_then(|p| p.parse().ok()).unwrap_or(1),
        Some(n) => n,
        None => 0,
    }
}

/// The JDK whose home is `home`, if its `release` file names a version.
pub fn at(home: &Path) -> Option<Jdk> {
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    let version = release.lines().find_map(|l| {
        l.strip_prefix("JAVA_VERSION=")
            .map(|v| v.trim().trim_matches('"').to_string())
    })?;
    has_java(home).then(|| Jdk {
        home: home.to_path_buf(),
        version,
    })
}

fn has_java(home: &Path) -> bool {
    crate::programs::is_executable(&home.join("bin").join("java"))
}

/// Every JDK found, in the order of preference: `java_home`, the `java` on
/// `path`, then those of the usual folders, newest first. Each home once.
pub fn candidates(java_home: Option<&OsString>, path: Option<&OsString>) -> Vec<Jdk> {
    let mut found: Vec<Jdk> = Vec::new();
    let mut push = |jdk: Option<Jdk>| {
        if let Some(j) = jdk {
            let canon = std::fs::canonicalize(&j.home).unwrap_or_else(|_| j.home.clone());
            if !found
                .iter()
                .any(|f| std::fs::canonicalize(&f.home).unwrap_or_else(|_| f.home.clone()) == canon)
            {
                found.push(j);
            }
        }
    };
    push(java_home.and_then(|h| at(Path::new(h))));
    let on_path =
        crate::programs::find_program("java", Path::new("/"), &[], path.map(OsString::as_os_str))
            .and_then(|java| std::fs::canonicalize(java).ok())
            .and_then(|java| java.parent()?.parent().map(Path::to_path_buf));
    push(on_path.and_then(|h| at(&h)));
    let mut installed: Vec<Jdk> = JDK_DIRS
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            at(&p).or_else(|| at(&p.join("Contents").join("Home")))
        })
        .collect();
    installed.sort_by(|a, b| b.major().cmp(&a.major()).then(a.home.cmp(&b.home)));
    for j in installed {
        push(Some(j));
    }
    found
}

/// The first JDK of at least feature release `min`, in the order of
/// [`candidates`] (the machine's `JAVA_HOME` and `PATH` as given); or in
/// words which were found and why none fits.
pub fn find(
    min: u32,
    java_home: Option<&OsString>,
    path: Option<&OsString>,
) -> Result<Jdk, String> {
    let all = candidates(java_home, path);
    if let Some(j) = all.iter().find(|j| j.major() >= min) {
        return Ok(j.clone());
    }
    let seen = if all.is_empty() {
        "none found".to_string()
    } else {
        let list: Vec<String> = all
            .iter()
            .map(|j| format!("{} at {}", j.version, j.home.display()))
            .collect();
        format!("found only {}", list.join(", "))
    };
    Err(format!(
        "needs a JDK {min} or newer: {seen} ($JAVA_HOME, the `java` on $PATH, {}); \
         install one (e.g. `apt-get install openjdk-{min}-jdk-headless`) or set JAVA_HOME to it",
        JDK_DIRS.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_jdk(dir: &Path, name: &str, version: &str) -> PathBuf {
        let home = dir.join(name);
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::write(
            home.join("release"),
            format!("IMPLEMENTOR=\"x\"\nJAVA_VERSION=\"{version}\"\n"),
        )
        .unwrap();
        let java = home.join("bin").join("java");
        std::fs::write(&java, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&java, std::fs::Permissions::from_mode(0o755)).unwrap();
        home
    }

    #[test]
    fn the_feature_release_of_old_and_new_version_strings() {
        assert_eq!(major_of("25.0.3"), 25);
        assert_eq!(major_of("1.8.0_402"), 8);
        assert_eq!(major_of("21"), 21);
        assert_eq!(major_of("17-ea"), 17);
        assert_eq!(major_of(""), 0);
    }

    #[test]
    fn java_home_then_path_is_preferred_and_a_too_old_one_is_passed_over() {
        let tmp = crate::scratch::ScratchDir::create("jdk-test").unwrap();
        let old = fake_jdk(tmp.path(), "jdk17", "17.0.15");
        let new = fake_jdk(tmp.path(), "jdk25", "25.0.3");
        let home = OsString::from(&old);
        let path = std::env::join_paths([new.join("bin")]).unwrap();
        let all = candidates(Some(&home), Some(&path));
        assert_eq!(all[0].home, old);
        assert_eq!(all[1].home, new);
        assert_eq!(find(17, Some(&home), Some(&path)).unwrap().home, old);
        let fit = find(21, Some(&home), Some(&path)).unwrap();
        assert_eq!((fit.major(), fit.home), (25, new.clone()));
        let too_new = find(99, Some(&home), Some(&path)).unwrap_err();
        assert!(
            too_new.starts_with("needs a JDK 99 or newer: found only 17.0.15 at "),
            "{too_new}"
        );
        let jdk = at(&new).unwrap();
        let p = jdk.path_with_bin(Some(&OsString::from("/usr/bin")));
        assert_eq!(
            p,
            OsString::from(format!("{}:/usr/bin", new.join("bin").display()))
        );
    }
}
