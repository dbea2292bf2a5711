#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| trajan_io::fuzzing::datagram(data));
