//! Building a scene from a parsed file: the node forest as one [`Skeleton`] with its rest pose, the
//! skins ([`Skin`]), the skinned primitive instances, and the clips, assembled into the
//! [`Character`] that runs the frames.

use super::accessors::Reader;
use super::clips::read_clip;
use super::error::GltfError;
use super::limits::ImportLimits;
use super::primitive::{read_primitive, LoadOptions, PrimitiveData, SkinnedPrimitive};
use super::sampling::Clip;
use crate::{Character, CharacterSkin, Error, Skeleton};
use ::gltf as gltf_crate;
use glam::{Mat4, Quat, Vec3};
use gltf_crate::accessor::{DataType, Dimensions};
use std::collections::HashMap;
use std::sync::Arc;

/// One glTF skin.
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    name: Option<String>,
    joints: Vec<usize>,
    inverse_binds: Vec<Mat4>,
    skeleton: Option<usize>,
}

impl Skin {
    /// The skin's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The joints as glTF node indices; palette entry i belongs to node `joints()[i]`.
    pub fn joints(&self) -> &[usize] {
        &self.joints
    }

    /// One inverse bind matrix per joint (identity when the file gives none).
    pub fn inverse_binds(&self) -> &[Mat4] {
        &self.inverse_binds
    }

    /// The `skeleton` root node the file names, if any.
    pub fn skeleton_root(&self) -> Option<usize> {
        self.skeleton
    }
}

/// What a file becomes, before it is a [`GltfScene`](crate::gltf::GltfScene).
pub(super) struct Parts {
    /// The skeleton over every node, its rest pose, the skins and the skinned meshes.
    pub(super) character: Character,
    /// Every node's name, in file order.
    pub(super) node_names: Vec<Option<String>>,
    /// The skins, in file order.
    pub(super) skins: Vec<Skin>,
    /// The skinned primitive instances, sorted by node then primitive (the character's mesh order).
    pub(super) primitives: Vec<SkinnedPrimitive>,
    /// The clips, in file order.
    pub(super) clips: Vec<Clip>,
}

/// Everything after the buffers: nodes, skins, primitives and clips.
pub(super) fn build_scene(r: &Reader<'_>, options: &LoadOptions) -> Result<Parts, Error> {
    let doc = r.doc;
    let limits = &options.limits;
    let n = doc.nodes().len();
    if n == 0 {
        return Err(GltfError::NoNodes.into());
    }
    ImportLimits::check("nodes", n, limits.nodes)?;
    let mut parents: Vec<Option<usize>> = vec![None; n];
    let mut translations = Vec::with_capacity(n);
    let mut rotations = Vec::with_capacity(n);
    let mut scales = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    for node in doc.nodes() {
        let p = node.index();
        for child in node.children() {
            let c = child.index();
            if c == p {
                return Err(GltfError::NodeCycle { node: c }.into());
            }
            if let Some(first) = parents[c] {
                return Err(GltfError::NodeParents {
                    node: c,
                    first,
                    second: p,
                }
                .into());
            }
            parents[c] = Some(p);
        }
        let (t, q, s) = match node.transform() {
            gltf_crate::scene::Transform::Matrix { matrix } => {
                let m = Mat4::from_cols_array_2d(&matrix);
                if !m.is_finite() {
                    return Err(GltfError::NodeTransform { node: p }.into());
                }
                let (s, q, t) = m.to_scale_rotation_translation();
                // A singular matrix has no rotation to recover; its scale already collapses the node.
                let q = if q.is_finite() { q } else { Quat::IDENTITY };
                (t, q, s)
            }
            gltf_crate::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => (
                Vec3::from_array(translation),
                Quat::from_array(rotation),
                Vec3::from_array(scale),
            ),
        };
        if !(t.is_finite() && q.is_finite() && s.is_finite()) {
            return Err(GltfError::NodeTransform { node: p }.into());
        }
        translations.push(t);
        rotations.push(q);
        scales.push(s);
        names.push(node.name().map(str::to_string));
    }
    let skeleton = Skeleton::from_parents(&parents).map_err(|e| match e {
        Error::Cycle { joint } | Error::SelfParent { joint } => {
            Error::Gltf(GltfError::NodeCycle { node: joint })
        }
        other => other,
    })?;
    let level = |node: usize| skeleton.level_index(node).unwrap_or(0);

    let mut skins = Vec::new();
    let mut ibm_cache: HashMap<usize, std::sync::Arc<[f32]>> = HashMap::new();
    for skin in doc.skins() {
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let inverse_binds = match skin.inverse_bind_matrices() {
            Some(acc) => {
                let bad = |reason: String| GltfError::InverseBindMatrices {
                    skin: skin.index(),
                    reason,
                };
                r.check_format(
                    &acc,
                    "inverse bind matrices",
                    &[Dimensions::Mat4],
                    &[DataType::F32],
                )?;
                if acc.count() < joints.len() {
                    return Err(bad(format!(
                        "{} matrices for {} joints",
                        acc.count(),
                        joints.len()
                    ))
                    .into());
                }
                // Skins that share an accessor read it once: many skins naming one large accessor
                // would otherwise read (and check) it again for each.
                let f = match ibm_cache.get(&acc.index()) {
                    Some(f) => f.clone(),
                    None => {
                        let f: std::sync::Arc<[f32]> = r.floats(&acc)?.into();
                        ibm_cache.insert(acc.index(), f.clone());
                        f
                    }
                };
                let m: Vec<Mat4> = f
                    .chunks_exact(16)
                    .take(joints.len())
                    .map(Mat4::from_cols_slice)
                    .collect();
                if let Some(j) = m.iter().position(|m| !m.is_finite()) {
                    return Err(bad(format!("the matrix of joint {j} is not finite")).into());
                }
                m
            }
            None => vec![Mat4::IDENTITY; joints.len()],
        };
        skins.push(Skin {
            name: skin.name().map(str::to_string),
            joints,
            inverse_binds,
            skeleton: skin.skeleton().map(|s| s.index()),
        });
    }

    let mut primitives = Vec::new();
    let mut prepared: HashMap<(usize, usize, usize), Arc<PrimitiveData>> = HashMap::new();
    let mut total_vertices = 0usize;
    let mut output_bytes = 0usize;
    for node in doc.nodes() {
        let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) else {
            continue;
        };
        let joint_count = skins[skin.index()].joints.len();
        for prim in mesh.primitives() {
            let key = (mesh.index(), prim.index(), joint_count);
            let data = match prepared.get(&key) {
                Some(d) => d.clone(),
                None => {
                    let d = Arc::new(read_primitive(
                        r,
                        &prim,
                        mesh.index(),
                        skin.index(),
                        joint_count,
                        options,
                    )?);
                    prepared.insert(key, d.clone());
                    d
                }
            };
            // Every instance costs its own output in every Frame, so the limits count instances.
            let v = data.positions.len();
            total_vertices = total_vertices.saturating_add(v);
            let per_vertex = 12
                + if data.mesh.has_normals() { 12 } else { 0 }
                + if data.mesh.has_tangents() { 16 } else { 0 };
            output_bytes = output_bytes.saturating_add(v.saturating_mul(per_vertex));
            ImportLimits::check("skinned_vertices", total_vertices, limits.skinned_vertices)?;
            ImportLimits::check("output_bytes", output_bytes, limits.output_bytes)?;
            primitives.push(SkinnedPrimitive {
                node: node.index(),
                mesh: mesh.index(),
                primitive: prim.index(),
                skin: skin.index(),
                data,
            });
        }
    }

    let mut clips = Vec::new();
    for anim in doc.animations() {
        clips.push(read_clip(r, &anim, &level, limits.keys_per_channel)?);
    }

    let character = Character::with_shared_meshes(
        skeleton,
        [translations, scales],
        rotations,
        skins
            .iter()
            .map(|s| CharacterSkin {
                joints: s.joints.clone(),
                inverse_binds: s.inverse_binds.clone(),
            })
            .collect(),
        primitives
            .iter()
            .map(|p| (p.data.mesh.clone(), p.skin))
            .collect(),
    )?
    .named("scene", "node");
    Ok(Parts {
        character,
        node_names: names,
        skins,
        primitives,
        clips,
    })
}
