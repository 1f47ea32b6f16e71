//! Batch sampling: many instances of a scene, each with its own clip and time, straight into a
//! [`CrowdPose`], and a whole crowd frame in one call.

use super::sampling::{Located, Property, Wrap};
use super::{GltfError, GltfScene};
use crate::backend::Resolved;
use crate::character::crowd::instance_range;
use crate::crowd_buffers::level_block;
use crate::layout::crowd::{CROWD_LANES, TRS_ELEMENTS};
use crate::{CrowdFrame, CrowdPose, Error, Precision, Threads};
use rayon::prelude::*;

impl GltfScene {
    /// Buffers for a crowd of `instances` instances of this scene (see
    /// [`Character::crowd_buffers`](crate::Character::crowd_buffers)).
    ///
    /// # Errors
    /// [`Error::TooManyInstances`], [`Error::TooManyJoints`].
    pub fn crowd_buffers(&self, instances: usize) -> Result<CrowdFrame, Error> {
        self.character.crowd_buffers(instances)
    }

    /// Samples every instance of a crowd: instance `i` plays clip `clips[i]` at time `times[i]` (after
    /// `wrap`), every node without a channel at its rest pose. One pass writes the crowd's AoSoA blocks
    /// directly; with [`Threads::All`] the blocks of 16 instances are spread over rayon's pool.
    ///
    /// # Errors
    /// [`Error::WrongFrame`] for a pose made for another skeleton (another scene's, even with the same
    /// nodes); [`Error::CountMismatch`] when `clips`
    /// or `times` does not have one entry per instance; [`GltfError::InstanceClipOutOfRange`] and
    /// [`GltfError::InstanceTimeNotFinite`] naming the first instance whose clip or time is bad. Nothing
    /// is written when any rule fails.
    ///
    /// This samples with [`Precision::Fast`]; [`evaluate_crowd`](GltfScene::evaluate_crowd) with a
    /// deterministic frame samples in portable arithmetic (the same bits everywhere).
    pub fn sample_crowd(
        &self,
        clips: &[usize],
        times: &[f32],
        wrap: Wrap,
        threads: Threads,
        pose: &mut CrowdPose,
    ) -> Result<(), Error> {
        self.sample_crowd_with(clips, times, (wrap, threads, Precision::Fast), pose)
    }

    /// [`sample_crowd`](GltfScene::sample_crowd) with a precision: [`Precision::Deterministic`]
    /// samples in portable arithmetic, after the floating-point mode of the threads it runs on is
    /// checked ([`Error::FloatEnvironment`]).
    fn sample_crowd_with(
        &self,
        clips: &[usize],
        times: &[f32],
        (wrap, threads, precision): (Wrap, Threads, Precision),
        pose: &mut CrowdPose,
    ) -> Result<(), Error> {
        pose.check_owner(self.character.skeleton())?;
        let n = pose.instances();
        for (what, got) in [
            ("clips (one per crowd instance)", clips.len()),
            ("sample times (one per crowd instance)", times.len()),
        ] {
            if got != n {
                return Err(Error::CountMismatch {
                    what,
                    expected: n,
                    got,
                });
            }
        }
        if let Some((instance, &clip)) = clips
            .iter()
            .enumerate()
            .find(|(_, &c)| c >= self.clips.len())
        {
            return Err(GltfError::InstanceClipOutOfRange {
                instance,
                clip,
                clips: self.clips.len(),
            }
            .into());
        }
        if let Some((instance, &time)) = times.iter().enumerate().find(|(_, t)| !t.is_finite()) {
            return Err(GltfError::InstanceTimeNotFinite { instance, time }.into());
        }
        // The floating-point mode of the threads a deterministic sample runs on.
        Resolved::Reference.with_precision_on(precision, threads)?;
        let portable = precision == Precision::Deterministic;
        let rest = self
            .crowd_rest
            .get_or_init(|| level_block(self.character.level_rest()));
        let most_tracks = self.clips.iter().map(|c| c.tracks).max().unwrap_or(0);
        let sample_block = |(b, block): (usize, &mut [f32])| {
            block.copy_from_slice(&rest[..block.len()]);
            let first = b * CROWD_LANES;
            let lanes = CROWD_LANES.min(n - first);
            // Where the instance's time falls on each track, looked up once for all the channels
            // that share the track's key times.
            let mut located: Vec<Option<Located>> = vec![None; most_tracks];
            for lane in 0..lanes {
                let clip = &self.clips[clips[first + lane]];
                let t = clip.wrap_time(times[first + lane], wrap);
                located[..clip.tracks].fill(None);
                for ch in &clip.channels {
                    let at = match located.get_mut(ch.track) {
                        Some(slot) => *slot.get_or_insert_with(|| ch.locate(t)),
                        None => ch.locate(t),
                    };
                    let v = if portable {
                        ch.sample_portable(at)
                    } else {
                        ch.sample_at(at)
                    }
                    .to_array();
                    let (offset, count) = match ch.property {
                        Property::Translation => (0, 3),
                        Property::Rotation => (3, 4),
                        Property::Scale => (7, 3),
                    };
                    let base = ch.level * TRS_ELEMENTS + offset;
                    for (e, &x) in v[..count].iter().enumerate() {
                        block[(base + e) * CROWD_LANES + lane] = x;
                    }
                }
            }
        };
        match threads {
            Threads::One => pose.blocks_mut().enumerate().for_each(sample_block),
            Threads::All => pose.par_blocks_mut().enumerate().for_each(sample_block),
        }
        Ok(())
    }

    /// One whole crowd frame: [`sample_crowd`](GltfScene::sample_crowd) with the frame's threads, each
    /// instance's morph weights from its clip's weight channels at its time (the file's weights where
    /// no channel drives them, as [`evaluate`](GltfScene::evaluate) sets a frame's), then
    /// [`Character::evaluate_crowd`](crate::Character::evaluate_crowd) (world matrices placed by each
    /// instance's root, palettes, skinned vertices morphed by those weights, and the rigid meshes of
    /// every instance), on the frame's threads and with its
    /// [precision](CrowdFrame#structfield.precision). Each instance has what `evaluate` gives a frame
    /// with its clip, time and root (the same bits for a deterministic frame).
    ///
    /// # Errors
    /// Those of the two.
    pub fn evaluate_crowd(
        &self,
        clips: &[usize],
        times: &[f32],
        wrap: Wrap,
        frame: &mut CrowdFrame,
    ) -> Result<(), Error> {
        // A crowd frame of another scene is named as the frame, before its pose is sampled.
        self.character.check_crowd(frame)?;
        let how = (wrap, frame.threads, frame.precision);
        self.sample_crowd_with(clips, times, how, frame.pose_mut())?;
        self.sample_crowd_weights(clips, times, wrap, frame)?;
        self.character.evaluate_crowd(frame)
    }

    /// Every instance's morph weights, skinned and rigid: the scene's own, then what its clip's weight
    /// channels give at its time (as [`evaluate`](GltfScene::evaluate) does for one frame). `clips` and
    /// `times` were checked by the pose's sampling; a lookup that fails is reported, never skipped.
    fn sample_crowd_weights(
        &self,
        clips: &[usize],
        times: &[f32],
        wrap: Wrap,
        frame: &mut CrowdFrame,
    ) -> Result<(), Error> {
        let (mesh_defaults, rigid_defaults) = self.character.default_weights();
        let instances = frame.instances();
        let broken = |what, got| Error::CountMismatch {
            what,
            expected: instances,
            got,
        };
        for (i, (&c, &time)) in clips.iter().zip(times).enumerate() {
            let clip = self.clips.get(c).ok_or(broken("crowd clips", i))?;
            let t = clip.wrap_time(time, wrap);
            for (all, defaults) in [
                (&mut frame.mesh_weights, mesh_defaults),
                (&mut frame.rigid_weights, rigid_defaults),
            ] {
                for (w, d) in all.iter_mut().zip(defaults) {
                    instance_range(i, d.len())
                        .and_then(|range| w.get_mut(range))
                        .ok_or(broken("morph weights", i))?
                        .copy_from_slice(d);
                }
            }
            for ch in &clip.weights {
                for (meshes, all, defaults) in [
                    (&ch.skinned, &mut frame.mesh_weights, mesh_defaults),
                    (&ch.rigid, &mut frame.rigid_weights, rigid_defaults),
                ] {
                    for &m in meshes {
                        let targets = defaults.get(m).map_or(0, Vec::len);
                        let w = all.get_mut(m).ok_or(broken("morphed meshes", m))?;
                        let run = instance_range(i, targets).and_then(|range| w.get_mut(range));
                        ch.sample_into(t, run.ok_or(broken("morph weights", i))?);
                    }
                }
            }
        }
        Ok(())
    }
}
