//! Links the `toolreg` executable as non-PIE on x86-64 Linux with glibc.
//!
//! A position-independent executable carries ~52,600 relative relocations (1.26 MB of
//! `.rela.dyn`) that the dynamic loader applies at every start, writing into `.data.rel.ro`:
//! about 2.5 MiB of an idle sidecar's ~11 MiB resident were those pages (BENCHMARKS.md,
//! "Idle, looked at again"). Linked at a fixed address there are none. Only the final link
//! changes: every crate is still compiled as position-independent code, so nothing is rebuilt
//! for it and the glibc floor stays at 2.35. The cost is the executable's own address
//! randomisation (libraries, stack, heap and mmaps stay randomised); SECURITY.md weighs it.
//! `TOOLREG_PIE=1` at build time keeps a PIE.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLREG_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let measured = var("CARGO_CFG_TARGET_ARCH") == "x86_64" && var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if measured && var("TOOLREG_PIE") != "1" {
        println!("cargo:rustc-link-arg-bin=toolreg=-no-pie");
    }
}
