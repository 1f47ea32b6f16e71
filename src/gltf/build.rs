//! Building a scene from a parsed file: the node forest as one [`Skeleton`] with its rest pose, the
//! skins ([`Skin`]), the skinned primitive instances, and the clips, assembled into the
//! [`Character`] that runs the frames.

use super::accessors::Reader;
use super::clips::{read_clip, MorphOutputs};
use super::error::GltfError;
use super::error::{MATRIX_BOTTOM_ROW_TOLERANCE, MATRIX_SHEAR_TOLERANCE};
use super::limits::{ImportLimits, NODE_BYTES};
use super::primitive::{
    read_primitive, read_rigid_primitive, LoadOptions, PrimitiveData, RigidData, RigidPrimitive,
    SkinnedPrimitive,
};
use super::sampling::Clip;
use super::schema::{DataType, Dimensions, Document, Path, Transform};
use crate::character::play::MorphSet;
use crate::{Character, CharacterSkin, Error, Skeleton};
use glam::{Mat4, Quat, Vec3};
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
    /// Each mesh's morph target names (`extras.targetNames`), in file order; empty where it has none.
    pub(super) target_names: Vec<Vec<String>>,
    /// The skins, in file order.
    pub(super) skins: Vec<Skin>,
    /// The skinned primitive instances, sorted by node then primitive (the character's mesh order).
    pub(super) primitives: Vec<SkinnedPrimitive>,
    /// The primitives drawn without a skin in the default scene, sorted by node then primitive (the
    /// character's rigid mesh order).
    pub(super) rigid: Vec<RigidPrimitive>,
    /// The clips, in file order.
    pub(super) clips: Vec<Clip>,
}

/// Everything after the buffers: nodes, skins, primitives and clips.
pub(super) fn build_scene(r: &Reader<'_>, options: &LoadOptions) -> Result<Parts, Error> {
    let doc = r.doc;
    let limits = &options.limits;
    let n = doc.nodes.len();
    if n == 0 {
        return Err(GltfError::NoNodes.into());
    }
    ImportLimits::check("nodes", n, limits.nodes)?;
    r.tally.allocate(n.saturating_mul(NODE_BYTES))?;
    let mut parents: Vec<Option<usize>> = vec![None; n];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut translations = Vec::with_capacity(n);
    let mut rotations = Vec::with_capacity(n);
    let mut scales = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    for (p, node) in doc.nodes.iter().enumerate() {
        for &c in &node.children {
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
            children[p].push(c);
        }
        let (t, q, s) = match node.transform {
            Transform::Matrix(matrix) => {
                let m = Mat4::from_cols_array(&matrix);
                if !m.is_finite() {
                    return Err(GltfError::NodeTransform { node: p }.into());
                }
                check_trs_matrix(p, &m)?;
                let (s, q, t) = m.to_scale_rotation_translation();
                // A singular matrix has no rotation to recover; its scale already collapses the node.
                let q = if q.is_finite() { q } else { Quat::IDENTITY };
                (t, q, s)
            }
            Transform::Decomposed(translation, rotation, scale) => (
                Vec3::from_array(translation),
                Quat::from_array(rotation),
                Vec3::from_array(scale),
            ),
        };
        if !(t.is_finite() && q.is_finite() && s.is_finite()) {
            return Err(GltfError::NodeTransform { node: p }.into());
        }
        let length_squared = q.length_squared();
        if !length_squared.is_normal() {
            return Err(GltfError::NodeRotation {
                node: p,
                length_squared,
            }
            .into());
        }
        translations.push(t);
        rotations.push(q);
        scales.push(s);
        names.push(node.name.clone().unwrap_or_default());
    }
    let skeleton = Skeleton::from_parents(&parents)
        .map_err(|e| match e {
            Error::Cycle { joint } | Error::SelfParent { joint } => {
                Error::Gltf(GltfError::NodeCycle { node: joint })
            }
            other => other,
        })?
        // The nodes' names, so that `skeleton().find("Hand")` works; an unnamed node has none.
        .with_names(names)?;
    let level = |node: usize| skeleton.level_index(node).unwrap_or(0);

    let mut skins = Vec::new();
    let mut ibm_cache: HashMap<usize, std::sync::Arc<[f32]>> = HashMap::new();
    for (skin_index, skin) in doc.skins.iter().enumerate() {
        let joints = skin.joints.clone();
        let inverse_binds = match skin.inverse_bind_matrices {
            Some(acc) => {
                let acc = doc.accessor(acc)?;
                let bad = |reason: String| GltfError::InverseBindMatrices {
                    skin: skin_index,
                    reason,
                };
                r.check_format(
                    acc,
                    "inverse bind matrices",
                    &[Dimensions::Mat4],
                    &[DataType::F32],
                )?;
                if acc.count < joints.len() {
                    return Err(bad(format!(
                        "{} matrices for {} joints",
                        acc.count,
                        joints.len()
                    ))
                    .into());
                }
                // Skins that share an accessor read it once: many skins naming one large accessor
                // would otherwise read (and check) it again for each.
                let f = match ibm_cache.get(&acc.index) {
                    Some(f) => f.clone(),
                    None => {
                        let f: std::sync::Arc<[f32]> = r.floats(acc)?.into();
                        ibm_cache.insert(acc.index, f.clone());
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
            name: skin.name.clone(),
            joints,
            inverse_binds,
            skeleton: skin.skeleton,
        });
    }

    let mesh_targets = morph_target_counts(doc)?;
    let target_names = target_names(doc, &mesh_targets);
    let drawn = default_scene_nodes(doc, &children);
    let animated = animated_nodes(doc, &skins, &parents, &skeleton);

    let mut primitives = Vec::new();
    let mut prepared: HashMap<(usize, usize, usize), Arc<PrimitiveData>> = HashMap::new();
    let mut total_vertices = 0usize;
    let mut output_bytes = 0usize;
    // The output bytes already added to the allocation estimate.
    let mut counted_output = 0usize;
    for (node_index, node) in doc.nodes.iter().enumerate() {
        let (Some(mesh_index), Some(skin)) = (node.mesh, node.skin) else {
            continue;
        };
        let Some(mesh) = doc.meshes.get(mesh_index) else {
            continue;
        };
        let joint_count = skins.get(skin).map_or(0, |s| s.joints.len());
        for prim in &mesh.primitives {
            // Counted before anything is read or made for it: an instance of an empty primitive
            // still costs a record and an output in every frame.
            r.tally.instance()?;
            let key = (mesh_index, prim.index, joint_count);
            let data = match prepared.get(&key) {
                Some(d) => d.clone(),
                None => {
                    let d = Arc::new(read_primitive(
                        r,
                        prim,
                        mesh_index,
                        skin,
                        joint_count,
                        options,
                    )?);
                    prepared.insert(key, d.clone());
                    d
                }
            };
            // Every instance costs its own output in every Frame, so the limits count instances.
            count_output(
                data.positions.len(),
                data.mesh.has_normals(),
                data.mesh.has_tangents(),
                &mut total_vertices,
                &mut output_bytes,
            );
            ImportLimits::check("skinned_vertices", total_vertices, limits.skinned_vertices)?;
            ImportLimits::check("output_bytes", output_bytes, limits.output_bytes)?;
            r.tally.allocate(output_bytes - counted_output)?;
            counted_output = output_bytes;
            primitives.push(SkinnedPrimitive {
                node: node_index,
                mesh: mesh_index,
                primitive: prim.index,
                skin,
                data,
            });
        }
    }

    // Every primitive of a mesh node in the default scene that has no skin follows its node rigidly.
    let mut rigid = Vec::new();
    let mut rigid_read: HashMap<(usize, usize), Arc<RigidData>> = HashMap::new();
    for (node_index, node) in doc.nodes.iter().enumerate() {
        let (Some(mesh_index), None) = (node.mesh, node.skin) else {
            continue;
        };
        let Some(mesh) = doc.meshes.get(mesh_index) else {
            continue;
        };
        if !drawn[node_index] {
            continue;
        }
        for prim in &mesh.primitives {
            r.tally.instance()?;
            let key = (mesh_index, prim.index);
            let data = match rigid_read.get(&key) {
                Some(d) => d.clone(),
                None => {
                    let d = Arc::new(read_rigid_primitive(r, prim, mesh_index)?);
                    rigid_read.insert(key, d.clone());
                    d
                }
            };
            let m = &data.mesh;
            count_output(
                m.vertex_count(),
                m.has_normals(),
                m.has_tangents(),
                &mut total_vertices,
                &mut output_bytes,
            );
            ImportLimits::check("skinned_vertices", total_vertices, limits.skinned_vertices)?;
            ImportLimits::check("output_bytes", output_bytes, limits.output_bytes)?;
            r.tally.allocate(output_bytes - counted_output)?;
            counted_output = output_bytes;
            rigid.push(RigidPrimitive {
                node: node_index,
                mesh: mesh_index,
                primitive: prim.index,
                animated: animated[node_index],
                data,
            });
        }
    }

    // The morph weights each drawn instance starts with: the node's, else the mesh's, else zeros.
    let node_weights = |node: usize| -> Result<Vec<f32>, Error> {
        let Some(gnode) = doc.nodes.get(node) else {
            return Ok(Vec::new());
        };
        let Some((mesh, m)) = gnode.mesh.and_then(|m| Some((m, doc.meshes.get(m)?))) else {
            return Ok(Vec::new());
        };
        let targets = mesh_targets.get(mesh).copied().unwrap_or(0);
        match &gnode.weights {
            Some(w) => check_weights(w, mesh, Some(node), targets),
            None => Ok(m.weights.clone().unwrap_or_else(|| vec![0.0; targets])),
        }
    };
    let mut outputs: HashMap<usize, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (i, p) in primitives.iter().enumerate() {
        outputs.entry(p.node).or_default().0.push(i);
    }
    for (i, p) in rigid.iter().enumerate() {
        outputs.entry(p.node).or_default().1.push(i);
    }
    let morph_outputs = |node: usize| {
        let targets = doc
            .nodes
            .get(node)
            .and_then(|n| n.mesh)
            .and_then(|m| mesh_targets.get(m).copied())
            .unwrap_or(0);
        let (skinned, rigid) = outputs.get(&node).cloned().unwrap_or_default();
        MorphOutputs {
            targets,
            skinned,
            rigid,
        }
    };
    let mut clips = Vec::new();
    for anim in &doc.animations {
        clips.push(read_clip(
            r,
            anim,
            &level,
            &morph_outputs,
            limits.keys_per_channel,
        )?);
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
    let mut character = character.with_shared_rigid(
        rigid
            .iter()
            .map(|p| Ok((p.data.mesh.clone(), p.node, node_weights(p.node)?)))
            .collect::<Result<_, Error>>()?,
    )?;
    for (i, p) in primitives.iter().enumerate() {
        if let Some(morph) = &p.data.morph {
            character = character.with_skinned_morph(i, morph.clone(), node_weights(p.node)?)?;
        }
    }
    // A runtime clip's weight set n is node n's morph weights (GltfScene::runtime_clip), which drive
    // every instance of the node's mesh, skinned or rigid, as GltfScene::sample writes them.
    // One set per node: a clip may animate a node whose mesh has no drawn instance (its set drives
    // nothing, as in GltfScene::sample).
    let sets = doc.nodes.len();
    let character = character.with_morph_sets(
        (0..sets)
            .map(|n| {
                let (skinned, rigid) = outputs.get(&n).cloned().unwrap_or_default();
                MorphSet { skinned, rigid }
            })
            .collect(),
    );
    Ok(Parts {
        character,
        target_names,
        skins,
        primitives,
        rigid,
        clips,
    })
}

/// Adds one primitive instance's output to the running totals that the import limits bound.
fn count_output(
    vertices: usize,
    normals: bool,
    tangents: bool,
    total_vertices: &mut usize,
    output_bytes: &mut usize,
) {
    *total_vertices = total_vertices.saturating_add(vertices);
    let per_vertex = 12 + if normals { 12 } else { 0 } + if tangents { 16 } else { 0 };
    *output_bytes = output_bytes.saturating_add(vertices.saturating_mul(per_vertex));
}

/// Each mesh's morph target count, checked to be the same for all its primitives, and its `weights`
/// checked against it.
fn morph_target_counts(doc: &Document) -> Result<Vec<usize>, Error> {
    let mut counts = Vec::with_capacity(doc.meshes.len());
    for (mesh_index, mesh) in doc.meshes.iter().enumerate() {
        let mut first = None;
        for prim in &mesh.primitives {
            let t = prim.targets.len();
            match first {
                None => first = Some(t),
                Some(f) if f != t => {
                    return Err(GltfError::MorphTargetCounts {
                        mesh: mesh_index,
                        primitive: prim.index,
                        targets: t,
                        first: f,
                    }
                    .into())
                }
                Some(_) => {}
            }
        }
        let targets = first.unwrap_or(0);
        if let Some(w) = &mesh.weights {
            check_weights(w, mesh_index, None, targets)?;
        }
        counts.push(targets);
    }
    Ok(counts)
}

/// Each mesh's morph target names, from `extras.targetNames` (the convention of Blender's exporter and
/// three.js): an array of strings with one name per target. Anything else there (not an array, not
/// strings, another count) gives no names, since `extras` is free-form application data.
fn target_names(doc: &Document, targets: &[usize]) -> Vec<Vec<String>> {
    doc.meshes
        .iter()
        .zip(targets)
        .map(|(mesh, &targets)| {
            mesh.target_names
                .clone()
                .filter(|n| n.len() == targets)
                .unwrap_or_default()
        })
        .collect()
}

/// A `weights` array: one finite weight per target.
fn check_weights(
    w: &[f32],
    mesh: usize,
    node: Option<usize>,
    targets: usize,
) -> Result<Vec<f32>, Error> {
    if w.len() != targets || w.iter().any(|x| !x.is_finite()) {
        return Err(GltfError::MorphWeights {
            mesh,
            node,
            weights: w.len(),
            targets,
        }
        .into());
    }
    Ok(w.to_vec())
}

/// Which nodes the default scene draws (`scene`, else the first scene): its root nodes and their
/// descendants. A file without scenes draws every node.
fn default_scene_nodes(doc: &Document, children: &[Vec<usize>]) -> Vec<bool> {
    let Some(scene) = doc
        .scene
        .and_then(|s| doc.scenes.get(s))
        .or_else(|| doc.scenes.first())
    else {
        return vec![true; children.len()];
    };
    let mut drawn = vec![false; children.len()];
    let mut stack: Vec<usize> = scene.clone();
    // The node graph is a forest (checked when the skeleton was built), so each node is pushed once.
    while let Some(node) = stack.pop() {
        if std::mem::replace(&mut drawn[node], true) {
            continue;
        }
        stack.extend(&children[node]);
    }
    drawn
}

/// Whether each node, or one of its ancestors, is a joint of a skin or the target of a translation,
/// rotation or scale channel: the nodes whose world matrix the animation moves.
fn animated_nodes(
    doc: &Document,
    skins: &[Skin],
    parents: &[Option<usize>],
    skeleton: &Skeleton,
) -> Vec<bool> {
    let n = parents.len();
    let mut animated = vec![false; n];
    for skin in skins {
        for &j in &skin.joints {
            animated[j] = true;
        }
    }
    for anim in &doc.animations {
        for ch in &anim.channels {
            if ch.path != Path::Weights {
                if let Some(a) = animated.get_mut(ch.node) {
                    *a = true;
                }
            }
        }
    }
    // Parents come before their children in level order.
    let mut by_level: Vec<usize> = (0..n).collect();
    by_level.sort_by_key(|&node| skeleton.level_index(node).unwrap_or(0));
    for node in by_level {
        if let Some(p) = parents[node] {
            animated[node] |= animated[p];
        }
    }
    animated
}

/// A node `matrix` is a TRS: its bottom row is 0 0 0 1 and its first three columns are perpendicular,
/// each to within its documented tolerance (a column of zeros, a zero scale, is perpendicular to any).
fn check_trs_matrix(node: usize, m: &Mat4) -> Result<(), Error> {
    let bottom = [m.x_axis.w, m.y_axis.w, m.z_axis.w, m.w_axis.w - 1.0];
    let off_by = bottom.iter().fold(0.0f32, |a, b| a.max(b.abs()));
    if off_by > MATRIX_BOTTOM_ROW_TOLERANCE {
        return Err(GltfError::NodeMatrix {
            node,
            reason: "bottom row",
            off_by,
        }
        .into());
    }
    // In f64, where the squares of finite f32 values neither overflow nor underflow.
    let cols = [m.x_axis, m.y_axis, m.z_axis].map(|c| c.truncate().as_dvec3());
    let mut off_by = 0.0f64;
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        let (a, b) = (cols[i], cols[j]);
        let lengths = a.length() * b.length();
        if lengths > 0.0 {
            off_by = off_by.max((a.dot(b) / lengths).abs());
        }
    }
    if off_by > f64::from(MATRIX_SHEAR_TOLERANCE) {
        return Err(GltfError::NodeMatrix {
            node,
            reason: "shear",
            off_by: off_by as f32,
        }
        .into());
    }
    Ok(())
}
