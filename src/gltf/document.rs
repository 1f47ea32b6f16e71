//! Parsing: the GLB container, the JSON (or GLB JSON chunk) checked and read into the importer's
//! [`schema::Document`](super::schema::Document), and the importer's own decision on required
//! extensions.

use super::error::GltfError;
use super::schema::Document;
use crate::Error;
use serde_json::Value;

/// A parsed file: the typed document and the GLB `BIN` chunk, if any (borrowed from the bytes).
pub(super) struct Parsed<'a> {
    /// The checked document.
    pub(super) document: Document,
    /// The GLB `BIN` chunk.
    pub(super) blob: Option<&'a [u8]>,
    /// What the importer ignored, in words (see [`GltfScene::warnings`](super::GltfScene::warnings)).
    pub(super) warnings: Vec<String>,
}

/// Parses glTF JSON or a GLB container into a checked document and the GLB `BIN` chunk: the JSON is
/// checked by [`validate::check_json`](super::validate), `extensionsRequired` decided here
/// ([`extension_is_harmless`]), and the typed document read from the checked tree.
pub(super) fn parse<'a>(
    bytes: &'a [u8],
    limits: &super::limits::ImportLimits,
) -> Result<Parsed<'a>, GltfError<Error>> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        glb_chunks(bytes)?
    } else {
        (bytes, None)
    };
    let checked = super::validate::check_json(json, limits)?;
    if let Some(required) = checked.value.get("extensionsRequired") {
        let Value::Array(names) = required else {
            return Err(GltfError::Json {
                path: "extensionsRequired".into(),
                reason: "an array of strings is expected",
            });
        };
        for (i, name) in names.iter().enumerate() {
            match name {
                Value::String(name) if extension_is_harmless(name) => {}
                Value::String(name) => {
                    return Err(GltfError::UnsupportedExtension { name: name.clone() })
                }
                _ => {
                    return Err(GltfError::Json {
                        path: format!("extensionsRequired[{i}]"),
                        reason: "a string is expected",
                    })
                }
            }
        }
    }
    let document = Document::from_json(&checked.value, &checked.origins)?;
    Ok(Parsed {
        document,
        blob,
        warnings: checked.warnings,
    })
}

/// Whether a required extension can be honoured: KHR_mesh_quantization is read (normalized integer
/// attributes and keys); KHR_animation_pointer's channels at nodes' transforms and morph weights (and
/// meshes' weights) play
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

/// The little-endian u32 at byte `i` of `bytes`, `None` past their end.
fn le_u32(bytes: &[u8], i: usize) -> Option<usize> {
    bytes
        .get(i..i.checked_add(4)?)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// A GLB container's JSON chunk and its `BIN` chunk, if any.
type Chunks<'a> = (&'a [u8], Option<&'a [u8]>);

/// The GLB container (glTF 2.0, section 4.4): a 12-byte header (magic `glTF`, version 2, total length),
/// a JSON chunk, then an optional `BIN` chunk; chunks are (length, type, data). Returns the JSON
/// chunk's bytes and the `BIN` chunk's, each checked to lie inside the declared length. Chunks of
/// other types after them are skipped, as the spec asks.
fn glb_chunks(bytes: &[u8]) -> Result<Chunks<'_>, GltfError<Error>> {
    let glb = |reason| GltfError::Glb { reason };
    let (Some(version), Some(length)) = (le_u32(bytes, 4), le_u32(bytes, 8)) else {
        return Err(glb("the 12-byte header is truncated"));
    };
    if version != 2 {
        return Err(glb("only GLB version 2 is supported"));
    }
    if length < 12 || length > bytes.len() {
        return Err(glb(
            "the declared length is shorter than the header or longer than the data",
        ));
    }
    let bytes = &bytes[..length];
    let word = |i: usize| le_u32(bytes, i);
    // One chunk at `at`: its type and data, inside the declared length.
    let chunk = |at: usize| -> Result<(usize, &[u8]), GltfError<Error>> {
        let (Some(len), Some(kind)) = (word(at), at.checked_add(4).and_then(word)) else {
            return Err(glb("a chunk header runs past the declared length"));
        };
        let data = at
            .checked_add(8)
            .and_then(|start| Some(start..start.checked_add(len)?))
            .and_then(|range| bytes.get(range))
            .ok_or(glb("a chunk runs past the declared length"))?;
        Ok((kind, data))
    };
    const JSON: usize = 0x4E4F_534A;
    const BIN: usize = 0x004E_4942;
    let (kind, json) = chunk(12)?;
    if kind != JSON {
        return Err(glb("the first chunk is not JSON"));
    }
    let mut at = 20 + json.len();
    let mut bin = None;
    while at < bytes.len() {
        let (kind, data) = chunk(at)?;
        if kind == BIN && bin.is_none() {
            bin = Some(data);
        }
        at = at.saturating_add(8).saturating_add(data.len());
    }
    Ok((json, bin))
}
