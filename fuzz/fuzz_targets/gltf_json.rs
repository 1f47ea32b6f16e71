//! `gltf_json`: arbitrary bytes as a `.gltf` (JSON) file.
//!
//! `GltfScene::from_slice` returns `Ok` or a typed `Err`: never a panic, and never an allocation that
//! the bytes do not back (libFuzzer's `-rss_limit_mb`). A scene that loads then evaluates one frame and,
//! when it has clips, a three-instance crowd on `Backend::Auto` and `Backend::Reference`, each `Ok`
//! (see `ispc_skinning_fuzz::scene`). The corpus is seeded from the `.gltf` files beside the repository
//! and `fuzz/seed`'s own small files.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ispc_skinning_fuzz::scene::load_and_run(data));
