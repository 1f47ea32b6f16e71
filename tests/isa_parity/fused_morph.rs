//! The fused morph + skin experiment (`experiments::FusedMorphJob`, feature `experiments`) on every ISA
//! against the product pipeline on the same ISA: the morph pre-pass into the frame's copy of the prepared
//! mesh, then skinning ([`Character::skin`]), with the default `Renormalize::None`. Meshes with mixed
//! influence counts, 1 to 16 (a rigid group and listed groups, 9 to 15 promoted to 12 and 16), and with
//! 4 influences everywhere (one contiguous group), with positions, normals and tangents, or positions
//! only, at every harness size.
//!
//! Tolerance: a morphed attribute float is m = base + Σ_t w_t d_t over T active targets; both paths
//! compute it in target order, and each is within gamma_T of the exact value relative to
//! M = |base| + Σ_t |w_t d_t|, so they differ by at most 2T * eps * M (the morph check's bound). A
//! skinned component is then Σ_c B[r][c] m_c (+ B[r][3] for positions) with B = Σ_i w_i P_i, a sum of at
//! most 4k products, each path within gamma_(k+4) of the exact value relative to S = Σ_i |w_i|
//! (Σ_c |P_i[r][c]| M_c + |P_i[r][3]|); the morph's difference adds at most 2T * eps per M_c inside S.
//! So the check allows 2 (T + k + 4) * eps * S. The two kernels compute the same sums in the same order,
//! so in practice they agree exactly where the compiler fuses alike; the summary gives the largest
//! difference seen. Zero-weight targets hold NaN deltas, so reading one fails the check.

use crate::common::{random_vec3, Rng};
use crate::harness::sizes;
use glam::{Quat, Vec3, Vec4};
use ispc_skinning::experiments::FusedMorphJob;
use ispc_skinning::{
    Attribute, Backend, Character, CharacterSkin, Isa, MeshInput, MorphTargets, PrepareOptions,
    Skeleton, SkinnedMesh, SkinnedVertices,
};

const JOINTS: usize = 24;
/// Weights of the 5 targets: target 2 is off (NaN deltas, never to be read).
const WEIGHTS: [f32; 5] = [0.5, -0.3, 0.0, 0.8, 0.25];

/// A mesh for the check: positions, normals, tangents, joints and weights (normalized here, so the
/// tolerance sees the weights prepare keeps).
struct Input {
    pos: Vec<Vec3>,
    nrm: Vec<Vec3>,
    tan: Vec<Vec4>,
    /// Up to 16 influences per vertex (zero weights past the vertex's count).
    joints: Vec<[u16; 16]>,
    weights: Vec<[f32; 16]>,
}

fn input(n: usize, rng: &mut Rng, mixed: bool) -> Input {
    let mut m = Input {
        pos: vec![],
        nrm: vec![],
        tan: vec![],
        joints: vec![],
        weights: vec![],
    };
    for i in 0..n {
        m.pos.push(random_vec3(rng, -2.0..2.0));
        m.nrm.push(random_vec3(rng, -1.0..1.0));
        m.tan
            .push(random_vec3(rng, -1.0..1.0).extend(if i % 3 == 0 { -1.0 } else { 1.0 }));
        // Mixed: 1 to 16 influences (one influence of weight 1 makes the rigid group; 9 to 15 are
        // skinned by the 12- and 16-influence loops).
        let k = if mixed { 1 + rng.below(16) } else { 4 };
        let mut j = [0u16; 16];
        let mut w = [0f32; 16];
        for s in 0..k {
            j[s] = rng.below(JOINTS) as u16;
            w[s] = rng.range(0.05, 1.0);
        }
        let sum: f32 = w.iter().sum();
        w.iter_mut().for_each(|x| *x /= sum);
        m.joints.push(j);
        m.weights.push(w);
    }
    m
}

/// Deltas of every target for one attribute (far larger for the zero-weight target), or none at all.
fn deltas(n: usize, rng: &mut Rng, scale: f32, present: bool) -> Vec<Option<Vec<Vec3>>> {
    WEIGHTS
        .iter()
        .map(|&w| {
            present.then(|| {
                (0..n)
                    .map(|_| {
                        // Deltas must be finite (the numeric rules); the zero-weight target's are
                        // a million times larger, so reading it would still show.
                        let far = if w == 0.0 { 1e6 } else { 1.0 };
                        random_vec3(rng, -scale..scale) * far
                    })
                    .collect()
            })
        })
        .collect()
}

fn character(m: &Input, targets: MorphTargets, pnt: bool) -> Character {
    let parents: Vec<Option<usize>> = (0..JOINTS).map(|j| (j > 0).then(|| (j - 1) / 2)).collect();
    let skeleton = Skeleton::from_parents(&parents).expect("a valid rig");
    let t: Vec<Vec3> = (0..JOINTS)
        .map(|j| Vec3::new(0.0, 0.3 * j as f32, 0.0))
        .collect();
    let (q, s) = (vec![Quat::IDENTITY; JOINTS], vec![Vec3::ONE; JOINTS]);
    let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).expect("a valid skin");
    let mut input = MeshInput::from_flat_influences(
        &m.pos,
        m.joints.as_flattened(),
        m.weights.as_flattened(),
        16,
    );
    if pnt {
        input = input
            .normals(Attribute::vec3(&m.nrm))
            .tangents(Attribute::vec4(&m.tan));
    }
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(JOINTS)).expect("a valid mesh");
    Character::new(skeleton, t, q, s, vec![skin], vec![(mesh, 0)])
        .and_then(|c| c.with_mesh_morph_targets(0, targets))
        .expect("a valid character")
}

pub fn check_fused_morph(isa: Isa) -> Result<String, String> {
    let ispc = check(isa.into())?;
    // The job's serial reference against the product's reference pipeline, the same way.
    let reference = check(Backend::Reference)?;
    Ok(format!("{ispc}; reference: {reference}"))
}

/// The check on one backend: the fused job against the product pipeline, both on `backend`.
fn check(backend: Backend) -> Result<String, String> {
    let mut rng = Rng::new(23);
    let (mut cases, mut worst) = (0, 0.0f32);
    let eps = f32::EPSILON;
    let active = WEIGHTS.iter().filter(|&&w| w != 0.0).count() as f32;
    for &n in sizes() {
        for (mixed, pnt) in [(true, true), (false, true), (true, false)] {
            let m = input(n, &mut rng, mixed);
            let d = [
                deltas(n, &mut rng, 0.1, true),
                deltas(n, &mut rng, 0.2, pnt),
                deltas(n, &mut rng, 0.2, pnt),
            ];
            let [dp, dn, dt] = d.clone();
            let targets = MorphTargets::new(n, dp, dn, dt).map_err(|e| e.to_string())?;
            let character = character(&m, targets, pnt);
            // The product: pose, palettes, morph pre-pass and skinning on this ISA.
            let mut frame = character.frame_buffers().backend(backend);
            for j in 0..JOINTS {
                let (t, _, s) = frame.local(j).expect("in range");
                let q = Quat::from_axis_angle(random_vec3(&mut rng, -1.0..1.0).normalize(), 0.4);
                frame.set_local(j, t, q, s).map_err(|e| e.to_string())?;
            }
            frame
                .set_mesh_weights(0, &WEIGHTS)
                .map_err(|e| e.to_string())?;
            character.evaluate(&mut frame).map_err(|e| e.to_string())?;
            let want = &frame.meshes()[0];
            // The frame's box comes from the pass that wrote the mesh (the fused one on an ISA).
            crate::skin::same_box(frame.bounds(), &want.positions, &|| {
                format!(
                    "fused morph frame {} n={n} mixed={mixed} pnt={pnt}",
                    backend.name()
                )
            })?;
            let palette = &frame.palettes()[0];
            let mut got = SkinnedVertices {
                positions: vec![Vec3::splat(f32::NAN); n],
                normals: pnt.then(|| vec![Vec3::splat(f32::NAN); n]),
                tangents: pnt.then(|| vec![Vec4::splat(f32::NAN); n]),
            };
            FusedMorphJob::new(&character, 0, palette, &WEIGHTS, &mut got)
                .backend(backend)
                .run()
                .map_err(|e| e.to_string())?;
            let attrs = if pnt { 3 } else { 1 };
            for v in 0..n {
                let bind = [m.pos[v], m.nrm[v], m.tan[v].truncate()];
                for s in 0..attrs {
                    // M_c: |base| + Σ |w_t d_t| of each component.
                    let mag = (0..WEIGHTS.len())
                        .filter(|&t| WEIGHTS[t] != 0.0)
                        .fold(bind[s].abs(), |acc, t| {
                            acc + (WEIGHTS[t] * d[s][t].as_ref().expect("present")[v]).abs()
                        });
                    let (g, w): (Vec3, Vec3) = match s {
                        0 => (got.positions[v], want.positions[v]),
                        1 => (
                            got.normals.as_ref().unwrap()[v],
                            want.normals.as_ref().unwrap()[v],
                        ),
                        _ => (
                            got.tangents.as_ref().unwrap()[v].truncate(),
                            want.tangents.as_ref().unwrap()[v].truncate(),
                        ),
                    };
                    for r in 0..3 {
                        let mut bound = 0.0f32;
                        let k = m.weights[v].iter().filter(|&&w| w != 0.0).count() as f32;
                        for i in 0..16 {
                            let p = &palette[m.joints[v][i] as usize].rows[r];
                            let terms =
                                p[0].abs() * mag.x + p[1].abs() * mag.y + p[2].abs() * mag.z;
                            let t = if s == 0 { p[3].abs() } else { 0.0 };
                            bound += m.weights[v][i].abs() * (terms + t);
                        }
                        let tol = 2.0 * (active + k + 4.0) * eps * bound;
                        let diff = (g[r] - w[r]).abs();
                        if diff.is_nan() || diff > tol {
                            return Err(format!(
                                "n={n} mixed={mixed} pnt={pnt} vertex {v} attribute {s} row {r}: got {}, product {} (tolerance {tol})",
                                g[r], w[r]
                            ));
                        }
                        if bound > 0.0 {
                            worst = worst.max(diff / (eps * bound));
                        }
                    }
                }
                if pnt
                    && got.tangents.as_ref().unwrap()[v].w != want.tangents.as_ref().unwrap()[v].w
                {
                    return Err(format!("n={n} vertex {v}: tangent handedness differs"));
                }
            }
            cases += 1;
        }
    }
    let summary = format!("{cases} meshes; largest difference {worst:.2} eps * S");
    if std::env::var_os("FUSED_MORPH_VERBOSE").is_some() {
        eprintln!("skin_morph_fused on {}: {summary}", backend.name());
    }
    Ok(summary)
}
