//! `crowd`: crowd buffers of any size, and the crowd jobs on buffers of mismatched sizes.
//!
//! `CrowdPose::new`, `CrowdModels::new`, `CrowdPalettes::new` and `Character::crowd_buffers` with
//! arbitrary instance counts (small, at the documented limit plus or minus a little, or any `usize`)
//! and skeletons up to one joint past `MAX_CROWD_JOINTS`: each returns `TooManyJoints` or
//! `TooManyInstances` exactly where the limits say, before allocating (libFuzzer's `-rss_limit_mb`
//! catches a runaway allocation). Requests inside the limits are made only when they are small, since
//! the limits themselves allow gigabytes. Then `CrowdLocalToModelJob`, `CrowdPaletteJob` and
//! `CrowdSkinningJob` on small buffers whose skeletons, instance counts, entry counts, joints, root
//! counts and outputs may not match: each returns `Ok` or a typed `Err`, `Ok` only when the sizes
//! match, and the skinning job writes nothing outside what it may (guard bytes).
#![no_main]

use arbitrary::Arbitrary;
use ispc_skinning::glam::{Mat4, Quat, Vec3};
use ispc_skinning::{
    Character, CharacterSkin, CrowdLocalToModelJob, CrowdModels, CrowdPaletteJob, CrowdPalettes,
    CrowdPose, CrowdSkinningJob, Error, Skeleton, MAX_CROWD_ELEMENTS, MAX_CROWD_INSTANCES,
    MAX_CROWD_JOINTS,
};
use ispc_skinning_fuzz::{
    threads, FuzzBackend, FuzzRenormalize, GuardedOutput, MeshSpec, OutputSpec, Rng,
};
use libfuzzer_sys::fuzz_target;
use std::borrow::Cow;
use std::sync::OnceLock;

/// Per-instance elements times instances that a request inside the limits may allocate here.
const BUDGET: usize = 1 << 16;

#[derive(Arbitrary, Debug)]
enum Skel {
    /// 1 to 256 joints, parents from the seed.
    Small { joints: u8, seed: u64 },
    /// 4,096 joints: the element limit binds at 16,384 instances.
    Wide,
    /// `MAX_CROWD_JOINTS + 1` joints.
    TooMany,
}

#[derive(Arbitrary, Debug)]
enum Count {
    Small(u8),
    /// The limit that applies, plus or minus a little.
    NearLimit(i8),
    Any(usize),
}

#[derive(Arbitrary, Debug)]
enum Request {
    Pose(Skel, Count),
    Models(Skel, Count),
    Palettes { entries: Count, instances: Count },
    Character(Count),
}

#[derive(Arbitrary, Debug)]
struct Jobs {
    skeleton: (u8, u64),
    other: Option<(u8, u64)>,
    pose_instances: u8,
    models_instances: u8,
    roots: Option<u8>,
    palette_entries: u8,
    palette_instances: u8,
    joints: Vec<u16>,
    inverse_binds: u8,
    mesh: MeshSpec,
    output: OutputSpec,
    backend: FuzzBackend,
    all_threads: bool,
    renormalize: FuzzRenormalize,
}

fuzz_target!(|input: (Request, Jobs)| {
    request(&input.0);
    jobs(&input.1);
});

fn small_skeleton(joints: u8, seed: u64) -> Skeleton {
    let mut rng = Rng::new(seed);
    let parents: Vec<Option<usize>> = (0..=joints as usize)
        .map(|j| (j > 0 && rng.below(8) != 0).then(|| rng.below(j)))
        .collect();
    Skeleton::from_parents(&parents).expect("a valid skeleton")
}

/// The skeleton of a request; the two large ones are built once.
fn skeleton(s: &Skel) -> Cow<'static, Skeleton> {
    static WIDE: OnceLock<Skeleton> = OnceLock::new();
    static TOO_MANY: OnceLock<Skeleton> = OnceLock::new();
    let roots = |n: usize| Skeleton::from_parents(&vec![None; n]).unwrap();
    match *s {
        Skel::Small { joints, seed } => Cow::Owned(small_skeleton(joints, seed)),
        Skel::Wide => Cow::Borrowed(WIDE.get_or_init(|| roots(4096))),
        Skel::TooMany => Cow::Borrowed(TOO_MANY.get_or_init(|| roots(MAX_CROWD_JOINTS + 1))),
    }
}

/// A character of 3 joints, one skin and one 255-vertex mesh, for `crowd_buffers`.
fn character() -> &'static Character {
    static CHARACTER: OnceLock<Character> = OnceLock::new();
    CHARACTER.get_or_init(|| {
        let skeleton = Skeleton::from_parents(&[None, Some(0), Some(1)]).unwrap();
        let (t, q, s) = (
            vec![Vec3::Y; 3],
            vec![Quat::IDENTITY; 3],
            vec![Vec3::ONE; 3],
        );
        let skin = CharacterSkin::from_bind_pose(&skeleton, &t, &q, &s).unwrap();
        let spec = MeshSpec {
            vertices: 255,
            joints: 2,
            seed: 7,
            normals: true,
            tangents: true,
            compact: false,
            keep_weights: false,
            max_influences: 8,
            sequential: false,
        };
        Character::new(skeleton, t, q, s, vec![skin], vec![(spec.build(), 0)]).unwrap()
    })
}

/// The most instances a crowd buffer with `per_instance` elements per instance may hold.
fn limit(per_instance: usize) -> usize {
    MAX_CROWD_INSTANCES.min(MAX_CROWD_ELEMENTS / per_instance.max(1))
}

fn count(c: &Count, limit: usize) -> usize {
    match *c {
        Count::Small(n) => n as usize,
        Count::NearLimit(d) => limit.saturating_add_signed(d as isize),
        Count::Any(n) => n,
    }
}

/// Checks a constructor's result against the limits; `call` runs only when the answer is an error or
/// a small buffer.
fn expect<T>(joints: usize, instances: usize, per: usize, call: impl FnOnce() -> Result<T, Error>) {
    let result = if joints > MAX_CROWD_JOINTS {
        Err("TooManyJoints")
    } else if instances > limit(per) {
        Err("TooManyInstances")
    } else if instances.saturating_mul(per) <= BUDGET {
        Ok(())
    } else {
        return;
    };
    match (result, call()) {
        (Ok(()), Ok(_)) => {}
        (Err("TooManyJoints"), Err(Error::TooManyJoints { .. })) => {}
        (Err("TooManyInstances"), Err(Error::TooManyInstances { .. })) => {}
        (expected, got) => panic!(
            "{instances} instances of {per} elements ({joints} joints): expected {expected:?}, got {:?}",
            got.err()
        ),
    }
}

fn request(r: &Request) {
    match r {
        Request::Pose(s, c) | Request::Models(s, c) => {
            let skeleton = skeleton(s);
            let j = skeleton.len();
            let n = count(c, limit(j));
            if matches!(r, Request::Pose(..)) {
                expect(j, n, j, || CrowdPose::new(&skeleton, n));
            } else {
                expect(j, n, j, || CrowdModels::new(&skeleton, n));
            }
        }
        Request::Palettes { entries, instances } => {
            let e = count(entries, MAX_CROWD_JOINTS);
            let n = count(instances, limit(e));
            expect(e, n, e, || CrowdPalettes::new(e, n));
        }
        Request::Character(c) => {
            let character = character();
            let skin = character.skins()[0].joints.len();
            let (j, v) = (
                character.skeleton().len(),
                character.mesh(0).unwrap().vertex_count(),
            );
            let per = v.max(j).max(skin);
            let n = count(c, limit(per));
            expect(j, n, per, || character.crowd_buffers(n));
        }
    }
}

fn jobs(input: &Jobs) {
    let skeleton = small_skeleton(input.skeleton.0, input.skeleton.1);
    let other = input.other.map(|(j, seed)| small_skeleton(j, seed));
    let models_skeleton = other.as_ref().unwrap_or(&skeleton);
    // Up to 47 instances: three blocks of 16, the last one partial.
    let instances = |n: u8| n as usize % 48;
    let pose = CrowdPose::new(&skeleton, instances(input.pose_instances)).unwrap();
    let mut models = CrowdModels::new(models_skeleton, instances(input.models_instances)).unwrap();
    let roots = input
        .roots
        .map(|n| vec![Mat4::from_translation(Vec3::X); instances(n)]);
    let (backend, threads) = (input.backend.get(), threads(input.all_threads));

    let mut job = CrowdLocalToModelJob::new(&skeleton, &pose, &mut models)
        .backend(backend)
        .threads(threads);
    if let Some(roots) = &roots {
        job = job.roots(roots);
    }
    let result = job.run();
    let sizes = models_skeleton.level_order() == skeleton.level_order()
        && pose.instances() == models.instances()
        && roots.as_ref().is_none_or(|r| r.len() == pose.instances());
    assert!(
        result.is_err() || sizes,
        "mismatched crowd local-to-model accepted"
    );

    let entries = input.palette_entries as usize % 64;
    let mut palettes = CrowdPalettes::new(entries, instances(input.palette_instances)).unwrap();
    let joints: Vec<usize> = input.joints.iter().map(|&j| j as usize).collect();
    let inverse_binds = vec![Mat4::IDENTITY; input.inverse_binds as usize % 64];
    let result = CrowdPaletteJob::new(
        models_skeleton,
        &models,
        &joints,
        &inverse_binds,
        &mut palettes,
    )
    .backend(backend)
    .threads(threads)
    .run();
    let sizes = models.instances() == palettes.instances()
        && entries == inverse_binds.len()
        && joints.len() == entries
        && joints.iter().all(|&j| j < models_skeleton.len());
    assert!(
        result.is_err() || sizes,
        "mismatched crowd palettes accepted"
    );

    let mesh = input.mesh.build();
    let vertices = palettes.instances() * mesh.vertex_count();
    let mut out = GuardedOutput::new(&input.output, vertices);
    let result = CrowdSkinningJob::new(&mesh, &palettes, out.output())
        .renormalize(input.renormalize.get())
        .backend(backend)
        .threads(threads)
        .run();
    // A result that overflowed f32 is refused after the kernels ran (the numeric rules): the call may
    // have written its outputs, as for Ok, but nothing outside them.
    let wrote =
        result.is_ok() || matches!(result, Err(ispc_skinning::Error::ResultNotFinite { .. }));
    out.check(wrote, vertices);
    assert!(
        result.is_err() || palettes.entries() >= mesh.joint_count(),
        "a crowd palette shorter than the mesh's joints accepted"
    );
}
