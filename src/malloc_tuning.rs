//! glibc allocator settings for a process that trains networks with libtorch.
//!
//! libtorch allocates and frees its activation and gradient buffers (hundreds of KB to MB)
//! every minibatch. With glibc's defaults, blocks of that size are `mmap`ed and `munmap`ed
//! each time, so every minibatch pays page faults and page zeroing: a `perf` profile of
//! `gait bench optimize --arch lstm --layers 64,64` spent 25% of its time in the kernel's
//! page-fault path. Serving them from the heap and not trimming it gave +25-35% samples/s
//! (LSTM 64x64 in one measurement: 52k → 77k; page faults 374k → 70-140k per run). The cost is that freed memory stays with the process, which suits
//! a long-running trainer.

/// Applies the settings; call once at the start of `main`, before threads exist. Setting
/// `GAIT_MALLOC_DEFAULTS=1` keeps glibc's defaults (for comparisons, or if memory matters more).
pub fn tune() {
    if std::env::var_os("GAIT_MALLOC_DEFAULTS").is_some() {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before other threads start.
    unsafe {
        // Older glibc caps the threshold at 32 MiB and refuses larger values (returns 0).
        if libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30) == 0 {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        }
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        // Grow the heap in 256 MiB steps, so growing it rarely faults fresh pages mid-update.
        libc::mallopt(libc::M_TOP_PAD, 256 << 20);
    }
}
