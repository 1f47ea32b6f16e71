//! Parsing: the GLB header check, the JSON (or GLB JSON chunk) into a validated
//! [`gltf::Document`](::gltf::Document), and the importer's own decision on required extensions.

use super::error::GltfError;
use crate::Error;
use ::gltf as gltf_crate;
use std::borrow::Cow;

/// A parsed file: the validated document and the GLB `BIN` chunk, if any (borrowed from the bytes).
pub(super) struct Parsed<'a> {
    /// The validated document.
    pub(super) document: gltf_crate::Document,
    /// The GLB `BIN` chunk.
    pub(super) blob: Option<Cow<'a, [u8]>>,
    /// What the importer ignored, in words (see [`GltfScene::warnings`](super::GltfScene::warnings)).
    pub(super) warnings: Vec<String>,
}

/// Parses glTF JSON or a GLB container into a validated document and the GLB `BIN` chunk.
///
/// The gltf crate's validation rejects every required extension it does not itself implement,
/// including ones that change nothing here, so this importer decides on `extensionsRequired` first
/// ([`extension_is_harmless`]), then lets the crate validate the rest.
pub(super) fn parse<'a>(
    bytes: &'a [u8],
    limits: &super::limits::ImportLimits,
) -> Result<Parsed<'a>, GltfError<Error>> {
    check_glb_header(bytes)?;
    let parse = |message: String| GltfError::Parse { message };
    let (json, blob) = if bytes.starts_with(b"glTF") {
        let glb = gltf_crate::Glb::from_slice(bytes).map_err(|e| parse(e.to_string()))?;
        (glb.json, glb.bin)
    } else {
        (bytes.into(), None)
    };
    let checked = super::validate::check_json(&json, limits)?;
    let json = checked.rewritten.as_deref().unwrap_or(&json);
    let mut root = gltf_crate::json::Root::from_slice(json).map_err(|e| parse(e.to_string()))?;
    if let Some(name) = root
        .extensions_required
        .iter()
        .find(|name| !extension_is_harmless(name))
    {
        return Err(GltfError::UnsupportedExtension { name: name.clone() });
    }
    root.extensions_required.clear();
    let document = gltf_crate::Document::from_json(root).map_err(|e| parse(e.to_string()))?;
    Ok(Parsed {
        document,
        blob,
        warnings: checked.warnings,
    })
}

/// Whether a required extension can be honoured: KHR_mesh_quantization is read (normalized integer
/// attributes and keys); KHR_animation_pointer's channels at nodes' transforms and morph weights play
/// (the others are ignored with a warning, see `validate::check_json`); material, texture and light
/// extensions do not change skinned geometry. Geometry compression (Draco, meshopt) and anything
/// unknown cannot be.
fn extension_is_harmless(name: &str) -> bool {
    name == "KHR_mesh_quantization"
        || name == "KHR_animation_pointer"
        || name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || matches!(
            name,
            "KHR_lights_punctual" | "EXT_texture_webp" | "MSFT_texture_dds" | "EXT_texture_avif"
        )
}

/// The glTF crate's GLB parser subtracts the header size from the declared length without checking it,
/// so the header is checked here first.
fn check_glb_header(bytes: &[u8]) -> Result<(), GltfError<Error>> {
    if !bytes.starts_with(b"glTF") {
        return Ok(());
    }
    let word = |i: usize| {
        bytes
            .get(i..i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let (Some(version), Some(length)) = (word(4), word(8)) else {
        return Err(GltfError::Glb {
            reason: "the 12-byte header is truncated",
        });
    };
    if version != 2 {
        return Err(GltfError::Glb {
            reason: "only GLB version 2 is supported",
        });
    }
    if length < 12 || length > bytes.len() {
        return Err(GltfError::Glb {
            reason: "the declared length is shorter than the header or longer than the data",
        });
    }
    Ok(())
}
