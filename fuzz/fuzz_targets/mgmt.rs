#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| trajan_router::fuzzing::mgmt(data));
