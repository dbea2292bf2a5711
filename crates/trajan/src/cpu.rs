//! The instructions this build of `trajan` was compiled to use, checked against
//! the CPU before anything runs.
//!
//! The workspace builds for x86-64-v3 with AES-NI (`.cargo/config.toml`), which
//! the forwarding code is faster with. On an older CPU such a binary would die of an illegal
//! instruction somewhere in the first packet; checking at start turns that into a
//! message that says how to build for the CPU instead. A baseline build (no AVX2
//! at compile time) has nothing to check.

/// The CPUID output register that holds a feature's bit.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[derive(Clone, Copy)]
enum Reg {
    Ebx,
    Ecx,
}

/// An x86-64-v3 feature: its `/proc/cpuinfo` name and where CPUID reports it.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
struct Feature {
    name: &'static str,
    /// CPUID leaf (subleaf 0).
    leaf: u32,
    reg: Reg,
    bit: u32,
}

/// x86-64-v3 beyond the baseline, as the psABI lists it.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
const V3: [Feature; 9] = [
    Feature { name: "avx", leaf: 1, reg: Reg::Ecx, bit: 28 },
    Feature { name: "fma", leaf: 1, reg: Reg::Ecx, bit: 12 },
    Feature { name: "movbe", leaf: 1, reg: Reg::Ecx, bit: 22 },
    Feature { name: "f16c", leaf: 1, reg: Reg::Ecx, bit: 29 },
    Feature { name: "xsave", leaf: 1, reg: Reg::Ecx, bit: 26 },
    Feature { name: "avx2", leaf: 7, reg: Reg::Ebx, bit: 5 },
    Feature { name: "bmi1", leaf: 7, reg: Reg::Ebx, bit: 3 },
    Feature { name: "bmi2", leaf: 7, reg: Reg::Ebx, bit: 8 },
    Feature { name: "abm", leaf: 0x8000_0001, reg: Reg::Ecx, bit: 5 },
];

/// AES-NI when the build enables it beside x86-64-v3 (`.cargo/config.toml`
/// does, for the name hash); a build without it has nothing more to check.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
const EXTRA: &[Feature] = if cfg!(target_feature = "aes") { &[Feature { name: "aes", leaf: 1, reg: Reg::Ecx, bit: 25 }] } else { &[] };

/// Every feature this build was compiled to use beyond the baseline.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
fn compiled() -> impl Iterator<Item = &'static Feature> {
    V3.iter().chain(EXTRA)
}

/// The compiled-for features this CPU lacks, by their `/proc/cpuinfo` names
/// (`abm` is LZCNT). Read with CPUID directly: `is_x86_feature_detected!` answers
/// "yes" at compile time for every feature the build enables.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
pub fn missing() -> Vec<&'static str> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let max_basic = __cpuid(0).eax;
    let max_extended = __cpuid(0x8000_0000).eax;
    let mut missing: Vec<&'static str> = compiled()
        .filter(|f| {
            let supported = if f.leaf >= 0x8000_0000 { f.leaf <= max_extended } else { f.leaf <= max_basic };
            let r = supported.then(|| __cpuid_count(f.leaf, 0));
            let word = r.map_or(0, |r| match f.reg {
                Reg::Ebx => r.ebx,
                Reg::Ecx => r.ecx,
            });
            word & (1 << f.bit) == 0
        })
        .map(|f| f.name)
        .collect();
    if missing.is_empty() && !os_saves_avx() {
        missing.push("avx state saved by the OS (XCR0)");
    }
    missing
}

/// Whether the OS saves the SSE and AVX registers on a context switch (OSXSAVE,
/// then XCR0 bits 1 and 2), without which AVX instructions fault even on a CPU
/// that has them.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
fn os_saves_avx() -> bool {
    const OSXSAVE: u32 = 1 << 27;
    if std::arch::x86_64::__cpuid(1).ecx & OSXSAVE == 0 {
        return false;
    }
    // SAFETY: XGETBV exists when CPUID reports OSXSAVE (checked just above), and
    // register 0 (XCR0) always exists then.
    let xcr0 = unsafe { std::arch::x86_64::_xgetbv(0) };
    xcr0 & 0b110 == 0b110
}

/// Nothing to check: this build uses only the baseline instruction set.
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
pub fn missing() -> Vec<&'static str> {
    Vec::new()
}

/// `Err` with what to do when this CPU cannot run this build.
pub fn check() -> Result<(), String> {
    let missing = missing();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(message(&missing))
    }
}

fn message(missing: &[&str]) -> String {
    format!(
        "this build of trajan uses x86-64-v3 and AES-NI instructions (.cargo/config.toml) that this CPU lacks: {}. \
         Rebuild for this CPU with: RUSTFLAGS=\"-C target-cpu=x86-64 -C llvm-args=-inline-threshold=1500\" cargo build --release",
        missing.join(", ")
    )
}

#[cfg(test)]
mod tests {
    /// CPUID read by hand agrees with the kernel's view of the CPU: every
    /// feature is reported missing exactly when `/proc/cpuinfo` lacks its flag.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_os = "linux"))]
    #[test]
    fn cpuid_agrees_with_proc_cpuinfo() {
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("Linux has /proc/cpuinfo");
        let flags: Vec<&str> = info
            .lines()
            .find_map(|l| l.strip_prefix("flags"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, f)| f.split_whitespace().collect())
            .expect("a flags line");
        let missing = super::missing();
        for f in super::compiled() {
            assert_eq!(missing.contains(&f.name), !flags.contains(&f.name), "{}", f.name);
        }
    }

    /// The refusal names every missing feature and the baseline rebuild.
    #[test]
    fn message_names_the_features_and_the_rebuild() {
        let m = super::message(&["avx2", "bmi2"]);
        assert!(m.contains("lacks: avx2, bmi2."), "{m}");
        assert!(m.contains("RUSTFLAGS=\"-C target-cpu=x86-64 -C llvm-args=-inline-threshold=1500\" cargo build --release"), "{m}");
    }
}
