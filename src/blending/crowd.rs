//! Crowds: the blending job for many instances of one skeleton in one call.
//!
//! Every stream is instance-major: instance `i`'s joints are entries `i * joints .. (i + 1) * joints`,
//! in level order, of each layer's poses and of the output. Each layer has one weight per instance (so
//! each instance can cross-fade at its own pace) and optional per-joint weights shared by every
//! instance (a mask: upper body, one arm). The rest pose is shared. Each instance is blended exactly as
//! [`BlendingJob`](crate::BlendingJob) blends it, with the same rules (see [`crate::BlendingJob`]), so the
//! results are bit-identical to one job per instance, on any number of threads.
//!
//! Rules, besides the single job's: every layer has one weight per instance and
//! `instances * joints` pose entries ([`Error::BlendLayerCount`]), the output holds
//! `instances * joints` entries ([`Error::CountMismatch`]), and each instance's weight times each joint
//! weight is finite ([`Error::BlendWeightSum`] naming the instance), as the single job requires of its
//! layer weight. The numeric rules on pose floats and weight sums are the single job's, per instance.

use crate::backend::{Backend, KernelFamily, Precision, Resolved, Threads};
use crate::error::Error;
use crate::ffi::blend as ffi;
use crate::layout::blend::BlendLayer;
use crate::layout::trs::{Trs, TrsMut};
use crate::reference;
use crate::skeleton::Skeleton;

/// One layer of a crowd blend: every instance's pose, a weight per instance, and optional per-joint
/// weights shared by every instance.
#[derive(Clone, Copy, Debug)]
pub struct CrowdBlendLayer<'a> {
    /// `instances * joints` entries per stream, instance-major, each instance in level order.
    pub poses: Trs<'a>,
    /// One weight per instance: finite and not negative.
    pub weights: &'a [f32],
    /// Optional per-joint weights, one per joint in level order, for every instance.
    pub joint_weights: Option<&'a [f32]>,
}

impl<'a> CrowdBlendLayer<'a> {
    /// A layer with one weight per instance and no joint weights.
    pub fn new(poses: Trs<'a>, weights: &'a [f32]) -> CrowdBlendLayer<'a> {
        CrowdBlendLayer {
            poses,
            weights,
            joint_weights: None,
        }
    }

    /// Sets per-joint weights (one per joint, in level order, shared by every instance).
    pub fn joint_weights(mut self, joint_weights: &'a [f32]) -> CrowdBlendLayer<'a> {
        self.joint_weights = Some(joint_weights);
        self
    }

    /// Instance `i`'s layer (in range: checked by the job).
    fn instance(&self, i: usize, joints: usize) -> BlendLayer<'a> {
        BlendLayer {
            pose: self.poses.slice(i * joints..(i + 1) * joints),
            weight: self.weights[i],
            joint_weights: self.joint_weights,
        }
    }
}

/// Blends the layers of every instance of a crowd.
#[derive(Debug)]
pub struct CrowdBlendingJob<'a> {
    /// The shared skeleton.
    pub skeleton: &'a Skeleton,
    /// Number of instances.
    pub instances: usize,
    /// The shared rest pose, one entry per joint in level order.
    pub rest_pose: Trs<'a>,
    /// The layers blended by weight.
    pub layers: &'a [CrowdBlendLayer<'a>],
    /// The additive layers.
    pub additive_layers: &'a [CrowdBlendLayer<'a>],
    /// As [`BlendingJob::threshold`](crate::BlendingJob::threshold).
    pub threshold: f32,
    /// Who runs the job.
    pub backend: Backend,
    /// One thread, or instances spread over rayon's pool.
    pub threads: Threads,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the same bits on every backend
    /// and platform (the serial reference, as for [`BlendingJob`](crate::BlendingJob)).
    pub precision: Precision,
    /// Output: `instances * joints` entries per stream, instance-major.
    pub output: TrsMut<'a>,
}

impl<'a> CrowdBlendingJob<'a> {
    /// A job with no layers, the default threshold, the automatic backend and one thread.
    pub fn new(
        skeleton: &'a Skeleton,
        instances: usize,
        rest_pose: Trs<'a>,
        output: TrsMut<'a>,
    ) -> CrowdBlendingJob<'a> {
        CrowdBlendingJob {
            skeleton,
            instances,
            rest_pose,
            layers: &[],
            additive_layers: &[],
            threshold: super::DEFAULT_BLEND_THRESHOLD,
            backend: Backend::Auto,
            threads: Threads::One,
            precision: Precision::Fast,
            output,
        }
    }

    /// Sets the layers blended by weight.
    pub fn layers(mut self, layers: &'a [CrowdBlendLayer<'a>]) -> CrowdBlendingJob<'a> {
        self.layers = layers;
        self
    }

    /// Sets the additive layers.
    pub fn additive_layers(mut self, additive: &'a [CrowdBlendLayer<'a>]) -> CrowdBlendingJob<'a> {
        self.additive_layers = additive;
        self
    }

    /// Sets the threshold.
    pub fn threshold(mut self, threshold: f32) -> CrowdBlendingJob<'a> {
        self.threshold = threshold;
        self
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> CrowdBlendingJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the threads the job uses.
    pub fn threads(mut self, threads: Threads) -> CrowdBlendingJob<'a> {
        self.threads = threads;
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the same bits on every backend and
    /// platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> CrowdBlendingJob<'a> {
        self.precision = precision;
        self
    }

    /// Checks every rule without computing anything, the numeric rules on every instance's pose
    /// floats and weight sums included.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan()?;
        let j = self.skeleton.len();
        for i in 0..self.instances {
            let normal: Vec<BlendLayer<'_>> =
                self.layers.iter().map(|l| l.instance(i, j)).collect();
            let added: Vec<BlendLayer<'_>> = self
                .additive_layers
                .iter()
                .map(|l| l.instance(i, j))
                .collect();
            super::check_floats(j, self.rest_pose, &normal, &added, Some(i))?;
        }
        Ok(())
    }

    fn plan(&self) -> Result<Resolved, Error> {
        let j = self.skeleton.len();
        let total = j
            .checked_mul(self.instances)
            .ok_or(Error::TooManyInstances {
                instances: self.instances,
                per_instance: j,
                unit: "joint",
                max: usize::MAX / j.max(1),
            })?;
        // The shared parts (rest pose, joint weights, threshold) through the single job's rules, on the
        // first instance's view of each layer.
        let first = |layers: &[CrowdBlendLayer<'a>]| -> Vec<BlendLayer<'a>> {
            layers
                .iter()
                .map(|l| BlendLayer {
                    pose: self.rest_pose,
                    weight: 0.0,
                    joint_weights: l.joint_weights,
                })
                .collect()
        };
        super::check_inputs(
            j,
            self.rest_pose,
            &first(self.layers),
            &first(self.additive_layers),
            self.threshold,
        )?;
        let all = self
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| (i, false, l))
            .chain(
                self.additive_layers
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (i, true, l)),
            );
        for (layer, additive, l) in all {
            let streams = [
                ("translations", l.poses.translations.len(), total),
                ("rotations", l.poses.rotations.len(), total),
                ("scales", l.poses.scales.len(), total),
                ("instance weights", l.weights.len(), self.instances),
            ];
            for (what, got, expected) in streams {
                if got != expected {
                    return Err(Error::BlendLayerCount {
                        layer,
                        additive,
                        what,
                        expected,
                        got,
                    });
                }
            }
            let bad = |w: f32| !(w == 0.0 || (f32::MIN_POSITIVE..=f32::MAX).contains(&w));
            if let Some(&weight) = l.weights.iter().find(|&&w| bad(w)) {
                return Err(Error::BlendWeight {
                    layer,
                    additive,
                    joint: None,
                    weight,
                });
            }
            // The single job's rule on a weight times a joint weight, per instance: with both finite
            // and not negative, only the largest joint weight can overflow first.
            if let Some(jw) = l.joint_weights {
                let most = jw.iter().fold(0.0f32, |m, &w| m.max(w));
                if let Some(i) = l.weights.iter().position(|&w| !(w * most).is_finite()) {
                    let joint = jw.iter().position(|&w| w == most).unwrap_or(0);
                    return Err(Error::BlendWeightSum {
                        joint,
                        instance: Some(i),
                    });
                }
            }
        }
        // The single job's rule on each instance's weight sums: bounded first by every layer's
        // largest instance weight, and only where that bound overflows checked instance by instance.
        let most = |l: &CrowdBlendLayer<'a>| l.weights.iter().fold(0.0f32, |m, &w| m.max(w));
        let bound: Vec<(f32, Option<&[f32]>)> = self
            .layers
            .iter()
            .map(|l| (most(l), l.joint_weights))
            .collect();
        if super::check_weight_sums(j, &bound).is_err() {
            for i in 0..self.instances {
                let weights: Vec<(f32, Option<&[f32]>)> = self
                    .layers
                    .iter()
                    .map(|l| (l.weights.get(i).copied().unwrap_or(0.0), l.joint_weights))
                    .collect();
                super::check_weight_sums(j, &weights).map_err(|joint| Error::BlendWeightSum {
                    joint,
                    instance: Some(i),
                })?;
            }
        }
        for (what, got) in [
            ("crowd output translations", self.output.translations.len()),
            ("crowd output rotations", self.output.rotations.len()),
            ("crowd output scales", self.output.scales.len()),
        ] {
            if got != total {
                return Err(Error::CountMismatch {
                    what,
                    expected: total,
                    got,
                });
            }
        }
        self.backend
            .resolve(KernelFamily::Crowd)?
            .without_det_kernels_on(self.precision, self.threads)
    }

    /// Validates, then blends every instance.
    pub fn run(&mut self) -> Result<(), Error> {
        let resolved = self.plan()?;
        let j = self.skeleton.len();
        let (layers, additive, rest, threshold) = (
            self.layers,
            self.additive_layers,
            self.rest_pose,
            self.threshold,
        );
        // Instances [first, first + count) into their run of the output.
        let work = |first: usize, out: TrsMut<'_>| {
            let mut normal = Vec::with_capacity(layers.len());
            let mut added = Vec::with_capacity(additive.len());
            let outs = out
                .translations
                .chunks_mut(j)
                .zip(out.rotations.chunks_mut(j))
                .zip(out.scales.chunks_mut(j));
            for (k, ((t, q), s)) in outs.enumerate() {
                let i = first + k;
                normal.clear();
                normal.extend(layers.iter().map(|l| l.instance(i, j)));
                added.clear();
                added.extend(additive.iter().map(|l| l.instance(i, j)));
                let out = TrsMut::new(t, q, s);
                match resolved {
                    Resolved::Ispc(isa) => {
                        ffi::blend_trs(isa, &normal, &added, rest, threshold, out)
                    }
                    Resolved::Reference => reference::blend(&normal, &added, rest, threshold, out),
                }
            }
        };
        let per_task = match self.threads {
            Threads::One => self.instances.max(1),
            Threads::All => self.instances.div_ceil(rayon::current_num_threads()).max(1),
        };
        let out = self.output.reborrow();
        let mut tasks = out
            .translations
            .chunks_mut(j * per_task)
            .zip(out.rotations.chunks_mut(j * per_task))
            .zip(out.scales.chunks_mut(j * per_task))
            .enumerate()
            .map(|(task, ((t, q), s))| (task * per_task, TrsMut::new(t, q, s)));
        match self.threads {
            Threads::One => tasks.for_each(|(first, out)| work(first, out)),
            // As the crowd local-to-model job: the caller runs the first run itself.
            Threads::All => rayon::in_place_scope(|scope| {
                let first = tasks.next();
                let work = &work;
                for (i, out) in tasks {
                    scope.spawn(move |_| work(i, out));
                }
                if let Some((i, out)) = first {
                    work(i, out);
                }
            }),
        }
        if super::output_finite(resolved.runnable(), &self.output) {
            return Ok(());
        }
        // Where a float is not finite, each instance's inputs are searched, so that the error names
        // the layer, entry or instance; only then is it an overflow.
        let (mut normal, mut added) = (Vec::new(), Vec::new());
        for i in 0..self.instances {
            normal.clear();
            normal.extend(layers.iter().map(|l| l.instance(i, j)));
            added.clear();
            added.extend(additive.iter().map(|l| l.instance(i, j)));
            super::check_floats(j, rest, &normal, &added, Some(i))?;
        }
        Err(Error::ResultNotFinite {
            stage: "crowd blending",
            what: "blended poses",
            index: super::first_not_finite(&self.output),
        })
    }
}
