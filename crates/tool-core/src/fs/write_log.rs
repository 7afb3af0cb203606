//! The run's record of the files its tools wrote or removed through one
//! workspace root, so a cache of file contents (tool-astgrep's search
//! index) drops exactly those files without waiting for a clock to tick.
//!
//! Every [`DirHandle`](super::DirHandle) made from a [`Root`](super::Root)
//! shares the root's log, and its `replace_child` and `remove_child` note
//! the path after they succeed (a move is a write and a removal). A reader
//! keeps the generation it last saw and asks [`WriteLog::since`]; the log
//! holds the last `KEPT` paths, and a reader that fell further behind is
//! told so and must check every file itself.
//!
//! Writes made behind the run's back are not here: readers still compare
//! sizes and times (see tool-astgrep's `index`).

use std::collections::VecDeque;
use std::sync::Mutex;

/// Paths kept for readers that are behind.
const KEPT: usize = 4096;

#[derive(Debug, Default)]
pub struct WriteLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Writes noted so far.
    generation: u64,
    /// The last `KEPT` writes: (generation after it, path relative to
    /// the root with `/`).
    recent: VecDeque<(u64, String)>,
}

/// What changed since a generation a reader saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WritesSince {
    /// These paths (relative to the root, with `/`, each once, sorted);
    /// `generation` is the one to ask from next.
    Paths { paths: Vec<String>, generation: u64 },
    /// More than the log keeps: every file may have changed.
    Lost { generation: u64 },
}

impl WriteLog {
    /// Note a write or removal of `rel` (relative to the root, with `/`).
    pub fn note(&self, rel: &str) {
        let mut inner = self.inner.lock().expect("write log lock");
        inner.generation += 1;
        let generation = inner.generation;
        if inner.recent.len() == KEPT {
            inner.recent.pop_front();
        }
        inner.recent.push_back((generation, rel.to_string()));
    }

    /// Writes noted so far.
    pub fn generation(&self) -> u64 {
        self.inner.lock().expect("write log lock").generation
    }

    /// What was written after generation `seen`.
    pub fn since(&self, seen: u64) -> WritesSince {
        let inner = self.inner.lock().expect("write log lock");
        let generation = inner.generation;
        let oldest_kept = inner.recent.front().map_or(generation, |(g, _)| g - 1);
        if seen < oldest_kept {
            return WritesSince::Lost { generation };
        }
        let mut paths: Vec<String> = inner
            .recent
            .iter()
            .filter(|(g, _)| *g > seen)
            .map(|(_, p)| p.clone())
            .collect();
        paths.sort();
        paths.dedup();
        WritesSince::Paths { paths, generation }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gets_each_path_once_and_learns_when_it_fell_behind() {
        let log = WriteLog::default();
        assert_eq!(
            log.since(0),
            WritesSince::Paths {
                paths: vec![],
                generation: 0
            }
        );
        log.note("b.py");
        log.note("a.py");
        log.note("b.py");
        assert_eq!(
            log.since(0),
            WritesSince::Paths {
                paths: vec!["a.py".into(), "b.py".into()],
                generation: 3
            }
        );
        assert_eq!(
            log.since(2),
            WritesSince::Paths {
                paths: vec!["b.py".into()],
                generation: 3
            }
        );
        for i in 0..KEPT {
            log.note(&format!("f{i}"));
        }
        assert_eq!(
            log.since(2),
            WritesSince::Lost {
                generation: 3 + KEPT as u64
            }
        );
        assert!(matches!(log.since(3), WritesSince::Paths { paths, .. } if paths.len() == KEPT));
    }
}
