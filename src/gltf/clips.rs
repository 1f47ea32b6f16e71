//! Loading animations: each glTF animation's translation, rotation, scale and morph-weight channels
//! into a [`Clip`], with the key times, counts and values checked.

use super::accessors::{Reader, FLOATS_AND_NORMALIZED};
use super::error::GltfError;
use super::limits::ImportLimits;
use super::sampling::{unit, Channel, Clip, Interpolation, Property, WeightChannel};
use super::schema::{Animation, DataType, Dimensions, Interpolation as GltfInterpolation, Path};
use crate::Error;
use glam::Quat;
use std::collections::HashMap;
use std::sync::Arc;

/// What a `weights` channel on a node drives: the morph target count of the node's mesh (0 when it
/// has no mesh or no targets) and the scene's outputs of the node (skinned, then rigid instances).
pub(super) struct MorphOutputs {
    pub(super) targets: usize,
    pub(super) skinned: Vec<usize>,
    pub(super) rigid: Vec<usize>,
}

/// Reads one animation; `level` maps a glTF node index to its level-order index.
pub(super) fn read_clip(
    r: &Reader<'_>,
    anim: &Animation,
    level: &dyn Fn(usize) -> usize,
    morph_outputs: &dyn Fn(usize) -> MorphOutputs,
    max_keys: usize,
) -> Result<Clip, GltfError<Error>> {
    let a = anim.index;
    let mut channels = Vec::new();
    let mut weights = Vec::new();
    // Channels whose key times are the same share a track: the samplers look the time up once per
    // track. Exporters often give every sampler its own copy of one time accessor (CesiumMan has 19,
    // all equal), so equal contents share one array, found by their bits; the track is that array.
    let mut tracks: HashMap<*const f32, usize> = HashMap::new();
    let mut same_times: HashMap<Vec<u32>, Arc<[f32]>> = HashMap::new();
    // Channels that share a sampler's accessors share the keys read from them (read, checked and
    // normalized once), so that many channels on one sampler cannot multiply the file's data. Values
    // are keyed by (accessor, normalized as rotations, values per key); morph weights use the same
    // cache (their accessor is SCALAR, checked before the lookup, so it never shares a key with a
    // translation's or scale's).
    let mut time_cache: HashMap<usize, Arc<[f32]>> = HashMap::new();
    let mut value_cache: HashMap<(usize, bool, usize), Arc<[f32]>> = HashMap::new();
    let (mut start, mut end) = (f32::INFINITY, f32::NEG_INFINITY);
    for ch in &anim.channels {
        let property = match ch.path {
            Path::Translation => Some(Property::Translation),
            Path::Rotation => Some(Property::Rotation),
            Path::Scale => Some(Property::Scale),
            Path::Weights => None,
        };
        let s = ch.sampler;
        let Some(sampler) = anim.samplers.get(s) else {
            return Err(GltfError::Parse {
                message: format!("animation {a}: sampler {s} does not exist"),
            });
        };
        let interpolation = match sampler.interpolation {
            GltfInterpolation::Step => Interpolation::Step,
            GltfInterpolation::Linear => Interpolation::Linear,
            GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let input = r.doc.accessor(sampler.input)?;
        r.check_format(
            input,
            "animation key times",
            &[Dimensions::Scalar],
            &[DataType::F32],
        )?;
        ImportLimits::check("keys_per_channel", input.count, max_keys)?;
        let cached_times = time_cache.get(&input.index).cloned();
        let times: Arc<[f32]> = if let Some(t) = cached_times {
            t
        } else {
            let times = r.floats(input)?;
            // Finite first, so that the ordering test below never compares a NaN. Then every key interval,
            // and the span from the first key, must be finite too: finite keys of huge magnitude
            // (-3e38, 3e38) overflow `t1 - t0` to infinity, and the interpolation weight to NaN.
            let bad_time = times
                .iter()
                .position(|t| !t.is_finite())
                .or_else(|| times.windows(2).position(|w| w[1] <= w[0]).map(|k| k + 1))
                .or_else(|| {
                    let first = times.first().copied().unwrap_or(0.0);
                    times.iter().position(|&t| !(t - first).is_finite())
                });
            if let Some(key) = bad_time {
                return Err(GltfError::KeyTimes {
                    animation: a,
                    sampler: s,
                    key,
                });
            }
            let bits: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
            let times = same_times
                .entry(bits)
                .or_insert_with(|| times.into())
                .clone();
            time_cache.insert(input.index, times.clone());
            times
        };
        let output = r.doc.accessor(sampler.output)?;
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let Some(property) = property else {
            let node = ch.node;
            let outputs = morph_outputs(node);
            r.check_format(
                output,
                "morph weight keys",
                &[Dimensions::Scalar],
                &FLOATS_AND_NORMALIZED,
            )?;
            let expected = times
                .len()
                .checked_mul(per_key)
                .and_then(|x| x.checked_mul(outputs.targets));
            if times.is_empty() || outputs.targets == 0 || expected != Some(output.count) {
                return Err(GltfError::WeightKeys {
                    animation: a,
                    sampler: s,
                    node,
                    times: times.len(),
                    values: output.count,
                    targets: outputs.targets,
                });
            }
            // Channels on one sampler share its values, read and checked once (a pointer at a mesh's
            // weights becomes one channel per node of the mesh).
            let value_key = (output.index, false, per_key);
            let values: Arc<[f32]> = match value_cache.get(&value_key) {
                Some(v) => v.clone(),
                None => {
                    let v = r.floats(output)?;
                    if let Some(i) = v.iter().position(|v| !v.is_finite()) {
                        return Err(GltfError::KeyValue {
                            animation: a,
                            sampler: s,
                            key: i / (outputs.targets * per_key),
                        });
                    }
                    let v: Arc<[f32]> = v.into();
                    value_cache.insert(value_key, v.clone());
                    v
                }
            };
            start = start.min(times[0]);
            end = end.max(times[times.len() - 1]);
            if !(end - start).is_finite() {
                return Err(GltfError::KeyTimes {
                    animation: a,
                    sampler: s,
                    key: 0,
                });
            }
            weights.push(WeightChannel {
                node,
                interpolation,
                times,
                values,
                targets: outputs.targets,
                skinned: outputs.skinned,
                rigid: outputs.rigid,
            });
            continue;
        };
        let c = if property == Property::Rotation {
            r.check_format(
                output,
                "rotation keys",
                &[Dimensions::Vec4],
                &FLOATS_AND_NORMALIZED,
            )?;
            4
        } else {
            r.check_format(
                output,
                "translation or scale keys",
                &[Dimensions::Vec3],
                &[DataType::F32],
            )?;
            3
        };
        if times.is_empty() || times.len().checked_mul(per_key) != Some(output.count) {
            return Err(GltfError::KeyCount {
                animation: a,
                sampler: s,
                times: times.len(),
                values: output.count,
            });
        }
        let value_key = (output.index, property == Property::Rotation, per_key);
        let cached_values = value_cache.get(&value_key).cloned();
        let values: Arc<[f32]> = if let Some(v) = cached_values {
            v
        } else {
            let mut values = r.floats(output)?;
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(GltfError::KeyValue {
                    animation: a,
                    sampler: s,
                    key: i / (c * per_key),
                });
            }
            if property == Property::Rotation {
                // The value of each key (the middle of a cubic key's three), not its tangents.
                let at = if per_key == 3 { 4 } else { 0 };
                let bad = values
                    .chunks_exact(4 * per_key)
                    .enumerate()
                    .find_map(|(key, k)| {
                        let length_squared = Quat::from_slice(&k[at..at + 4]).length_squared();
                        (!length_squared.is_normal()).then_some((key, length_squared))
                    });
                if let Some((key, length_squared)) = bad {
                    return Err(GltfError::RotationKey {
                        animation: a,
                        channel: ch.index,
                        key,
                        length_squared,
                    });
                }
            }
            if property == Property::Rotation && per_key == 1 {
                for q in values.chunks_exact_mut(4) {
                    let u = unit(Quat::from_slice(q));
                    q.copy_from_slice(&u.to_array());
                }
            }
            let values: Arc<[f32]> = values.into();
            value_cache.insert(value_key, values.clone());
            values
        };
        start = start.min(times[0]);
        end = end.max(times[times.len() - 1]);
        // Channels of one clip may start and end far apart; the clip's span must be finite as well,
        // or wrapping a time into it gives NaN. This channel is the one that made it overflow.
        if !(end - start).is_finite() {
            return Err(GltfError::KeyTimes {
                animation: a,
                sampler: s,
                key: 0,
            });
        }
        let node = ch.node;
        let next = tracks.len();
        let track = *tracks.entry(times.as_ptr()).or_insert(next);
        channels.push(Channel {
            node,
            track,
            level: level(node),
            property,
            interpolation,
            times,
            values,
        });
    }
    if channels.is_empty() && weights.is_empty() {
        (start, end) = (0.0, 0.0);
    }
    Ok(Clip {
        name: anim.name.clone(),
        start,
        end,
        channels,
        weights,
        tracks: tracks.len(),
    })
}
