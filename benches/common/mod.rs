//! What the benchmarks that run the binary share: where the binary is, and peak RSS from /proc.

/// The release binary (`KUBECTL_DELTAS_BIN` overrides it); build it with `cargo build --release`.
pub fn release_binary() -> String {
    std::env::var("KUBECTL_DELTAS_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/kubectl-deltas").into()
    })
}

/// The `VmHWM` (peak resident set) of process `pid` (`"self"` for this one), in bytes; `None`
/// once it has exited.
///
/// A child's own `VmHWM`, not `getrusage(RUSAGE_CHILDREN)`: children are spawned with vfork
/// semantics, and at `exec` the kernel folds the parent's high-water mark into the child's.
pub fn vm_hwm(pid: impl std::fmt::Display) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Starts `command` (built on [`release_binary`]), with a message saying how to build the binary
/// when it is missing.
pub fn spawn(command: &mut std::process::Command) -> std::process::Child {
    command.spawn().unwrap_or_else(|e| {
        panic!(
            "cannot run {} (build it with `cargo build --release`): {e}",
            release_binary()
        )
    })
}

/// Waits for `child` to exit, sampling its `VmHWM` every 2 ms (it only grows, so the last sample
/// misses at most what the final 2 ms added); returns whether it succeeded and its peak in bytes.
pub fn wait_with_peak(child: &mut std::process::Child) -> (bool, u64) {
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(hwm) = vm_hwm(child.id()) {
            peak = peak.max(hwm);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (child.wait().unwrap().success(), peak)
}
