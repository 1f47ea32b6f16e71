//! Mesh input as given (issue 14): 1 to 16 influences per vertex without padding, the joint count taken
//! from the mesh, builder-style normals, tangents and options. Each rule of the new paths has its test,
//! and a mesh given flat must prepare, and skin, exactly as the same mesh padded to four-wide attributes.

mod common;

use common::{random_transform, random_vec3, Rng};
use glam::{Mat4, Vec3, Vec4};
use ispc_skinning::{
    Attribute, Backend, Error, Format, MeshInput, PaletteMatrix, PrepareOptions, SkinOutput,
    SkinnedMesh, SkinningJob, WeightPolicy, MAX_INFLUENCES, MAX_VERTICES,
};

/// Joints of the random meshes are drawn below this.
const JOINTS: usize = 12;

/// A random mesh with `N` influences per vertex: positions, unit normals, tangents with a handedness
/// sign, joints below `JOINTS` and weights of which about one in five is zero (dropped, as padding is).
struct Case<const N: usize> {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    joints: Vec<[u16; N]>,
    weights: Vec<[f32; N]>,
}

impl<const N: usize> Case<N> {
    fn new(vertices: usize, seed: u64) -> Case<N> {
        let mut rng = Rng::new(seed);
        let mut case = Case {
            positions: Vec::new(),
            normals: Vec::new(),
            tangents: Vec::new(),
            joints: Vec::new(),
            weights: Vec::new(),
        };
        for _ in 0..vertices {
            case.positions.push(random_vec3(&mut rng, -2.0..2.0));
            case.normals
                .push(random_vec3(&mut rng, -1.0..1.0).normalize_or(Vec3::Y));
            let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
            case.tangents
                .push(random_vec3(&mut rng, -1.0..1.0).extend(sign));
            case.joints
                .push(std::array::from_fn(|_| rng.below(JOINTS) as u16));
            let mut w: [f32; N] = std::array::from_fn(|_| match rng.below(5) {
                0 => 0.0,
                _ => rng.range(0.01, 1.0),
            });
            // At least one influence, so that every vertex can be normalized.
            w[rng.below(N)] = rng.range(0.5, 1.0);
            case.weights.push(w);
        }
        case
    }

    fn flat(&self) -> MeshInput<'_> {
        MeshInput::from_influences(&self.positions, &self.joints, &self.weights)
            .normals(Attribute::vec3(&self.normals))
            .tangents(Attribute::vec4(&self.tangents))
    }

    /// The same influences padded with zero weights to JOINTS_0/WEIGHTS_0 (and JOINTS_1/WEIGHTS_1 when
    /// N > 4), as `[u16; 4]` and `[f32; 4]`.
    fn padded(&self) -> Padded {
        let sets = N.div_ceil(4);
        let pad_j =
            |j: &[u16; N], s: usize| std::array::from_fn(|i| *j.get(4 * s + i).unwrap_or(&0));
        let pad_w =
            |w: &[f32; N], s: usize| std::array::from_fn(|i| *w.get(4 * s + i).unwrap_or(&0.0));
        Padded {
            joints: (0..sets)
                .map(|s| self.joints.iter().map(|j| pad_j(j, s)).collect())
                .collect(),
            weights: (0..sets)
                .map(|s| self.weights.iter().map(|w| pad_w(w, s)).collect())
                .collect(),
        }
    }

    fn padded_input<'a>(&'a self, p: &'a Padded) -> MeshInput<'a> {
        let mut input = MeshInput::new(
            Attribute::vec3(&self.positions),
            Attribute::joints_u16(&p.joints[0]),
            Attribute::weights_f32(&p.weights[0]),
        )
        .normals(Attribute::vec3(&self.normals))
        .tangents(Attribute::vec4(&self.tangents));
        if let (Some(j), Some(w)) = (p.joints.get(1), p.weights.get(1)) {
            input.joints[1] = Some(Attribute::joints_u16(j));
            input.weights[1] = Some(Attribute::weights_f32(w));
        }
        input
    }
}

struct Padded {
    joints: Vec<Vec<[u16; 4]>>,
    weights: Vec<Vec<[f32; 4]>>,
}

fn random_palette(n: usize, seed: u64) -> (Vec<Mat4>, Vec<PaletteMatrix>) {
    let mut rng = Rng::new(seed);
    let mats: Vec<Mat4> = (0..n)
        .map(|_| random_transform(&mut rng, 0.8..1.2, -2.0..2.0))
        .collect();
    let palette = mats.iter().map(|m| PaletteMatrix::from_mat4(*m)).collect();
    (mats, palette)
}

/// Skinned positions, normals and tangents.
type Skinned = (Vec<Vec3>, Vec<Vec3>, Vec<Vec4>);

fn skin(mesh: &SkinnedMesh, palette: &[PaletteMatrix], backend: Backend) -> Skinned {
    let n = mesh.vertex_count();
    let (mut p, mut nrm, mut t) = (vec![Vec3::NAN; n], vec![Vec3::NAN; n], vec![Vec4::NAN; n]);
    let output = SkinOutput::positions_normals_tangents(&mut p, &mut nrm, &mut t);
    SkinningJob::new(mesh, palette, output)
        .backend(backend)
        .run()
        .unwrap();
    (p, nrm, t)
}

fn bits(s: &Skinned) -> Vec<u32> {
    let (p, n, t) = s;
    let floats = p.iter().chain(n).flat_map(|v| v.to_array());
    floats
        .chain(t.iter().flat_map(|v| v.to_array()))
        .map(f32::to_bits)
        .collect()
}

/// Every option set the equality is checked under: the defaults, an explicit joint count, kept
/// weights, influence LOD and compact influences.
fn option_sets() -> Vec<(&'static str, PrepareOptions)> {
    vec![
        ("default", PrepareOptions::default()),
        ("explicit joint count", PrepareOptions::new(JOINTS)),
        (
            "kept weights",
            PrepareOptions::default().weights(WeightPolicy::Keep),
        ),
        ("LOD 2", PrepareOptions::default().max_influences(2)),
        (
            "compact",
            PrepareOptions::default().compact_influences(true),
        ),
        (
            "compact, kept, LOD 3",
            PrepareOptions::new(JOINTS)
                .weights(WeightPolicy::Keep)
                .max_influences(3)
                .compact_influences(true),
        ),
    ]
}

/// A mesh given flat prepares to the same `SkinnedMesh` as the same mesh padded to four-wide
/// attributes, under every option set, and skins to the same bits on the reference and every ISA.
fn flat_equals_padded<const N: usize>() {
    let case = Case::<N>::new(301, N as u64);
    let padded = case.padded();
    let (flat, padded) = (case.flat(), case.padded_input(&padded));
    assert_eq!(flat.influences.map(|i| i.per_vertex), Some(N));
    assert!(padded.influences.is_none());
    let (_, palette) = random_palette(JOINTS, 100 + N as u64);
    for (name, options) in option_sets() {
        let a = SkinnedMesh::prepare(&flat, &options).unwrap();
        let b = SkinnedMesh::prepare(&padded, &options).unwrap();
        assert_eq!(a, b, "N = {N}, {name}");
        assert!(a.has_normals() && a.has_tangents());
        // Every joint below JOINTS is used by some vertex of 301.
        assert_eq!(a.joint_count(), JOINTS, "N = {N}, {name}");
        let used: usize = a.influence_histogram()[1..].iter().sum();
        assert_eq!(used, 301, "N = {N}, {name}: every vertex has an influence");
        for backend in common::backends() {
            let (x, y) = (skin(&a, &palette, backend), skin(&b, &palette, backend));
            assert_eq!(bits(&x), bits(&y), "N = {N}, {name}, {backend:?}");
            assert!(
                x.0.iter().all(|p| p.is_finite()),
                "N = {N}, {name}, {backend:?}"
            );
        }
    }
}

#[test]
fn one_to_eight_influences_as_given_equal_the_padded_attributes() {
    flat_equals_padded::<1>();
    flat_equals_padded::<2>();
    flat_equals_padded::<3>();
    flat_equals_padded::<4>();
    flat_equals_padded::<5>();
    flat_equals_padded::<6>();
    flat_equals_padded::<7>();
    flat_equals_padded::<8>();
}

/// The flat influences skin to the blend of the palette matrices by the normalized weights, computed
/// here with glam (a check of the data's meaning, not only of the two paths' agreement).
#[test]
fn flat_influences_skin_to_the_weighted_blend() {
    let case = Case::<3>::new(64, 9);
    let (mats, palette) = random_palette(JOINTS, 10);
    let mesh = SkinnedMesh::prepare(&case.flat(), &PrepareOptions::default()).unwrap();
    for backend in common::backends() {
        let (p, _, _) = skin(&mesh, &palette, backend);
        for v in 0..64 {
            let sum: f32 = case.weights[v].iter().sum();
            let want: Vec3 = (0..3)
                .map(|k| {
                    let m = mats[case.joints[v][k] as usize];
                    m.transform_point3(case.positions[v]) * (case.weights[v][k] / sum)
                })
                .sum();
            assert!(
                (p[v] - want).abs().max_element() < 1e-4,
                "{backend:?} vertex {v}: {} vs {want}",
                p[v]
            );
        }
    }
}

#[test]
fn the_flat_and_the_array_forms_are_one_input() {
    let case = Case::<5>::new(10, 1);
    let flat_j = case.joints.as_flattened();
    let flat_w = case.weights.as_flattened();
    let flat = MeshInput::from_flat_influences(&case.positions, flat_j, flat_w, 5);
    let arrays = MeshInput::from_influences(&case.positions, &case.joints, &case.weights);
    for input in [&flat, &arrays] {
        let i = input.influences.expect("flat influences");
        assert_eq!((i.joints, i.weights, i.per_vertex), (flat_j, flat_w, 5));
        assert!(input
            .joints
            .iter()
            .chain(&input.weights)
            .all(Option::is_none));
        assert!(input.normals.is_none() && input.tangents.is_none());
    }
    let options = PrepareOptions::default();
    assert_eq!(
        SkinnedMesh::prepare(&flat, &options).unwrap(),
        SkinnedMesh::prepare(&arrays, &options).unwrap()
    );
}

/// A newcomer's path: positions, two influences per vertex, default options, skin.
#[test]
fn the_newcomer_path_is_three_lines() {
    let positions = [Vec3::ZERO, Vec3::Y, Vec3::X];
    let joints = [[0u16, 1], [1, 0], [1, 1]];
    let weights = [[0.5f32, 0.5], [1.0, 0.0], [0.25, 0.75]];

    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
    let palette = [
        PaletteMatrix::IDENTITY,
        PaletteMatrix::from_mat4(Mat4::from_translation(Vec3::X)),
    ];
    let mut out = [Vec3::NAN; 3];
    SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut out))
        .run()
        .unwrap();

    assert_eq!(mesh.joint_count(), 2);
    // Vertex 0 blends two joints, vertex 1 has one (the zero weight is dropped), and vertex 2 names
    // joint 1 twice: two influences of the same joint.
    assert_eq!(mesh.influence_histogram()[..3], [0, 1, 2]);
    assert_eq!(
        out,
        [
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0)
        ]
    );
}

#[test]
fn normals_and_tangents_are_added_by_builders_on_every_constructor() {
    let case = Case::<4>::new(20, 4);
    let (nrm, tan) = (
        Attribute::vec3(&case.normals),
        Attribute::vec4(&case.tangents),
    );
    let p = case.padded();
    let four_wide = MeshInput::new(
        Attribute::vec3(&case.positions),
        Attribute::joints_u16(&p.joints[0]),
        Attribute::weights_f32(&p.weights[0]),
    );
    let flat = MeshInput::from_flat_influences(
        &case.positions,
        case.joints.as_flattened(),
        case.weights.as_flattened(),
        4,
    );
    let arrays = MeshInput::from_influences(&case.positions, &case.joints, &case.weights);
    let options = PrepareOptions::default();
    let mut meshes = Vec::new();
    for input in [four_wide, flat, arrays] {
        // The builders set exactly the fields that struct update syntax sets.
        let by_fields = MeshInput {
            normals: Some(nrm),
            tangents: Some(tan),
            ..input
        };
        let built = input.normals(nrm).tangents(tan);
        let a = SkinnedMesh::prepare(&built, &options).unwrap();
        assert_eq!(a, SkinnedMesh::prepare(&by_fields, &options).unwrap());
        assert!(a.has_normals() && a.has_tangents());
        let only_normals = SkinnedMesh::prepare(&input.normals(nrm), &options).unwrap();
        assert!(only_normals.has_normals() && !only_normals.has_tangents());
        let only_tangents = SkinnedMesh::prepare(&input.tangents(tan), &options).unwrap();
        assert!(!only_tangents.has_normals() && only_tangents.has_tangents());
        let bare = SkinnedMesh::prepare(&input, &options).unwrap();
        assert!(!bare.has_normals() && !bare.has_tangents());
        meshes.push(a);
    }
    assert_eq!(meshes[0], meshes[1]);
    assert_eq!(meshes[1], meshes[2]);
    // The builders' attributes are checked like any other.
    let short = Attribute::vec3(&case.normals[..19]);
    assert_eq!(
        SkinnedMesh::prepare(&flat.normals(short), &options).unwrap_err(),
        Error::CountMismatch {
            what: "normals",
            expected: 20,
            got: 19
        }
    );
}

#[test]
fn prepare_options_default_and_setters() {
    let d = PrepareOptions::default();
    assert_eq!(d.joint_count, None);
    assert_eq!(d.weights, WeightPolicy::Normalize);
    assert_eq!(d.max_influences, MAX_INFLUENCES);
    assert!(!d.compact_influences);
    let n = PrepareOptions::new(7);
    assert_eq!(n.joint_count, Some(7));
    assert_eq!(
        (n.weights, n.max_influences, n.compact_influences),
        (d.weights, d.max_influences, d.compact_influences)
    );
    let s = PrepareOptions::default()
        .joint_count(3)
        .weights(WeightPolicy::Keep)
        .max_influences(2)
        .compact_influences(true);
    assert_eq!(s.joint_count, Some(3));
    assert_eq!(s.weights, WeightPolicy::Keep);
    assert_eq!(s.max_influences, 2);
    assert!(s.compact_influences);
    assert!(!s.compact_influences(false).compact_influences);
}

/// The setters change what `prepare` does, each as its field documents.
#[test]
fn each_setter_takes_effect() {
    let case = Case::<8>::new(50, 8);
    let input = case.flat();
    let full = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
    let lod = SkinnedMesh::prepare(&input, &PrepareOptions::default().max_influences(2)).unwrap();
    assert!(lod.influence_histogram()[3..].iter().all(|&c| c == 0));
    assert!(full.influence_histogram()[3..].iter().any(|&c| c > 0));
    let compact =
        SkinnedMesh::prepare(&input, &PrepareOptions::default().compact_influences(true)).unwrap();
    assert!(compact.heap_bytes() < full.heap_bytes());
    // Kept weights that do not sum to 1 scale a vertex about the origin under identity matrices;
    // normalized ones do not.
    let positions = [Vec3::ONE];
    let (joints, weights) = ([[0u16, 1]], [[0.25f32, 0.25]]);
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let palette = [PaletteMatrix::IDENTITY; 2];
    for (policy, want) in [(WeightPolicy::Normalize, 1.0), (WeightPolicy::Keep, 0.5)] {
        let mesh =
            SkinnedMesh::prepare(&input, &PrepareOptions::default().weights(policy)).unwrap();
        let mut out = [Vec3::NAN];
        SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut out))
            .backend(Backend::Reference)
            .run()
            .unwrap();
        assert!(
            (out[0] - Vec3::splat(want)).abs().max_element() < 1e-6,
            "{policy:?}"
        );
    }
    // An explicit joint count is the mesh's joint count, even above the joints it uses.
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default().joint_count(40)).unwrap();
    assert_eq!(mesh.joint_count(), 40);
}

#[test]
fn the_joint_count_is_the_largest_weighted_joint_plus_one() {
    let positions = [Vec3::ZERO, Vec3::X];
    // Joint 9 has a zero weight, so it is not used and does not count.
    let joints = [[2u16, 5, 9], [3, 0, 1]];
    let weights = [[0.5f32, 0.5, 0.0], [1.0, 0.0, 0.0]];
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
    assert_eq!(mesh.joint_count(), 6);
    // The inferred count is the smallest explicit one that is accepted, and gives the same mesh.
    let explicit = SkinnedMesh::prepare(&input, &PrepareOptions::new(6)).unwrap();
    assert_eq!(mesh, explicit);
    assert_eq!(
        SkinnedMesh::prepare(&input, &PrepareOptions::new(5)).unwrap_err(),
        Error::VertexJointOutOfRange {
            vertex: 0,
            joint: 5,
            joints: 5
        }
    );
    // The four-wide attributes infer it the same way.
    let j4 = [[2u16, 5, 9, 0], [3, 0, 1, 0]];
    let w4 = [[0.5f32, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]];
    let four = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&j4),
        Attribute::weights_f32(&w4),
    );
    assert_eq!(
        SkinnedMesh::prepare(&four, &PrepareOptions::default()).unwrap(),
        mesh
    );
}

#[test]
fn a_mesh_with_no_weighted_influence_has_no_joints() {
    let positions = [Vec3::ONE; 3];
    let (joints, weights) = ([[7u16]; 3], [[0.0f32]; 3]);
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let keep = PrepareOptions::default().weights(WeightPolicy::Keep);
    let mesh = SkinnedMesh::prepare(&input, &keep).unwrap();
    assert_eq!(mesh.joint_count(), 0);
    assert_eq!(mesh.influence_histogram()[0], 3);
    // An empty palette is then enough, and linear blend skinning collapses weightless vertices.
    let mut out = [Vec3::NAN; 3];
    for backend in common::backends() {
        SkinningJob::new(&mesh, &[], SkinOutput::positions(&mut out))
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(out, [Vec3::ZERO; 3], "{backend:?}");
    }
    // An empty mesh too.
    let empty = MeshInput::from_flat_influences(&[], &[], &[], 4);
    let mesh = SkinnedMesh::prepare(&empty, &PrepareOptions::default()).unwrap();
    assert_eq!((mesh.vertex_count(), mesh.joint_count()), (0, 0));
}

/// The job, not `prepare`, checks the palette against an inferred joint count.
#[test]
fn a_palette_shorter_than_the_inferred_joint_count_is_refused_by_the_job() {
    let positions = [Vec3::ZERO, Vec3::X];
    let (joints, weights) = ([[0u16, 4], [3, 1]], [[0.5f32, 0.5], [0.5, 0.5]]);
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
    assert_eq!(mesh.joint_count(), 5);
    let palette = [PaletteMatrix::IDENTITY; 5];
    for backend in common::backends() {
        let mut out = [Vec3::NAN; 2];
        let mut job = SkinningJob::new(&mesh, &palette[..4], SkinOutput::positions(&mut out))
            .backend(backend);
        let err = job.run().unwrap_err();
        assert_eq!(
            err,
            Error::CountMismatch {
                what: "palette entries (at least the mesh's joint count)",
                expected: 5,
                got: 4
            },
            "{backend:?}"
        );
        assert!(
            out.iter().all(|p| p.is_nan()),
            "{backend:?}: nothing written"
        );
        SkinningJob::new(&mesh, &palette, SkinOutput::positions(&mut out))
            .backend(backend)
            .run()
            .unwrap();
        assert_eq!(out, positions, "{backend:?}");
    }
}

#[test]
fn influences_per_vertex_are_one_to_sixteen() {
    let positions = [Vec3::ZERO; 2];
    let none = MeshInput::from_influences::<0>(&positions, &[[]; 2], &[[]; 2]);
    let zero = MeshInput::from_flat_influences(&positions, &[], &[], 0);
    for input in [none, zero] {
        let err = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err();
        assert_eq!(
            err,
            Error::InfluenceCount {
                what: "influences per vertex",
                count: 0
            }
        );
        assert_eq!(
            err.to_string(),
            "influence count out of range: influences per vertex is 0, but must be 1 to 16"
        );
    }
    let seventeen = MeshInput::from_influences(&positions, &[[0u16; 17]; 2], &[[0.1f32; 17]; 2]);
    let err = SkinnedMesh::prepare(&seventeen, &PrepareOptions::default()).unwrap_err();
    assert_eq!(
        err,
        Error::InfluenceCount {
            what: "influences per vertex",
            count: 17
        }
    );
    let sixteen = MeshInput::from_influences(&positions, &[[0u16; 16]; 2], &[[0.1f32; 16]; 2]);
    assert!(SkinnedMesh::prepare(&sixteen, &PrepareOptions::default()).is_ok());
    const { assert!(MAX_INFLUENCES == 16) };
}

/// `max_influences` 0 would drop every influence, and 17 cannot be stored: both are refused, not
/// clamped to 1 or 16.
#[test]
fn max_influences_is_one_to_sixteen() {
    let positions = [Vec3::ZERO; 2];
    let input = MeshInput::from_influences(&positions, &[[0u16, 1]; 2], &[[0.5f32, 0.5]; 2]);
    for k in [0, 17, usize::MAX] {
        let err =
            SkinnedMesh::prepare(&input, &PrepareOptions::default().max_influences(k)).unwrap_err();
        assert_eq!(
            err,
            Error::InfluenceCount {
                what: "max_influences",
                count: k
            }
        );
    }
    for k in 1..=16 {
        assert!(SkinnedMesh::prepare(&input, &PrepareOptions::default().max_influences(k)).is_ok());
    }
}

#[test]
fn flat_joints_and_weights_hold_one_set_per_position() {
    let positions = [Vec3::ZERO; 3];
    let joints = [0u16; 6];
    let weights = [0.5f32; 6];
    let options = PrepareOptions::default();
    let short_joints = MeshInput::from_flat_influences(&positions, &joints[..5], &weights, 2);
    let err = SkinnedMesh::prepare(&short_joints, &options).unwrap_err();
    assert_eq!(
        err,
        Error::CountMismatch {
            what: "influence joints (influences per vertex times vertices)",
            expected: 6,
            got: 5
        }
    );
    assert!(err.to_string().contains("influence joints"), "{err}");
    let long_weights = [0.5f32; 7];
    let input = MeshInput::from_flat_influences(&positions, &joints, &long_weights, 2);
    assert_eq!(
        SkinnedMesh::prepare(&input, &options).unwrap_err(),
        Error::CountMismatch {
            what: "influence weights (influences per vertex times vertices)",
            expected: 6,
            got: 7
        }
    );
    // Arrays of the right width but the wrong count are caught the same way.
    let input = MeshInput::from_influences(&positions, &[[0u16; 2]; 3], &[[0.5f32; 2]; 2]);
    assert_eq!(
        SkinnedMesh::prepare(&input, &options).unwrap_err(),
        Error::CountMismatch {
            what: "influence weights (influences per vertex times vertices)",
            expected: 6,
            got: 4
        }
    );
    // A whole number of sets of another width is still the wrong count (3 vertices of 2 is not 2 of 3).
    let input = MeshInput::from_flat_influences(&positions[..2], &joints, &weights, 2);
    assert_eq!(
        SkinnedMesh::prepare(&input, &options).unwrap_err(),
        Error::CountMismatch {
            what: "influence joints (influences per vertex times vertices)",
            expected: 4,
            got: 6
        }
    );
}

#[test]
fn flat_influences_and_four_wide_attributes_are_not_both_given() {
    let positions = [Vec3::ZERO; 2];
    let (joints, weights) = ([[0u16; 2]; 2], [[0.5f32; 2]; 2]);
    let j4 = [[0u16; 4]; 2];
    let w4 = [[1.0f32, 0.0, 0.0, 0.0]; 2];
    let want = Error::CountMismatch {
        what: "influence sources (flat influences or JOINTS_n/WEIGHTS_n, not both)",
        expected: 1,
        got: 2,
    };
    let flat = MeshInput::from_influences(&positions, &joints, &weights);
    let mut both = flat;
    both.joints[0] = Some(Attribute::joints_u16(&j4));
    both.weights[0] = Some(Attribute::weights_f32(&w4));
    let mut one_weight_set = flat;
    one_weight_set.weights[1] = Some(Attribute::weights_f32(&w4));
    let four_wide = MeshInput::new(
        Attribute::vec3(&positions),
        Attribute::joints_u16(&j4),
        Attribute::weights_f32(&w4),
    );
    let plus_flat = MeshInput {
        influences: flat.influences,
        ..four_wide
    };
    for input in [both, one_weight_set, plus_flat] {
        let err = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err();
        assert_eq!(err, want);
        assert!(err.to_string().contains("not both"), "{err}");
    }
    // Neither source: JOINTS_0 is missing, as before.
    let neither = MeshInput {
        influences: None,
        ..flat
    };
    assert_eq!(
        SkinnedMesh::prepare(&neither, &PrepareOptions::default()).unwrap_err(),
        Error::AttributeMissing {
            attribute: "JOINTS_0"
        }
    );
}

#[test]
fn flat_weights_are_finite_and_not_negative() {
    let positions = [Vec3::ZERO; 2];
    let joints = [[0u16, 1, 2]; 2];
    for bad in [
        -0.25f32,
        -0.0 - f32::MIN_POSITIVE,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ] {
        let weights = [[1.0f32, 0.0, 0.0], [0.5, 0.25, bad]];
        let input = MeshInput::from_influences(&positions, &joints, &weights);
        match SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err() {
            Error::InvalidWeight { vertex: 1, weight } => {
                assert_eq!(weight.to_bits(), bad.to_bits())
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    // Weights that overflow when summed are invalid too.
    let weights = [[f32::MAX; 3], [1.0, 0.0, 0.0]];
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    assert!(matches!(
        SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err(),
        Error::InvalidWeight { vertex: 0, .. }
    ));
}

#[test]
fn flat_zero_weights_cannot_be_normalized() {
    let positions = [Vec3::ZERO; 2];
    let (joints, weights) = ([[0u16, 1]; 2], [[0.5f32, 0.5], [0.0, 0.0]]);
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    assert_eq!(
        SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err(),
        Error::ZeroWeights { vertex: 1 }
    );
    let keep = PrepareOptions::default().weights(WeightPolicy::Keep);
    let mesh = SkinnedMesh::prepare(&input, &keep).unwrap();
    assert_eq!(mesh.influence_histogram()[..3], [1, 0, 1]);
}

#[test]
fn flat_joints_are_checked_against_an_explicit_joint_count() {
    let positions = [Vec3::ZERO; 3];
    let joints = [[0u16, 1], [2, 9], [0, 200]];
    let weights = [[0.5f32, 0.5], [0.5, 0.5], [1.0, 0.0]];
    let input = MeshInput::from_influences(&positions, &joints, &weights);
    assert_eq!(
        SkinnedMesh::prepare(&input, &PrepareOptions::new(8)).unwrap_err(),
        Error::VertexJointOutOfRange {
            vertex: 1,
            joint: 9,
            joints: 8
        }
    );
    // Joint 200 has a zero weight: ignored by the check and by the inferred count.
    let mesh = SkinnedMesh::prepare(&input, &PrepareOptions::new(10)).unwrap();
    assert_eq!(mesh.joint_count(), 10);
    let inferred = SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap();
    assert_eq!(inferred.joint_count(), 10);
}

#[test]
fn the_vertex_limit_comes_first_for_flat_influences_too() {
    let n = MAX_VERTICES + 1;
    let input = MeshInput {
        positions: Attribute::new(&[], 0, 12, n, Format::F32x3),
        ..MeshInput::from_flat_influences(&[], &[], &[], 4)
    };
    assert_eq!(
        SkinnedMesh::prepare(&input, &PrepareOptions::default()).unwrap_err(),
        Error::TooManyVertices {
            vertices: n,
            max: MAX_VERTICES
        }
    );
}
