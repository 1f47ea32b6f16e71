//! Procedural scenes for the main job, the benches and the tests: rigs of realistic shape, the level-order
//! seed's large tree, and animated poses. Everything is deterministic (seeded), so runs compare.

use glam::{EulerRot, Mat4, Quat, Vec3, Vec4};

/// A small deterministic generator (xorshift64*), so scenes need no dependency and reproduce exactly.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Parents of a humanoid-like rig with `joints` joints (at least 1), in a build order where every parent
/// comes first: hips, spine, neck, head, legs and arms, then fingers, then face, twist and prop joints.
/// 20 joints give a game-style low rig, 67 a typical character with fingers and face, 120 a detailed one.
pub fn humanoid_parents(joints: usize) -> Vec<Option<usize>> {
    let mut p: Vec<Option<usize>> = Vec::with_capacity(joints.max(1));
    let add = |p: &mut Vec<Option<usize>>, parent: Option<usize>| -> usize {
        p.push(parent);
        p.len() - 1
    };
    let hips = add(&mut p, None);
    let spine1 = add(&mut p, Some(hips));
    let spine2 = add(&mut p, Some(spine1));
    let chest = add(&mut p, Some(spine2));
    let neck = add(&mut p, Some(chest));
    let head = add(&mut p, Some(neck));
    let mut hands = Vec::new();
    for _side in 0..2 {
        let thigh = add(&mut p, Some(hips));
        let shin = add(&mut p, Some(thigh));
        let foot = add(&mut p, Some(shin));
        add(&mut p, Some(foot));
        let clavicle = add(&mut p, Some(chest));
        let upper = add(&mut p, Some(clavicle));
        let fore = add(&mut p, Some(upper));
        hands.push(add(&mut p, Some(fore)));
    }
    // Fingers: five chains of three per hand.
    for &hand in &hands {
        for _finger in 0..5 {
            let a = add(&mut p, Some(hand));
            let b = add(&mut p, Some(a));
            add(&mut p, Some(b));
        }
    }
    // Face and extra joints: short chains under the head, then under the chest and hands, round-robin,
    // until the count is reached.
    let anchors = [head, head, head, chest, hands[0], hands[1], hips];
    let mut k = 0;
    while p.len() < joints {
        let anchor = anchors[k % anchors.len()];
        let a = add(&mut p, Some(anchor));
        if p.len() < joints {
            add(&mut p, Some(a));
        }
        k += 1;
    }
    p.truncate(joints.max(1));
    p
}

/// The benches' rig of `joints` joints: a humanoid up to 120 joints, else a level tree of 9 levels, or
/// of 17 (the level-order seed's shape) from 40,000 joints on.
pub fn bench_rig_parents(joints: usize) -> Vec<Option<usize>> {
    if joints <= 120 {
        humanoid_parents(joints)
    } else {
        level_tree(joints, if joints >= 40_000 { 17 } else { 9 }, 1)
    }
}

/// A random tree of `joints` joints over `levels` levels whose level sizes grow geometrically, each joint
/// picking a random parent in the level above: the shape of the level-order seed's 40,000-bone benchmark
/// (17 levels, about 2.2 children per parent). Returned in level order already.
pub fn level_tree(joints: usize, levels: usize, seed: u64) -> Vec<Option<usize>> {
    let joints = joints.max(1);
    let levels = levels.clamp(1, joints);
    // Growth factor g with 1 + g + ... + g^(levels-1) = joints, by bisection.
    let total = |g: f64| (0..levels).map(|k| g.powi(k as i32)).sum::<f64>();
    let (mut lo, mut hi) = (1.0f64, joints as f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if total(mid) < joints as f64 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let mut sizes: Vec<usize> = (0..levels)
        .map(|k| (lo.powi(k as i32).round() as usize).max(1))
        .collect();
    let sum: usize = sizes.iter().sum();
    if let Some(last) = sizes.last_mut() {
        *last = (*last + joints).saturating_sub(sum).max(1);
    }
    let mut rng = Rng::new(seed);
    let mut parents = Vec::with_capacity(joints);
    let mut prev = 0..0;
    for size in sizes {
        let start = parents.len();
        for _ in 0..size {
            if parents.len() >= joints {
                break;
            }
            parents.push(if prev.is_empty() {
                None
            } else {
                Some(prev.start + rng.below(prev.len()))
            });
        }
        prev = start..parents.len();
    }
    parents
}

/// An animated local pose: per joint a translation (a bone offset), a rotation that swings with `time`,
/// and a scale. With `non_uniform`, scales differ per axis (between 0.8 and 1.25), as in squash-and-
/// stretch rigs; otherwise they are 1. Quaternions are unit length up to rounding.
pub fn animated_pose(
    joints: usize,
    time: f32,
    non_uniform: bool,
    seed: u64,
) -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    let mut rng = Rng::new(seed);
    let mut t = Vec::with_capacity(joints);
    let mut q = Vec::with_capacity(joints);
    let mut s = Vec::with_capacity(joints);
    for _ in 0..joints {
        let offset = Vec3::new(
            rng.range(-0.05, 0.05),
            rng.range(0.05, 0.3),
            rng.range(-0.05, 0.05),
        );
        let (phase, speed, amp) = (
            rng.range(0.0, std::f32::consts::TAU),
            rng.range(0.5, 2.0),
            rng.range(0.1, 0.8),
        );
        let angle = amp * (speed * time + phase).sin();
        t.push(offset);
        q.push(Quat::from_euler(
            EulerRot::XYZ,
            angle,
            0.5 * angle,
            -0.3 * angle,
        ));
        s.push(if non_uniform {
            Vec3::new(
                rng.range(0.8, 1.25),
                rng.range(0.8, 1.25),
                rng.range(0.8, 1.25),
            )
        } else {
            Vec3::ONE
        });
    }
    (t, q, s)
}

/// An additive layer's deltas: the difference of the animated poses (seed `seed`) at times 0 and 0.2,
/// translation and rotation relative (`b - a`, `b * a^-1`) and scale as a ratio (`b / a`), as an
/// additive clip holds. The deltas are small, as real additive clips' are.
pub fn additive_delta_pose(joints: usize, seed: u64) -> (Vec<Vec3>, Vec<Quat>, Vec<Vec3>) {
    let (at, aq, as_) = animated_pose(joints, 0.0, true, seed);
    let (bt, bq, bs) = animated_pose(joints, 0.2, true, seed);
    (
        at.iter().zip(&bt).map(|(a, b)| *b - *a).collect(),
        aq.iter().zip(&bq).map(|(a, b)| *b * a.inverse()).collect(),
        as_.iter().zip(&bs).map(|(a, b)| *b / *a).collect(),
    )
}

/// Per-joint weights like an upper-body layer's mask: 1 on the first half of the joints, fading to 0
/// over the rest.
pub fn upper_body_mask(joints: usize) -> Vec<f32> {
    (0..joints)
        .map(|j| (2.0 - 2.0 * j as f32 / joints as f32).clamp(0.0, 1.0))
        .collect()
}

/// One pose's streams: translations, rotations and scales.
pub type Pose = (Vec<Vec3>, Vec<Quat>, Vec<Vec3>);

/// The report's blending workload on `joints` joints, which the lab's `blend_2layers` and
/// `blend_additive` rows and the ozz-animation-rs peer both blend, so that they do the same work.
#[derive(Clone, Debug)]
pub struct BlendScene {
    /// The rest pose (the fallback below the threshold).
    pub rest: Pose,
    /// The first layer (weight 0.3; masked by `mask` in `blend_additive`).
    pub a: Pose,
    /// The second layer (weight 0.7).
    pub b: Pose,
    /// The additive layer's deltas (weight 0.5, in `blend_additive`).
    pub delta: Pose,
    /// The first layer's per-joint weights in `blend_additive`.
    pub mask: Vec<f32>,
}

/// The layer weights of [`BlendScene`]: the two normal layers, then the additive one.
pub const BLEND_WEIGHTS: [f32; 3] = [0.3, 0.7, 0.5];

/// The blending workload on `joints` joints (see [`BlendScene`]).
pub fn blend_scene(joints: usize) -> BlendScene {
    BlendScene {
        rest: animated_pose(joints, 0.0, true, 1),
        a: animated_pose(joints, 0.4, true, 2),
        b: animated_pose(joints, 1.1, true, 3),
        delta: additive_delta_pose(joints, 4),
        mask: upper_body_mask(joints),
    }
}

/// One cylinder of Davies' skinning scene: a tube along +y weighted to a chain of bones, with its bind
/// pose. Vertices are rings of `segments` around the axis, `rings` of them from y = 0 to y = `height`.
#[derive(Clone, Debug)]
pub struct Cylinder {
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Bind-pose normals (unit, radial).
    pub normals: Vec<Vec3>,
    /// Up to 4 joints per vertex (unused slots have weight 0).
    pub joints: Vec<[u16; 4]>,
    /// Weights, summing to 1.
    pub weights: Vec<[f32; 4]>,
    /// The bone chain: bone i's parent is bone i - 1.
    pub parents: Vec<Option<usize>>,
    /// Bone i's bind-pose model matrix is a translation to y = i * height / bones; these are its inverses.
    pub inverse_binds: Vec<glam::Mat4>,
    /// Distance between bones along y.
    pub bone_length: f32,
}

/// A cylinder of `rings` x `segments` vertices (radius 0.25, height 3) skinned to a chain of `bones`
/// bones. Each vertex is weighted to the `influences` (1 to 4) bones nearest its height, with weights
/// falling off linearly with distance, normalized.
pub fn cylinder(rings: usize, segments: usize, bones: usize, influences: usize) -> Cylinder {
    let (height, radius) = (3.0f32, 0.25f32);
    let bones = bones.max(1);
    let bone_length = height / bones as f32;
    let k = influences.clamp(1, 4).min(bones);
    let mut c = Cylinder {
        positions: Vec::with_capacity(rings * segments),
        normals: Vec::with_capacity(rings * segments),
        joints: Vec::with_capacity(rings * segments),
        weights: Vec::with_capacity(rings * segments),
        parents: (0..bones).map(|i| i.checked_sub(1)).collect(),
        inverse_binds: (0..bones)
            .map(|i| glam::Mat4::from_translation(Vec3::new(0.0, -(i as f32) * bone_length, 0.0)))
            .collect(),
        bone_length,
    };
    for r in 0..rings {
        let y = height * r as f32 / (rings.max(2) - 1) as f32;
        // Bones sorted by the distance from this height to their centre, nearest first.
        let mut near: Vec<(f32, usize)> = (0..bones)
            .map(|b| ((y - (b as f32 + 0.5) * bone_length).abs(), b))
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut joints = [0u16; 4];
        let mut weights = [0.0f32; 4];
        let reach = near[k.min(bones) - 1].0 + bone_length;
        for i in 0..k {
            joints[i] = near[i].1 as u16;
            weights[i] = (reach - near[i].0).max(1e-3);
        }
        let sum: f32 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= sum);
        for s in 0..segments {
            let a = std::f32::consts::TAU * s as f32 / segments as f32;
            let n = Vec3::new(a.cos(), 0.0, a.sin());
            c.positions.push(n * radius + Vec3::new(0.0, y, 0.0));
            c.normals.push(n);
            c.joints.push(joints);
            c.weights.push(weights);
        }
    }
    c
}

/// The local pose of a cylinder's bone chain at `time`: each bone sits `bone_length` above its parent
/// (the first at the origin) and bends about z and x by sine waves. `octaves` sums that many sine terms
/// per angle (1 is Davies' sine-wave animation; 20 stands in for his 20-octave noise, to make animation
/// as costly as skinning). `phase` shifts the animation per cylinder. The pose is written to
/// `(translations, rotations, scales)`, as far as all three reach.
pub fn cylinder_pose(
    bone_length: f32,
    time: f32,
    phase: f32,
    octaves: usize,
    (translations, rotations, scales): (&mut [Vec3], &mut [Quat], &mut [Vec3]),
) {
    let n = translations.len().min(rotations.len()).min(scales.len());
    for i in 0..n {
        let mut bend = 0.0f32;
        let mut twist = 0.0f32;
        let mut amplitude = 0.12f32;
        let mut frequency = 1.0f32;
        for _ in 0..octaves.max(1) {
            bend += amplitude * (frequency * (2.0 * time + phase) + 0.4 * i as f32).sin();
            twist += amplitude * (frequency * (1.3 * time + phase) + 0.7 * i as f32).sin();
            amplitude *= 0.5;
            frequency *= 2.0;
        }
        translations[i] = Vec3::new(0.0, if i == 0 { 0.0 } else { bone_length }, 0.0);
        rotations[i] = Quat::from_euler(EulerRot::ZXY, bend, 0.5 * twist, 0.0);
        scales[i] = Vec3::ONE;
    }
}

/// The main job's default character: a humanoid rig (see [`humanoid_parents`]) with a skin of capsules
/// around its bones, 4 influences per vertex, positions, normals and tangents. Everything is generated, so
/// the report needs no files.
#[derive(Clone, Debug)]
pub struct Character {
    /// Joint parents, parents first (the original order).
    pub parents: Vec<Option<usize>>,
    /// The bind pose as local translations (rotations identity, scales one).
    pub bind_translations: Vec<Vec3>,
    /// Inverse of each joint's bind-pose model matrix, in the original joint order.
    pub inverse_binds: Vec<glam::Mat4>,
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Bind-pose normals (unit).
    pub normals: Vec<Vec3>,
    /// Bind-pose tangents (unit xyz, w = 1).
    pub tangents: Vec<glam::Vec4>,
    /// Four joints per vertex (original joint indices).
    pub joints: Vec<[u16; 4]>,
    /// Four weights per vertex, summing to 1.
    pub weights: Vec<[f32; 4]>,
}

/// A character of `joints` joints (at least 2) whose every bone (joint to parent) carries a capsule of
/// `rings` rings of `segments` vertices: `(joints - 1) * rings * segments` vertices. Each vertex is
/// weighted to its bone's two ends, blending along the bone, plus the parent's parent and the joint's
/// first child with small weights, so every vertex has 4 influences.
pub fn character(joints: usize, rings: usize, segments: usize) -> Character {
    let parents = humanoid_parents(joints.max(2));
    let n = parents.len();
    let (bind_translations, _, _) = animated_pose(n, 0.0, false, 11);
    // Bind-pose model positions: the sum of translations up the chain (parents come first).
    let mut at = vec![Vec3::ZERO; n];
    for j in 0..n {
        at[j] = parents[j].map_or(Vec3::ZERO, |p| at[p]) + bind_translations[j];
    }
    let first_child: Vec<Option<usize>> = (0..n)
        .map(|j| (0..n).find(|&c| parents[c] == Some(j)))
        .collect();
    let mut c = Character {
        inverse_binds: at
            .iter()
            .map(|&p| glam::Mat4::from_translation(-p))
            .collect(),
        parents: parents.clone(),
        bind_translations,
        positions: Vec::new(),
        normals: Vec::new(),
        tangents: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
    };
    for j in 0..n {
        let Some(p) = parents[j] else { continue };
        let (a, b) = (at[p], at[j]);
        let axis = (b - a).normalize_or(Vec3::Y);
        let side = axis.any_orthonormal_vector();
        let up = axis.cross(side);
        let radius = 0.03 + 0.2 * (b - a).length();
        let grand = parents[p].unwrap_or(p);
        let child = first_child[j].unwrap_or(j);
        for r in 0..rings {
            let u = r as f32 / (rings.max(2) - 1) as f32;
            let centre = a.lerp(b, u);
            let w = [0.05 + 0.85 * (1.0 - u), 0.05 + 0.85 * u, 0.05, 0.05];
            for s in 0..segments {
                let angle = std::f32::consts::TAU * s as f32 / segments as f32;
                let normal = side * angle.cos() + up * angle.sin();
                c.positions.push(centre + normal * radius);
                c.normals.push(normal);
                c.tangents.push(axis.extend(1.0));
                c.joints
                    .push([p as u16, j as u16, grand as u16, child as u16]);
                c.weights.push(w);
            }
        }
    }
    c
}

/// The skinning rows' mesh: vertex streams with four influence slots per vertex.
#[derive(Clone, Debug)]
pub struct SkinMesh {
    /// Positions in a 2 x 2 x 2 box above the origin.
    pub pos: Vec<Vec3>,
    /// Unit normals (the normalized positions).
    pub nrm: Vec<Vec3>,
    /// Unit tangents orthogonal to the normals, w = 1.
    pub tan: Vec<Vec4>,
    /// Four neighbouring joints per vertex.
    pub joints: Vec<[u16; 4]>,
    /// Weights summing to 1; the slots past the vertex's influence count are 0.
    pub weights: Vec<[f32; 4]>,
}

/// The report's skinning mesh: `n` vertices with `k` (1 to 4) influences each over `joints` joints (at
/// least 4). The lab's skinning rows and the ozz-animation-rs peer both call it, so they skin the same
/// data.
pub fn skin_mesh(n: usize, k: usize, joints: usize) -> SkinMesh {
    let mut rng = Rng::new(7);
    let pos: Vec<Vec3> = (0..n)
        .map(|_| {
            Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(0.0, 2.0),
                rng.range(-1.0, 1.0),
            )
        })
        .collect();
    let nrm = pos.iter().map(|p| p.normalize_or_zero()).collect();
    let tan = pos
        .iter()
        .map(|p| p.any_orthonormal_vector().extend(1.0))
        .collect();
    // Neighbouring joints, as on a real mesh: a base joint and three near it.
    let joints = (0..n)
        .map(|_| {
            let b = rng.below(joints - 4);
            [b as u16, (b + 1) as u16, (b + 2) as u16, (b + 3) as u16]
        })
        .collect();
    let weights = (0..n)
        .map(|_| {
            let mut w = [
                rng.range(0.1, 1.0),
                rng.range(0.1, 1.0),
                rng.range(0.05, 0.5),
                rng.range(0.05, 0.3),
            ];
            w[k.clamp(1, 4)..].fill(0.0);
            let s: f32 = w.iter().sum();
            w.map(|x| x / s)
        })
        .collect();
    SkinMesh {
        pos,
        nrm,
        tan,
        joints,
        weights,
    }
}

/// The skinning rows' palette: joint i turned by 0.1 i radians about y and raised by 0.05 i.
pub fn skin_palette(joints: usize) -> Vec<Mat4> {
    (0..joints)
        .map(|i| {
            Mat4::from_rotation_translation(
                Quat::from_rotation_y(i as f32 * 0.1),
                Vec3::new(0.0, i as f32 * 0.05, 0.0),
            )
        })
        .collect()
}

/// Key arrays of a procedural clip for `joints` joints, as an animation file would hold them: `keys` key
/// times shared by every joint (30 per second), and per joint a linear translation track, a rotation
/// track (linear on even joints, cubic spline on odd ones: in-tangent, value, out-tangent per key) and a
/// linear scale track. The poses follow [`animated_pose`] with seed `seed`, so different seeds give
/// different clips of the same rig.
pub struct ClipKeys {
    /// Key times, shared by every track.
    pub times: Vec<f32>,
    /// Per joint, one translation per key.
    pub translations: Vec<Vec<Vec3>>,
    /// Per joint, one rotation per key (linear) or three (cubic, on odd joints).
    pub rotations: Vec<Vec<Quat>>,
    /// Per joint, one scale per key.
    pub scales: Vec<Vec<Vec3>>,
}

/// See [`ClipKeys`].
pub fn clip_keys(joints: usize, keys: usize, seed: u64) -> ClipKeys {
    let times: Vec<f32> = (0..keys.max(1)).map(|k| k as f32 / 30.0).collect();
    let poses: Vec<_> = times
        .iter()
        .map(|&t| animated_pose(joints, t, true, seed))
        .collect();
    let mut c = ClipKeys {
        times: times.clone(),
        translations: vec![Vec::new(); joints],
        rotations: vec![Vec::new(); joints],
        scales: vec![Vec::new(); joints],
    };
    for (k, (t, q, s)) in poses.iter().enumerate() {
        for j in 0..joints {
            c.translations[j].push(t[j]);
            c.scales[j].push(s[j]);
            if j % 2 == 1 {
                // Tangents: the difference to the neighbouring keys, per second.
                let prev = poses[k.saturating_sub(1)].1[j];
                let next = poses[(k + 1).min(poses.len() - 1)].1[j];
                let tangent = (next - prev) * 15.0;
                c.rotations[j].extend([tangent, q[j], tangent]);
            } else {
                c.rotations[j].push(q[j]);
            }
        }
    }
    c
}

/// The keys of a clip of `joints` humanoid joints (`humanoid_parents`), `seconds` long at `rate`
/// linear keys per second, shaped as exporters write a character's clip (CesiumMan's has the same
/// shape): a translation, a rotation and a scale track for every joint, the rotations animated
/// (`animated_pose`, seed 7), the root walking forward at 1.2 m/s and bobbing 3 cm, every other
/// translation and every scale constant. The first key's translations make a rest pose.
pub fn exported_keys(joints: usize, seconds: f32, rate: f32) -> ClipKeys {
    let keys = (seconds * rate).round() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / rate).collect();
    let mut c = ClipKeys {
        times: times.clone(),
        translations: vec![Vec::with_capacity(keys); joints],
        rotations: vec![Vec::with_capacity(keys); joints],
        scales: vec![Vec::with_capacity(keys); joints],
    };
    for &t in &times {
        let (mut tr, q, s) = animated_pose(joints, t, false, 7);
        if let Some(root) = tr.first_mut() {
            *root = Vec3::new(0.0, 1.0 + 0.03 * (4.0 * t).sin(), 1.2 * t);
        }
        for j in 0..joints {
            c.translations[j].push(tr[j]);
            c.rotations[j].push(q[j]);
            c.scales[j].push(s[j]);
        }
    }
    c
}
