//! `gltf_glb`: arbitrary bytes as a `.glb` (binary glTF container).
//!
//! The same checks as `gltf_json`, on a corpus of GLB files. A mutation that keeps the `glTF` magic
//! but changes the file's length usually breaks only the header's total length, so such an input is
//! loaded twice: as it is (the length check) and with the header's length set to the input's (the
//! chunks and everything after them).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ispc_skinning_fuzz::scene::load_and_run(data);
    if data.len() >= 12 && data.starts_with(b"glTF") {
        let len = (data.len() as u32).to_le_bytes();
        if data[8..12] != len {
            let mut fixed = data.to_vec();
            fixed[8..12].copy_from_slice(&len);
            ispc_skinning_fuzz::scene::load_and_run(&fixed);
        }
    }
});
