//! Link options of the `mcp-bridge` binaries (nothing else is built here).
//!
//! Release builds for Linux with glibc pack their relative relocations (`-z
//! pack-relative-relocs`, DT_RELR, glibc >= 2.36 and binutils >= 2.38 or lld): the ~26 000
//! relocations of a position-independent binary take a few KiB instead of ~630 KiB of
//! `.rela.dyn`, which the loader reads whole at every start (file pages in the process's RSS).
//! The program behaves the same. GNU ld before 2.38 ignores the option with a warning.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && var("PROFILE") == "release" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
