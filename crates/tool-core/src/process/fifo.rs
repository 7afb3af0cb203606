//! A named pipe a program started by someone else (a debug adapter's
//! launcher) can open as its standard input by path, while we hold it open:
//! the program that reads it waits, as at a terminal nobody types in,
//! instead of reading end of file at once.
//!
//! Invariants: the pipe is made with mode 0600 at a path that did not exist
//! (never follows or reuses a file); while the [`HeldFifo`] lives, opening
//! the path for reading never blocks and reads never see end of file; once
//! it is dropped, a reader sees end of file (no other writer exists).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A named pipe, held open for writing by us, never written to.
#[derive(Debug)]
pub struct HeldFifo {
    path: PathBuf,
    /// Opened read-write: on Linux that never blocks, and it keeps a writer
    /// (us) on the pipe for as long as it lives.
    _held: File,
}

impl HeldFifo {
    /// Make the pipe at `path` and hold it open.
    pub fn create(path: &Path) -> io::Result<HeldFifo> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))?;
        // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        Ok(HeldFifo {
            path: path.to_path_buf(),
            _held: held,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_reader_waits_while_it_is_held_and_sees_end_of_file_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdin");
        let fifo = HeldFifo::create(&path).unwrap();
        assert!(
            HeldFifo::create(&path).is_err(),
            "an existing path is reused"
        );
        let reader_path = path.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let n = File::open(reader_path)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            tx.send(n).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the reader did not wait"
        );
        drop(fifo);
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(),
            0
        );
    }
}
