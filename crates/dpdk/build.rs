//! Compiles the C shim over DPDK's inline functions and links the system DPDK
//! (found with pkg-config, as `libdpdk`), failing with instructions when it is absent.

fn main() {
    println!("cargo:rerun-if-changed=csrc/shim.c");
    let dpdk = match pkg_config::Config::new().atleast_version("22.11").probe("libdpdk") {
        Ok(lib) => lib,
        Err(e) => panic!(
            "\n\ntrajan-dpdk needs DPDK 22.11 or later (pkg-config libdpdk): {e}\n\
             Install it with `scripts/install-deps.sh` (or `apt-get install libdpdk-dev`),\n\
             or build Trajan without the `dpdk` feature.\n"
        ),
    };
    let mut build = cc::Build::new();
    build.file("csrc/shim.c").warnings(true).flag_if_supported("-Wno-unused-parameter");
    for inc in &dpdk.include_paths {
        build.include(inc);
    }
    // DPDK's headers need rte_config.h first and an x86-64-v2 baseline (SSE4.2),
    // as its pkg-config cflags say.
    build.flag("-include").flag("rte_config.h").flag_if_supported("-march=corei7");
    build.compile("trajan_dpdk_shim");
    // Drivers are plugins EAL loads at start; the ring driver is also called directly
    // (rte_eth_from_rings), so it is linked.
    println!("cargo:rustc-link-lib=rte_net_ring");
}
