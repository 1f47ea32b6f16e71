//! What the fuzz targets share: decoding of backends and sizes, a small deterministic mesh, skinning
//! outputs surrounded by guard bytes, and the glTF scene runner of `gltf_json` and `gltf_glb`.
//!
//! Every target asserts that the library returns, `Ok` or a typed `Err`; libFuzzer reports a panic,
//! an AddressSanitizer error, a timeout or an allocation past `-rss_limit_mb` as a crash. The ISPC
//! kernels are not instrumented by AddressSanitizer, so the skinning targets also check guard bytes
//! around every output they hand over ([`GuardedOutput`]).

use arbitrary::Arbitrary;
use ispc_skinning::glam::Vec3;
use ispc_skinning::{Backend, Isa, MeshInput, PrepareOptions, Renormalize, SkinnedMesh, Threads};

pub mod floats;
pub mod guard;
pub mod scene;

pub use guard::{GuardedOutput, OutputSpec};

/// Who runs a call: the two backends every user has, or one named ISA (which may not run here).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum FuzzBackend {
    Auto,
    Reference,
    Sse4,
    Avx2,
    Avx512,
    Neon,
}

impl FuzzBackend {
    pub fn get(self) -> Backend {
        match self {
            FuzzBackend::Auto => Backend::Auto,
            FuzzBackend::Reference => Backend::Reference,
            FuzzBackend::Sse4 => Backend::Isa(Isa::Sse4),
            FuzzBackend::Avx2 => Backend::Isa(Isa::Avx2),
            FuzzBackend::Avx512 => Backend::Isa(Isa::Avx512),
            FuzzBackend::Neon => Backend::Isa(Isa::Neon),
        }
    }

    /// False for a named ISA that cannot run here: the call must then fail.
    pub fn can_run(self) -> bool {
        match self.get() {
            Backend::Isa(isa) => isa.is_available(),
            _ => true,
        }
    }
}

/// A renormalization mode.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum FuzzRenormalize {
    None,
    Precise,
    Fast,
}

impl FuzzRenormalize {
    pub fn get(self) -> Renormalize {
        match self {
            FuzzRenormalize::None => Renormalize::None,
            FuzzRenormalize::Precise => Renormalize::Precise,
            FuzzRenormalize::Fast => Renormalize::Fast,
        }
    }
}

/// One thread or rayon's pool.
pub fn threads(all: bool) -> Threads {
    if all {
        Threads::All
    } else {
        Threads::One
    }
}

/// A length near the one a call expects: exactly it, a little off, small, or anything at all.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Len {
    Exact,
    Off(i8),
    Small(u8),
    Any(usize),
}

impl Len {
    /// The length, for a call that expects `expected`.
    pub fn resolve(self, expected: usize) -> usize {
        match self {
            Len::Exact => expected,
            Len::Off(d) => expected.saturating_add_signed(d as isize),
            Len::Small(n) => n as usize,
            Len::Any(n) => n,
        }
    }

    /// The length of a buffer the target allocates itself: at most `cap` elements.
    pub fn resolve_capped(self, expected: usize, cap: usize) -> usize {
        self.resolve(expected).min(cap)
    }
}

/// A number (an offset, a stride, a count): small, medium or anything.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Num {
    Small(u8),
    Medium(u16),
    Any(usize),
}

impl Num {
    pub fn get(self) -> usize {
        match self {
            Num::Small(n) => n as usize,
            Num::Medium(n) => n as usize,
            Num::Any(n) => n,
        }
    }
}

/// xorshift64*: the targets' own deterministic numbers (vertex data, matrices), so that the fuzzer's
/// bytes go into the shapes and sizes rather than into every float.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// A float in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        self.next_u32() as f32 / 2_147_483_648.0 - 1.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u32() as usize) % n.max(1)
    }
}

/// The shape of a small prepared mesh (at most 255 vertices and 64 joints).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct MeshSpec {
    pub vertices: u8,
    pub joints: u8,
    pub seed: u64,
    pub normals: bool,
    pub tangents: bool,
    pub compact: bool,
    pub keep_weights: bool,
    /// Influence LOD: 1 to 16 (the value modulo 16, plus 1).
    pub max_influences: u8,
    /// Reorder the vertices by [`SkinnedMesh::permutation`], so the influence groups are contiguous and
    /// streaming stores can apply.
    pub sequential: bool,
}

impl MeshSpec {
    /// Prepares the mesh: 1 to 16 influences per vertex, valid weights, unit normals and tangents. It is
    /// valid input, so `prepare` must accept it.
    pub fn build(&self) -> SkinnedMesh {
        let n = self.vertices as usize;
        let joints = 1 + self.joints as usize % 64;
        let mut rng = Rng::new(self.seed);
        let mut positions = Vec::with_capacity(n);
        let mut normals = Vec::with_capacity(n);
        let mut tangents = Vec::with_capacity(n);
        const K: usize = ispc_skinning::MAX_INFLUENCES;
        let mut influence_joints = vec![0u16; K * n];
        let mut influence_weights = vec![0f32; K * n];
        for v in 0..n {
            positions.push(Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 10.0);
            let normal = Vec3::new(rng.unit(), rng.unit(), rng.unit()).normalize_or(Vec3::Y);
            normals.push(normal);
            let sign = if rng.next_u32() & 1 == 0 { 1.0 } else { -1.0 };
            tangents.push(normal.any_orthonormal_vector().extend(sign));
            // Unused slots keep weight 0, so the vertex has 1 to 16 influences.
            for k in 0..1 + rng.below(K) {
                influence_joints[K * v + k] = rng.below(joints) as u16;
                influence_weights[K * v + k] = 0.05 + rng.unit().abs();
            }
        }
        let prepare = |order: &[usize]| {
            let (p, nn, t) = (
                pick(&positions, order, 1),
                pick(&normals, order, 1),
                pick(&tangents, order, 1),
            );
            let (j, w) = (
                pick(&influence_joints, order, K),
                pick(&influence_weights, order, K),
            );
            let mut input = MeshInput::from_flat_influences(&p, &j, &w, K);
            if self.normals {
                input = input.normals(ispc_skinning::Attribute::vec3(&nn));
            }
            if self.tangents {
                input = input.tangents(ispc_skinning::Attribute::vec4(&t));
            }
            let options = PrepareOptions::default()
                .max_influences(1 + self.max_influences as usize % K)
                .compact_influences(self.compact)
                .weights(if self.keep_weights && !self.compact {
                    ispc_skinning::WeightPolicy::Keep
                } else {
                    ispc_skinning::WeightPolicy::Normalize
                });
            SkinnedMesh::prepare(&input, &options).expect("a valid mesh prepares")
        };
        let identity: Vec<usize> = (0..n).collect();
        let mesh = prepare(&identity);
        if !self.sequential {
            return mesh;
        }
        let order: Vec<usize> = mesh.permutation().iter().map(|&v| v as usize).collect();
        let mesh = prepare(&order);
        assert!(
            mesh.streams_sequentially(),
            "a permuted mesh streams sequentially"
        );
        mesh
    }
}

/// `per` items per vertex of `data`, vertex by vertex in `order`.
fn pick<T: Copy>(data: &[T], order: &[usize], per: usize) -> Vec<T> {
    order
        .iter()
        .flat_map(|&v| data[per * v..per * (v + 1)].iter().copied())
        .collect()
}
