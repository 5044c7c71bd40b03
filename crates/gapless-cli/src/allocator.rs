//! The binary's allocator, mimalloc, and how promptly a server gives memory
//! back after a large answer.
//!
//! mimalloc purges memory that has been free for its purge delay (1 s in
//! its version 3), but only when the allocator is next called: the thread
//! that freed an answer of hundreds of megabytes, going idle right after,
//! would keep them until it works again, and a server at rest could hold
//! the peak of its largest answer for hours. A long-running `serve` purges
//! at once instead, so its memory falls back as soon as an answer is
//! freed; the one-shot commands exit instead, and keep the default.

/// mimalloc, not the system's allocator: glibc's `malloc` and `free` are a
/// large share of the instructions a server spends on a question (callgrind
/// shows it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mimalloc.h` (version 3): the
/// milliseconds freed memory waits before it is purged, 0 for at once.
/// The `libmimalloc-sys` bindings predate the option's name, so it is
/// declared here, with the one function that sets it.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

#[allow(unsafe_code)]
mod ffi {
    extern "C" {
        /// `void mi_option_set(mi_option_t option, long value)`.
        pub(super) fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
}

/// Give freed memory back to the system as soon as it is free: for a
/// process that runs long (see the module's documentation).
pub fn purge_at_once() {
    // SAFETY: mi_option_set stores a number in mimalloc's table of
    // options, for an index it checks to be in the table; called first
    // thing in `main`, before the process starts a thread that could read
    // the option meanwhile. The index is that of the mimalloc this build
    // links (Cargo.lock); the memory test of `serve` (tests/bounds.rs)
    // fails should it name another option.
    #[allow(unsafe_code)]
    unsafe {
        ffi::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}
