//! A writer of ozz-animation's binary archives (the format ozz-animation-rs 0.11.0 reads with
//! `Skeleton::from_archive` and `Animation::from_archive`): the port has no skeleton or animation builder,
//! so the peer writes the report's rigs and the glTF clip in this format and loads them back through the
//! port's own reader.
//!
//! The layout follows the reader in the port's `archive.rs`, `skeleton.rs` and `animation.rs`:
//! an endianness tag byte, then a NUL-terminated tag and a `u32` version (`ozz-skeleton` 2,
//! `ozz-animation` 7), then the object in native byte order.

/// One joint's local transform: translation, rotation (x, y, z, w) and scale.
pub type Trs = ([f32; 3], [f32; 4], [f32; 3]);

/// One animation track's keys; times are ratios of the clip's duration, strictly increasing within each
/// property and within `[0, 1]`. Keys are interpolated linearly (normalized lerp for rotations).
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Translation keys.
    pub translations: Vec<(f32, [f32; 3])>,
    /// Rotation keys (x, y, z, w).
    pub rotations: Vec<(f32, [f32; 4])>,
    /// Scale keys.
    pub scales: Vec<(f32, [f32; 3])>,
}

impl Track {
    /// A track that holds one transform for the whole clip.
    pub fn constant((t, q, s): Trs) -> Track {
        Track {
            translations: vec![(0.0, t), (1.0, t)],
            rotations: vec![(0.0, q), (1.0, q)],
            scales: vec![(0.0, s), (1.0, s)],
        }
    }
}

/// The tag byte the reader compares with its own: 0 is big endian, anything else little endian.
fn endian_tag() -> u8 {
    u8::from(cfg!(target_endian = "little"))
}

struct Writer(Vec<u8>);

impl Writer {
    fn new(tag: &str, version: u32) -> Writer {
        let mut w = Writer(vec![endian_tag()]);
        w.str(tag);
        w.u32(version);
        w
    }
    fn str(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_ne_bytes());
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_ne_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_ne_bytes());
    }
}

/// A skeleton archive: `parents` (-1 for a root; every parent before its children, as the runtime
/// requires), one rest transform per joint, joint names `j0`, `j1`, ... (the reader keys a map by name,
/// so they must be unique).
///
/// # Panics
/// When `rest` and `parents` differ in length, or a parent does not come before its child.
pub fn skeleton(parents: &[i16], rest: &[Trs]) -> Vec<u8> {
    assert_eq!(parents.len(), rest.len(), "one rest transform per joint");
    for (j, &p) in parents.iter().enumerate() {
        assert!(
            p < 0 || (p as usize) < j,
            "joint {j}: parent {p} must come first"
        );
    }
    let mut w = Writer::new("ozz-skeleton", 2);
    w.u32(parents.len() as u32);
    let names: Vec<String> = (0..parents.len()).map(|j| format!("j{j}")).collect();
    w.u32(names.iter().map(|n| n.len() as u32 + 1).sum());
    for n in &names {
        w.str(n);
    }
    for &p in parents {
        w.0.extend_from_slice(&p.max(-1).to_ne_bytes());
    }
    // SoA blocks of four joints: x of the four translations, then y, z; rotations x, y, z, w; scales.
    // Lanes past the last joint hold the identity, as ozz's builder pads them.
    let identity: Trs = ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3]);
    for block in rest.chunks(4) {
        let lane = |i: usize| block.get(i).unwrap_or(&identity);
        for c in 0..3 {
            (0..4).for_each(|i| w.f32(lane(i).0[c]));
        }
        for c in 0..4 {
            (0..4).for_each(|i| w.f32(lane(i).1[c]));
        }
        for c in 0..3 {
            (0..4).for_each(|i| w.f32(lane(i).2[c]));
        }
    }
    w.0
}

/// An IEEE half float, rounded to nearest (ozz's `Float3Key`).
fn half(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// ozz's compressed quaternion (`QuaternionKey`): the largest component is dropped (its sign kept), the
/// other three are quantized to 15 bits over `[-1/sqrt 2, 1/sqrt 2]`; 2 + 1 + 3 x 15 bits in three `u16`.
fn quat_key(q: [f32; 4]) -> [u16; 3] {
    let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
    let q = q.map(|c| c / n);
    let largest = (0..4)
        .max_by(|&a, &b| q[a].abs().total_cmp(&q[b].abs()))
        .unwrap_or(3);
    let sign = u64::from(q[largest] < 0.0);
    let scale = 32767.0 / std::f32::consts::SQRT_2;
    let offset = -std::f32::consts::SQRT_2 / 2.0;
    let mut bits = largest as u64 | sign << 2;
    for (slot, c) in (0..4).filter(|&c| c != largest).enumerate() {
        let v = ((q[c] - offset) * scale + 0.5).floor().clamp(0.0, 32767.0) as u64;
        bits |= v << (3 + 15 * slot);
    }
    [bits as u16, (bits >> 16) as u16, (bits >> 32) as u16]
}

/// One property's keys across tracks, in the order the sampler consumes them.
struct Sorted<K> {
    /// (index into the time points, offset back to the same track's previous key, key).
    keys: Vec<(usize, u16, K)>,
}

/// Sorts keys as ozz's `AnimationBuilder` does: by the time of the track's previous key (the first key
/// of every track first), then by track. `keys[track]` holds (ratio, key); every track starts at ratio 0
/// and ends at 1. `timepoint` maps a ratio to its index among the sorted unique time points.
fn sort_keys<K: Copy>(keys: &[Vec<(f32, K)>], timepoint: impl Fn(f32) -> usize) -> Sorted<K> {
    // (previous key's time, track, index in track)
    let mut order: Vec<(f32, usize, usize)> = Vec::new();
    for (track, k) in keys.iter().enumerate() {
        for i in 0..k.len() {
            let prev = if i == 0 { -1.0 } else { k[i - 1].0 };
            order.push((prev, track, i));
        }
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut last_at = vec![usize::MAX; keys.len()];
    let mut out = Vec::with_capacity(order.len());
    for (at, &(_, track, i)) in order.iter().enumerate() {
        let previous = if i == 0 { 0 } else { at - last_at[track] };
        let previous = u16::try_from(previous).expect("a track's keys are within 65,535 keys");
        last_at[track] = at;
        let (time, key) = keys[track][i];
        out.push((timepoint(time), previous, key));
    }
    Sorted { keys: out }
}

/// Checks one property's keys: at least two, from ratio 0 to 1, strictly increasing.
fn check_times<K>(track: usize, what: &str, keys: &[(f32, K)]) {
    assert!(keys.len() >= 2, "track {track} {what}: at least two keys");
    assert!(
        keys[0].0 == 0.0 && keys[keys.len() - 1].0 == 1.0,
        "track {track} {what}: keys from ratio 0 to 1"
    );
    assert!(
        keys.windows(2).all(|w| w[0].0 < w[1].0),
        "track {track} {what}: strictly increasing times"
    );
}

/// An animation archive of `duration` seconds with one track per joint. Tracks are padded with identity
/// tracks to a multiple of four, as ozz's builder pads them; rotation keys are flipped into the previous
/// key's hemisphere, as ozz's builder does, because the runtime interpolates with a plain normalized
/// lerp. No iframes are written (the runtime then seeks from the clip's start on a backward jump).
///
/// # Panics
/// When a track breaks the rules of [`Track`].
pub fn animation(duration: f32, name: &str, tracks: &[Track]) -> Vec<u8> {
    let mut tracks = tracks.to_vec();
    for (i, t) in tracks.iter().enumerate() {
        check_times(i, "translations", &t.translations);
        check_times(i, "rotations", &t.rotations);
        check_times(i, "scales", &t.scales);
    }
    let num_tracks = tracks.len();
    let identity: Trs = ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3]);
    while tracks.len() % 4 != 0 {
        tracks.push(Track::constant(identity));
    }
    for t in &mut tracks {
        for i in 1..t.rotations.len() {
            let (a, b) = (t.rotations[i - 1].1, t.rotations[i].1);
            if (0..4).map(|c| a[c] * b[c]).sum::<f32>() < 0.0 {
                t.rotations[i].1 = b.map(|c| -c);
            }
        }
    }
    let mut times: Vec<f32> = tracks
        .iter()
        .flat_map(|t| {
            let tt = t.translations.iter().map(|k| k.0);
            let rr = t.rotations.iter().map(|k| k.0);
            tt.chain(rr).chain(t.scales.iter().map(|k| k.0))
        })
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let timepoint = |t: f32| {
        times
            .binary_search_by(|p| p.total_cmp(&t))
            .expect("every key time is a time point")
    };
    let tr: Vec<Vec<(f32, [u16; 3])>> = tracks
        .iter()
        .map(|t| {
            t.translations
                .iter()
                .map(|&(r, v)| (r, v.map(half)))
                .collect()
        })
        .collect();
    let ro: Vec<Vec<(f32, [u16; 3])>> = tracks
        .iter()
        .map(|t| t.rotations.iter().map(|&(r, q)| (r, quat_key(q))).collect())
        .collect();
    let sc: Vec<Vec<(f32, [u16; 3])>> = tracks
        .iter()
        .map(|t| t.scales.iter().map(|&(r, v)| (r, v.map(half))).collect())
        .collect();
    let parts = [
        sort_keys(&tr, timepoint),
        sort_keys(&ro, timepoint),
        sort_keys(&sc, timepoint),
    ];

    let mut w = Writer::new("ozz-animation", 7);
    w.f32(duration);
    w.u32(num_tracks as u32);
    w.u32(name.len() as u32);
    w.u32(times.len() as u32);
    for p in &parts {
        w.u32(p.keys.len() as u32);
    }
    // Iframe entry and descriptor counts of translations, rotations and scales: none.
    (0..6).for_each(|_| w.u32(0));
    w.0.extend_from_slice(name.as_bytes());
    times.iter().for_each(|&t| w.f32(t));
    // Ratios (indices into the time points) are bytes while there are at most 255 time points.
    let ratio_u8 = times.len() <= usize::from(u8::MAX);
    for p in &parts {
        for &(at, _, _) in &p.keys {
            if ratio_u8 {
                w.0.push(at as u8);
            } else {
                w.u16(at as u16);
            }
        }
        p.keys.iter().for_each(|&(_, prev, _)| w.u16(prev));
        // No iframe entries or descriptors; the interval only decides when a jump reseeks.
        w.f32(1.0);
        for &(_, _, k) in &p.keys {
            k.iter().for_each(|&v| w.u16(v));
        }
    }
    w.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use ozz_animation_rs::{Animation, Archive, SamplingContext, SamplingJobRef, Skeleton};

    #[test]
    fn a_skeleton_reads_back_with_its_parents_and_rest_pose() {
        let parents: Vec<i16> = scenes::humanoid_parents(23)
            .iter()
            .map(|p| p.map_or(-1, |p| p as i16))
            .collect();
        let (t, q, s) = scenes::animated_pose(23, 0.3, true, 5);
        let rest: Vec<Trs> = (0..23)
            .map(|j| (t[j].to_array(), q[j].to_array(), s[j].to_array()))
            .collect();
        let bytes = skeleton(&parents, &rest);
        let sk = Skeleton::from_archive(&mut Archive::new(&bytes[..]).unwrap()).unwrap();
        assert_eq!(sk.num_joints(), 23);
        assert_eq!(sk.joint_parents(), &parents[..]);
        for (j, r) in rest.iter().enumerate() {
            let soa = &sk.joint_rest_poses()[j / 4];
            let l = j % 4;
            let got_t = [
                soa.translation.x[l],
                soa.translation.y[l],
                soa.translation.z[l],
            ];
            let got_q = [
                soa.rotation.x[l],
                soa.rotation.y[l],
                soa.rotation.z[l],
                soa.rotation.w[l],
            ];
            let got_s = [soa.scale.x[l], soa.scale.y[l], soa.scale.z[l]];
            assert_eq!((got_t, got_q, got_s), *r, "joint {j}");
        }
    }

    /// Linear interpolation of (ratio, value) keys at `r`.
    fn lerp<const N: usize>(keys: &[(f32, [f32; N])], r: f32) -> [f32; N] {
        let i = keys
            .iter()
            .rposition(|k| k.0 <= r)
            .unwrap()
            .min(keys.len() - 2);
        let (a, b) = (keys[i], keys[i + 1]);
        let u = (r - a.0) / (b.0 - a.0);
        std::array::from_fn(|c| a.1[c] + (b.1[c] - a.1[c]) * u)
    }

    #[test]
    fn an_animation_samples_back_to_its_keys() {
        // Five tracks (one SoA block and a padded one), each with its own key times, including a
        // rotation that crosses hemispheres between keys.
        let tracks: Vec<Track> = (0..5)
            .map(|i| {
                let f = i as f32;
                let times: Vec<f32> = (0..=(3 + i)).map(|k| k as f32 / (3 + i) as f32).collect();
                Track {
                    translations: times
                        .iter()
                        .map(|&r| (r, [f + r, -r * 2.0, 0.5 * f]))
                        .collect(),
                    rotations: times
                        .iter()
                        .enumerate()
                        .map(|(k, &r)| {
                            let q = glam::Quat::from_rotation_y(r * 2.0 + f * 0.3);
                            let q = if k % 2 == 1 { -q } else { q };
                            (r, q.to_array())
                        })
                        .collect(),
                    scales: vec![(0.0, [1.0; 3]), (0.5, [1.0 + f * 0.1; 3]), (1.0, [1.0; 3])],
                }
            })
            .collect();
        let bytes = animation(2.0, "test", &tracks);
        let anim = Animation::from_archive(&mut Archive::new(&bytes[..]).unwrap()).unwrap();
        assert_eq!((anim.duration(), anim.num_tracks()), (2.0, 5));
        let mut ctx = SamplingContext::from_animation(&anim);
        let mut out = vec![ozz_animation_rs::SoaTransform::default(); 2];
        // Forward, then a backward jump and a wrap, as the report's time sequence does.
        for r in [0.0f32, 0.1, 0.33, 0.5, 0.77, 1.0, 0.2, 0.9, 0.05] {
            let mut job = SamplingJobRef::default();
            job.set_animation(&anim);
            job.set_context(&mut ctx);
            job.set_ratio(r);
            job.set_output(&mut out);
            job.run().unwrap();
            for (i, tr) in tracks.iter().enumerate() {
                let (soa, l) = (&out[i / 4], i % 4);
                let t = [
                    soa.translation.x[l],
                    soa.translation.y[l],
                    soa.translation.z[l],
                ];
                let want = lerp(&tr.translations, r);
                for c in 0..3 {
                    // Half floats keep 11 significant bits.
                    assert!(
                        (t[c] - want[c]).abs() <= 2e-3 * (1.0 + want[c].abs()),
                        "r {r} track {i}: {t:?} vs {want:?}"
                    );
                }
                let q = glam::Quat::from_xyzw(
                    soa.rotation.x[l],
                    soa.rotation.y[l],
                    soa.rotation.z[l],
                    soa.rotation.w[l],
                );
                // The keys' own angles, interpolated: the writer flipped the odd keys back.
                let k = tr
                    .rotations
                    .iter()
                    .rposition(|k| k.0 <= r)
                    .unwrap()
                    .min(tr.rotations.len() - 2);
                let (a, b) = (tr.rotations[k], tr.rotations[k + 1]);
                let (qa, qb) = (glam::Quat::from_array(a.1), glam::Quat::from_array(b.1));
                let want = qa.slerp(qb, (r - a.0) / (b.0 - a.0));
                assert!(
                    q.dot(want).abs() > 1.0 - 1e-5,
                    "r {r} track {i}: {q:?} vs {want:?}"
                );
                let s = [soa.scale.x[l], soa.scale.y[l], soa.scale.z[l]];
                let want = lerp(&tr.scales, r);
                assert!(
                    (s[0] - want[0]).abs() < 2e-3,
                    "r {r} track {i}: {s:?} vs {want:?}"
                );
            }
        }
    }

    #[test]
    fn quaternion_keys_decode_to_the_quaternion() {
        // Decodes as the port's QuaternionKey::decompress does.
        for q in [
            [0.1f32, -0.7, 0.3, 0.6],
            [0.9, 0.1, -0.2, 0.3],
            [0.0, 0.0, 0.0, -1.0],
        ] {
            let k = quat_key(q);
            let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
            let packed = (k[0] as u32 >> 3) | ((k[1] as u32) << 13) | ((k[2] as u32) << 29);
            let largest = (k[0] & 3) as usize;
            let v = [packed & 0x7fff, (packed >> 15) & 0x7fff, k[2] as u32 >> 1];
            let mut out = [0.0f32; 4];
            let mut slot = 0;
            for (c, o) in out.iter_mut().enumerate() {
                if c != largest {
                    *o = v[slot] as f32 * std::f32::consts::SQRT_2 / 32767.0
                        - std::f32::consts::SQRT_2 / 2.0;
                    slot += 1;
                }
            }
            let w = (1.0 - out.iter().map(|c| c * c).sum::<f32>())
                .max(0.0)
                .sqrt();
            out[largest] = if k[0] >> 2 & 1 == 1 { -w } else { w };
            for c in 0..4 {
                assert!((out[c] - q[c] / n).abs() < 1e-4, "{q:?} -> {out:?}");
            }
        }
    }
}
