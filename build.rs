//! Links the `toolreg` executable as a non-PIE on x86_64 Linux with glibc (the npm and PyPI
//! `linux-x64-gnu` binary): a position-independent executable has ~52,600 relative relocations
//! that the dynamic loader applies at every start, reading 1.2 MB of `.rela.dyn` and copying the
//! ~0.9 MB of `.data.rel.ro` it writes into private memory; a non-PIE has none, so idle memory is
//! ~2 MiB lower (BENCHMARKS.md "Idle"). Only the link changes (the objects stay position
//! independent, so no dependency is rebuilt); the executable's own address is no longer
//! randomised (SECURITY.md). Other targets link as their defaults say.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let cfg = |key: &str| std::env::var(key).unwrap_or_default();
    if cfg("CARGO_CFG_TARGET_ARCH") == "x86_64" && cfg("CARGO_CFG_TARGET_OS") == "linux" && cfg("CARGO_CFG_TARGET_ENV") == "gnu" {
        // After rustc's own `-pie`: the compiler driver takes the last of the two.
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
