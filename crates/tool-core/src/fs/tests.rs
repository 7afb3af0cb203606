//! The file access rules, each tried for real on a temporary tree (both
//! ways where the kernel has `openat2`: through it and the component walk).

use super::*;
use crate::Workspace;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

/// A workspace with `src/a.py`, and a folder outside it holding
/// `secret.txt` (and `src/a.py`, so a path swapped over would match).
fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("src")).unwrap();
    std::fs::write(d.path().join("src/a.py"), "inside\n").unwrap();
    let out = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(out.path().join("src")).unwrap();
    std::fs::write(out.path().join("secret.txt"), "outside\n").unwrap();
    std::fs::write(out.path().join("src/a.py"), "outside\n").unwrap();
    let ws = Workspace::new(d.path()).unwrap();
    (d, out, ws)
}

/// Run `check` with openat2 and with the component walk.
fn both_ways(check: impl Fn(&str)) {
    for walk in [false, true] {
        force_component_walk(walk);
        check(if walk { "walk" } else { "openat2" });
    }
    force_component_walk(false);
}

#[test]
fn the_kernel_here_has_openat2() {
    let (_d, _o, ws) = setup();
    ws.dir().read(Path::new("src/a.py"), 100).unwrap();
    // Informational: CI kernels are 5.6+; the walk covers older ones.
    println!("openat2 in use: {}", uses_openat2());
}

#[test]
fn special_files_are_refused_with_their_kind_without_blocking() {
    let (d, _o, ws) = setup();
    let fifo = d.path().join("pipe.py");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let _sock = std::os::unix::net::UnixListener::bind(d.path().join("sock.py")).unwrap();
    let dev = d.path().join("zero.py");
    let c = std::ffi::CString::new(dev.as_os_str().as_bytes()).unwrap();
    // /dev/zero's numbers (1, 5); needs CAP_MKNOD (CI runs as root).
    let have_dev =
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 5)) } == 0;
    if !have_dev {
        println!("skipping the character device case: mknod needs CAP_MKNOD here");
    }
    let mut cases = vec![
        ("pipe.py", "a FIFO (named pipe)"),
        ("sock.py", "a socket"),
        ("src", "a directory"),
    ];
    if have_dev {
        cases.push(("zero.py", "a character device"));
    }
    both_ways(|how| {
        for (name, kind) in &cases {
            let start = Instant::now();
            let err = ws.dir().read(&ws.root().join(name), 1 << 20).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("`{name}` is {kind}, not a regular file"),
                "{how}"
            );
            if *name != "src" {
                let err = ws.dir().write(&ws.root().join(name), b"x").unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!("`{name}` is {kind}, not a regular file"),
                    "{how}"
                );
            }
            assert!(start.elapsed() < Duration::from_secs(1), "{how} {name}");
        }
    });
    // Nothing was replaced.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn links_out_of_the_workspace_are_never_followed() {
    let (d, out, ws) = setup();
    symlink(out.path(), d.path().join("link")).unwrap();
    symlink(out.path().join("secret.txt"), d.path().join("pw")).unwrap();
    both_ways(|how| {
        for p in ["link/secret.txt", "pw"] {
            let err = ws.dir().read(Path::new(p), 100).unwrap_err();
            assert!(
                matches!(err, FsError::LinkInPath { .. }),
                "{how} {p}: {err}"
            );
            let err = ws.dir().write(&ws.root().join(p), b"pwned").unwrap_err();
            assert!(
                matches!(err, FsError::LinkInPath { .. } | FsError::NotRegular { .. }),
                "{how} {p}: {err}"
            );
        }
        let err = ws
            .dir()
            .write(&ws.root().join("link/new.txt"), b"pwned")
            .unwrap_err();
        assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
    });
    assert_eq!(
        std::fs::read_to_string(out.path().join("secret.txt")).unwrap(),
        "outside\n"
    );
    assert!(!out.path().join("new.txt").exists());
}

/// The race the handles close: the path is checked while `src` is a
/// folder, then `src` becomes a link to a folder outside.
#[test]
fn a_link_swapped_in_after_the_check_leads_nowhere() {
    let (d, out, ws) = setup();
    let checked = ws.resolve("src/a.py").unwrap();
    std::fs::rename(d.path().join("src"), d.path().join("src.real")).unwrap();
    symlink(out.path().join("src"), d.path().join("src")).unwrap();
    both_ways(|how| {
        let err = ws.dir().read(&checked, 100).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`src/a.py` has a symbolic link in its path that was not there when the path was checked; nothing was read or written through it",
            "{how}"
        );
        let err = ws.dir().write(&checked, b"pwned").unwrap_err();
        assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
        let err = ws.dir().open(&ws.root().join("src")).unwrap_err();
        assert!(matches!(err, FsError::LinkInPath { .. }), "{how}: {err}");
    });
    assert_eq!(
        std::fs::read_to_string(out.path().join("src/a.py")).unwrap(),
        "outside\n"
    );
}

#[test]
fn a_trailing_slash_names_a_directory() {
    let (_d, _o, ws) = setup();
    let err = ws.resolve_file("notes/").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad arguments: `notes/` is a directory path; give a file (without the trailing `/`)"
    );
    assert!(ws.resolve_file("notes").is_ok());
}

#[test]
fn size_is_decided_on_the_handle_before_reading() {
    let (d, _o, ws) = setup();
    let big = std::fs::File::create(d.path().join("big.txt")).unwrap();
    big.set_len(200 * 1024 * 1024).unwrap();
    let start = Instant::now();
    let f = ws.dir().open_file(Path::new("big.txt")).unwrap();
    assert_eq!(f.len(), 200 * 1024 * 1024);
    let err = f.read_capped(20 * 1024 * 1024).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`big.txt` is 209715200 bytes, over the limit of 20971520 bytes"
    );
    assert!(start.elapsed() < Duration::from_millis(100));
}

#[test]
fn writes_make_folders_keep_modes_and_leave_no_temp() {
    let (d, _o, ws) = setup();
    both_ways(|how| {
        let p = ws.root().join(format!("new/{how}/deep/x.txt"));
        ws.dir().write(&p, b"one").unwrap();
        ws.dir().write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.txt"], "{how}");
    });
    // A parent that is a file is refused, and nothing is made.
    let err = ws
        .dir()
        .write(&ws.root().join("src/a.py/x"), b"x")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot create a file under `src/a.py`: it is not a directory"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("src/a.py")).unwrap(),
        "inside\n"
    );
}

/// A pid that certainly belonged to a process that is gone.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn stale_temps_of_ours_are_swept_and_nothing_else() {
    let (d, _o, ws) = setup();
    let dead = dead_pid();
    let me = std::process::id();
    std::fs::create_dir_all(d.path().join("deep/er")).unwrap();
    let stale = [
        format!("deep/er/.agent-tools-{dead}-7.tmp"),
        format!("src/.a.py.{dead}.0.agent-tools.tmp"),
    ];
    let kept = [
        format!("deep/.agent-tools-{me}-999.tmp"),
        "deep/.agent-tools-notes.tmp".to_string(),
        "deep/my.agent-tools.tmp".to_string(),
    ];
    for f in stale.iter().chain(&kept) {
        std::fs::write(d.path().join(f), "x").unwrap();
    }
    assert_eq!(ws.sweep_stale_temps(), 2);
    for f in &stale {
        assert!(!d.path().join(f).exists(), "{f}");
    }
    for f in &kept {
        assert!(d.path().join(f).exists(), "{f}");
    }
    // The first write into a folder sweeps it too.
    let late = d.path().join(format!("src/.agent-tools-{dead}-8.tmp"));
    std::fs::write(&late, "x").unwrap();
    ws.dir().write(&ws.root().join("src/b.py"), b"b").unwrap();
    assert!(!late.exists());
    assert_eq!(temp_owner(&temp_name()), Some(me));
}
