//! Where tree-sitter's parser gets its memory. Parsing is most of a search's
//! time (74% of `isinstance($X, $Y)` over the Python standard library), and
//! a fifth of that was the C library's malloc and free: a parse makes and
//! drops many small nodes. mimalloc does that work in less time
//! (`cargo xtask bench astgrep` prints the CPU time of both sides).
//!
//! Without transparent huge pages (libmimalloc-sys's `no_thp`): a run's
//! search index keeps its trees, so a first search takes hundreds of MB
//! of fresh memory, and in 2 MiB huge pages the kernel's zeroing of it cost
//! the stdlib's first search 1.9–2.3 s of system time against 1.3 s in
//! 4 KiB pages (about a tenth of its CPU time; `cargo xtask bench
//! astgrep`, `BENCH_CASE=run`). mimalloc's default would `madvise` its
//! arenas for huge pages.
//!
//! The allocator is process-wide, so the program decides, once, before any
//! parser exists: the agent-tools binary calls [`use_mimalloc`] first thing.
//! A library user who does not call it gets the C library's malloc.

/// Make tree-sitter allocate with mimalloc from now on.
///
/// # Safety
///
/// No tree-sitter object (parser, tree, query, language copy) may exist yet,
/// in any thread: memory the C library's malloc gave must never reach
/// mimalloc's free. Call it at the start of `main`, before anything parses.
pub unsafe fn use_mimalloc() {
    // SAFETY: the caller promises no tree-sitter allocation exists yet, and
    // mimalloc's four functions have the C signatures tree-sitter expects.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
}
