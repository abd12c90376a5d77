//! Links the `toolreg` executable as a non-PIE on x86-64 Linux with glibc (the npm and PyPI
//! `linux-x64-gnu` binary).
//!
//! A position-independent executable carries ~52,600 relative relocations (1.26 MB of
//! `.rela.dyn`) that the dynamic loader applies at every start, copying the ~0.9 MB of
//! `.data.rel.ro` it writes into private memory; linked at a fixed address there are none, and
//! an idle sidecar is ~2 MiB smaller (docs/benchmarks-history.md "Memory (issue 25 §4)", "Idle, a
//! non-PIE executable"). Only the final link changes: every
//! crate is still compiled position-independent, so nothing is rebuilt for it and the glibc floor
//! stays at 2.35. The cost is the executable's own address randomisation (SECURITY.md).
//! `TOOLREG_PIE=1` at build time keeps a PIE; other targets link as their defaults say.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLREG_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let measured = var("CARGO_CFG_TARGET_ARCH") == "x86_64" && var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if measured && var("TOOLREG_PIE") != "1" {
        // After rustc's own `-pie` on the link line: the compiler driver takes the last of the two.
        println!("cargo:rustc-link-arg-bin=toolreg=-no-pie");
    }
}
