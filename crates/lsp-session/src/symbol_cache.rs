//! The document symbols of files already asked for, kept per (server
//! process, uri, text hash), at most [`SYMBOL_CACHE_FILES`] files, oldest
//! out: a file's symbols are asked once per server and text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many files' symbols the cache keeps.
pub const SYMBOL_CACHE_FILES: usize = 64;

/// One named scope of a file: its path of names and its whole range
/// (0-based line, server column; end inclusive of its last position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub name: String,
    pub start: (u32, u32),
    pub end: (u32, u32),
}

pub type Key = (u32, String, u64);

/// Document symbols already asked for, by (server pid, uri, text hash).
#[derive(Default)]
pub struct SymbolCache {
    files: Mutex<VecDeque<(Key, Arc<Vec<Scope>>)>>,
}

impl SymbolCache {
    pub fn get(&self, key: &Key) -> Option<Arc<Vec<Scope>>> {
        let files = self.files.lock().expect("symbol cache");
        files.iter().find(|(k, _)| k == key).map(|(_, s)| s.clone())
    }

    pub fn put(&self, key: Key, scopes: Arc<Vec<Scope>>) {
        let mut files = self.files.lock().expect("symbol cache");
        files.retain(|(k, _)| k != &key);
        if files.len() >= SYMBOL_CACHE_FILES {
            files.pop_front();
        }
        files.push_back((key, scopes));
    }

    /// How many files it holds (for its bound's test).
    pub fn len(&self) -> usize {
        self.files.lock().expect("symbol cache").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_cache_is_bounded_oldest_out() {
        let cache = SymbolCache::default();
        for i in 0..(SYMBOL_CACHE_FILES as u64 + 5) {
            cache.put((1, format!("file:///{i}"), i), Arc::new(Vec::new()));
        }
        assert_eq!(cache.len(), SYMBOL_CACHE_FILES);
        assert!(cache.get(&(1, "file:///0".into(), 0)).is_none());
        assert!(cache
            .get(&(
                1,
                format!("file:///{}", SYMBOL_CACHE_FILES + 4),
                SYMBOL_CACHE_FILES as u64 + 4
            ))
            .is_some());
    }
}
