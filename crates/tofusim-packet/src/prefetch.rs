//! Software prefetch of router and packet state.
//!
//! At 32K routers the per-router arrays no longer fit in cache, and an
//! arbitration touches about ten cache lines of them. The events of a cycle
//! and the routers to arbitrate are known in advance, so the engine asks for
//! the lines of the item a few places ahead while it works on the current
//! one. A prefetch is only a hint: it never changes results.

/// Hints the CPU to bring the cache line holding `slice[i]` into cache.
/// Out-of-range indices are ignored.
#[inline(always)]
pub fn line<T>(slice: &[T], i: usize) {
    if let Some(x) = slice.get(i) {
        #[cfg(target_arch = "x86_64")]
        // The one unsafe block of the engine. SAFETY: SSE is part of the
        // x86_64 baseline, and a prefetch only hints the cache: the pointer
        // comes from a live reference and is never dereferenced.
        #[allow(unsafe_code)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = x;
    }
}
