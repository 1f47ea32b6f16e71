//! The rules of runtime clips: the clip builder names every broken rule (the errors add nothing to the
//! clip, and each prints its rule), and the sampling job checks its output lengths, its time and its
//! results (cubic tangents that overflow are an error, not inf).

use super::{chain, procedural, rest};
use glam::{Quat, Vec3};
use ispc_skinning::{Clip, Error, Interpolation, SamplingContext, SamplingJob, TrsMut};

#[test]
fn the_builder_names_every_broken_rule() {
    let skeleton = chain(2);
    let mut b = Clip::builder(&skeleton);
    let v = [Vec3::ZERO, Vec3::ONE];
    fn err<T>(r: Result<T, Error>) -> Error {
        r.map(|_| ()).unwrap_err()
    }
    assert_eq!(
        err(b.translation(2, Interpolation::Linear, &[0.0, 1.0], &v)),
        Error::JointOutOfRange {
            joint: 2,
            joints: 2
        }
    );
    assert!(matches!(
        err(b.translation(0, Interpolation::Linear, &[0.0], &v)),
        Error::KeyCount {
            keys: 1,
            values: 6,
            per_key: 3,
            ..
        }
    ));
    assert!(matches!(
        err(b.translation(0, Interpolation::CubicSpline, &[0.0, 1.0], &v)),
        Error::KeyCount { per_key: 9, .. }
    ));
    assert!(matches!(
        err(b.translation(0, Interpolation::Linear, &[], &[])),
        Error::KeyCount { keys: 0, .. }
    ));
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[1.0, 1.0], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 1
        }
    );
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[f32::NAN, 1.0], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 0
        }
    );
    assert_eq!(
        err(b.translation(1, Interpolation::Linear, &[-3e38, 3e38], &v)),
        Error::KeyTimes {
            what: "translation keys",
            index: 1,
            key: 1
        }
    );
    assert!(matches!(
        err(b.translation(
            0,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Vec3::ZERO, Vec3::INFINITY]
        )),
        Error::KeyNotFinite {
            index: 0,
            key: 1,
            ..
        }
    ));
    for bad in [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::from_xyzw(1e-20, 0.0, 0.0, 0.0),
    ] {
        assert!(matches!(
            err(b.rotation(1, Interpolation::Step, &[0.0], &[bad])),
            Error::KeyRotation {
                joint: 1,
                key: 0,
                ..
            }
        ));
    }
    // A cubic key's tangents may be zero; its value may not.
    let tangents = [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::IDENTITY,
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    ];
    b.rotation(1, Interpolation::CubicSpline, &[0.0], &tangents)
        .unwrap();
    assert_eq!(
        err(b.rotation(1, Interpolation::Step, &[0.0], &[Quat::IDENTITY])),
        Error::DuplicateTrack {
            what: "rotation keys",
            index: 1
        }
    );
    assert!(matches!(
        err(b.weights(0, 0, Interpolation::Step, &[0.0], &[])),
        Error::KeyCount { .. }
    ));
    // A clip's span must stay finite across tracks.
    b.scale(0, Interpolation::Step, &[-3e38], &[Vec3::ONE])
        .unwrap();
    assert!(matches!(
        err(b.scale(1, Interpolation::Step, &[3e38], &[Vec3::ONE])),
        Error::KeyTimes { index: 1, .. }
    ));
    // The errors added nothing.
    let clip = b.build();
    assert_eq!(clip.tracks(), 2);
    // Every error prints its rule.
    let e = Error::KeyTimes {
        what: "translation keys",
        index: 1,
        key: 1,
    };
    assert!(e.to_string().contains("strictly increasing"), "{e}");
}

#[test]
fn the_job_checks_its_output_and_time() {
    let clip = procedural(4, 5);
    let mut c = SamplingContext::new();
    let (mut t, mut q, mut s) = rest(3);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s)).run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                expected: 4,
                got: 3,
                ..
            })
        ),
        "{e:?}"
    );
    let (mut t, mut q, mut s) = rest(4);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .time(f32::NAN)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::NotFinite {
                what: "sampling time",
                ..
            })
        ),
        "{e:?}"
    );
    let mut w = vec![vec![0.0; 4]];
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .weights(&mut w)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                what: "sampled weight sets",
                ..
            })
        ),
        "{e:?}"
    );
    let mut w = vec![vec![], vec![0.0; 3]];
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .weights(&mut w)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::CountMismatch {
                what: "sampled morph weights",
                ..
            })
        ),
        "{e:?}"
    );
    // Finite keys whose cubic tangents overflow over a long interval: an error, not inf.
    let skeleton = chain(1);
    let mut b = Clip::builder(&skeleton);
    let huge = [
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::splat(3e38),
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::ZERO,
    ];
    b.translation(0, Interpolation::CubicSpline, &[0.0, 1e6], &huge)
        .unwrap();
    let clip = b.build();
    let (mut t, mut q, mut s) = rest(1);
    let e = SamplingJob::new(&clip, &mut c, TrsMut::new(&mut t, &mut q, &mut s))
        .time(5e5)
        .run();
    assert!(
        matches!(
            e,
            Err(Error::ResultNotFinite {
                stage: "sampling",
                ..
            })
        ),
        "{e:?}"
    );
}
