//! Path resolution as a fuzz target: arbitrary paths built from the pieces
//! that escape (`..`, absolute paths, links out, NUL, empty parts) never
//! panic, never resolve outside the root, and never read or write a byte
//! outside it through the root's handle, with either the `openat2` path or
//! the component walk.
//!
//! `cargo xtask fuzz` runs this with many more cases (`PROPTEST_CASES`).

use proptest::prelude::*;
use std::path::Path;
use tool_core::fs::force_component_walk;
use tool_core::Workspace;

const SECRET: &[u8] = b"SECRET outside the workspace";

/// A workspace with folders, files, a link inside, a link to a folder
/// outside, and a link to a file outside; and the outside folder.
fn layout() -> (tempfile::TempDir, Workspace, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("ws");
    let outside = top.path().join("outside");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("a/file.txt"), b"inside").unwrap();
    std::fs::write(outside.join("file.txt"), SECRET).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("a/out")).unwrap();
    std::os::unix::fs::symlink(outside.join("file.txt"), root.join("secret.txt")).unwrap();
    std::os::unix::fs::symlink("b", root.join("a/in")).unwrap();
    let ws = Workspace::new(&root).unwrap();
    (top, ws, outside)
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        Just("a".to_string()),
        Just("b".to_string()),
        Just("out".to_string()),
        Just("in".to_string()),
        Just("file.txt".to_string()),
        Just("secret.txt".to_string()),
        Just("ws".to_string()),
        Just("outside".to_string()),
        Just("new.txt".to_string()),
        Just("x\0y".to_string()),
        "[a-z.~-]{1,6}",
    ]
}

fn user_path() -> impl Strategy<Value = (bool, Vec<String>, bool)> {
    (
        any::<bool>(),
        prop::collection::vec(piece(), 0..8),
        any::<bool>(),
    )
}

fn build(ws: &Workspace, absolute: bool, pieces: &[String], trailing: bool) -> String {
    let mut s = pieces.join("/");
    if absolute {
        // Absolute paths start at the root's parent, so `ws/..` and
        // `outside/...` are both reachable by name.
        s = format!("{}/{s}", ws.root().parent().unwrap().display());
    }
    if trailing {
        s.push('/');
    }
    s
}

fn check(ws: &Workspace, outside: &Path, user: &str) {
    let Ok(p) = ws.resolve(user) else {
        return;
    };
    assert!(
        p.starts_with(ws.root()),
        "`{user}` resolved outside: {}",
        p.display()
    );
    if let Ok(bytes) = ws.dir().read(&p, 1 << 20) {
        assert_ne!(bytes, SECRET, "`{user}` read the outside file");
    }
    if ws.dir().write(&p, b"written").is_ok() {
        assert_eq!(
            std::fs::read(outside.join("file.txt")).unwrap(),
            SECRET,
            "`{user}` wrote outside"
        );
        assert!(
            !outside.join("new.txt").exists(),
            "`{user}` created a file outside"
        );
    }
}

proptest! {
    #[test]
    fn no_path_leads_outside((absolute, pieces, trailing) in user_path(), walk in any::<bool>()) {
        let (_top, ws, outside) = layout();
        force_component_walk(walk);
        let user = build(&ws, absolute, &pieces, trailing);
        check(&ws, &outside, &user);
        force_component_walk(false);
    }
}
