//! Local-to-model: `model[j] = model[parent[j]] * local[j]` over a level-order [`Skeleton`].
//!
//! [`LocalToModelJob`] follows ozz-animation's job shape: a plain struct, inputs first and outputs second,
//! with [`validate`](LocalToModelJob::validate) and [`run`](LocalToModelJob::run). The rules it checks,
//! each reported as its own [`Error`] variant:
//! - the local transforms have one entry per joint (every TRS stream too): [`Error::CountMismatch`];
//! - the output has one matrix per joint: [`Error::CountMismatch`];
//! - `from`, when given, names a joint: [`Error::JointOutOfRange`];
//! - the root is finite, and so is every float of the locals ([`Error::NotFinite`]), and every
//!   rotation's squared length is a normal float ([`Error::RotationLength`]); indices are level order.
//!   [`validate`](LocalToModelJob::validate) checks every local; [`run`](LocalToModelJob::run) checks the
//!   model matrices it computed, and where one is not finite, names the local that broke a rule;
//! - the model matrices computed are finite: finite locals whose products overflow `f32` are
//!   [`Error::ResultNotFinite`] (the matrices are then unspecified).
//! - an explicit ISA can run here: [`Error::IsaUnavailable`].
//!
//! Conventions: every array is in the skeleton's level order. Matrices are affine: the bottom row of an
//! input is taken as (0, 0, 0, 1) and the output's bottom row is exactly that. Rotations are those of
//! `q / |q|` ([`reference::trs_matrix`]), so keyframe quaternions need not be exactly unit length.

pub mod crowd;

use crate::backend::{Backend, KernelFamily, Precision, Resolved};
use crate::error::Error;
use crate::ffi::hierarchy as ffi;
use crate::ffi::Runnable;
use crate::layout::trs::Trs;
use crate::numeric;
use crate::reference;
use crate::skeleton::Skeleton;
use glam::{Affine3A, Mat4, Quat, Vec3};
use std::ops::Range;

/// The local (parent-space) transform of every joint.
#[derive(Clone, Copy, Debug)]
pub enum Locals<'a> {
    /// Affine matrices; the zero-copy input of the matrix kernels.
    Matrices(&'a [Mat4]),
    /// Affine matrices as glam `Affine3A`; converted to `Mat4` once per run.
    Affines(&'a [Affine3A]),
    /// Translation, rotation and scale.
    Trs(Trs<'a>),
}

impl<'a> Locals<'a> {
    /// Translation, rotation and scale streams, one entry per joint each: `Locals::trs(&t, &q, &s)`.
    pub fn trs(translations: &'a [Vec3], rotations: &'a [Quat], scales: &'a [Vec3]) -> Locals<'a> {
        Locals::Trs(Trs {
            translations,
            rotations,
            scales,
        })
    }

    fn check(&self, skeleton: &Skeleton) -> Result<(), Error> {
        match self {
            Locals::Matrices(m) => skeleton.check_count("local matrices", m.len()),
            Locals::Affines(a) => skeleton.check_count("local matrices", a.len()),
            Locals::Trs(t) => {
                skeleton.check_count("local translations", t.translations.len())?;
                skeleton.check_count("local rotations", t.rotations.len())?;
                skeleton.check_count("local scales", t.scales.len())
            }
        }
    }

    /// The numeric rules: every float finite, every rotation of a normal squared length.
    fn check_floats(&self) -> Result<(), Error> {
        match self {
            Locals::Matrices(m) => {
                numeric::check_finite("local matrices", bytemuck::cast_slice(m), 16)
            }
            Locals::Affines(a) => a.iter().enumerate().try_for_each(|(i, a)| {
                numeric::check_finite("local matrices", &a.to_cols_array(), 12)
                    .map_err(|e| numeric::at_index(e, i))
            }),
            Locals::Trs(t) => numeric::check_trs("local", t),
        }
    }
}

impl<'a> From<Trs<'a>> for Locals<'a> {
    fn from(trs: Trs<'a>) -> Locals<'a> {
        Locals::Trs(trs)
    }
}

impl<'a> From<&'a [Mat4]> for Locals<'a> {
    fn from(matrices: &'a [Mat4]) -> Locals<'a> {
        Locals::Matrices(matrices)
    }
}

impl<'a> From<&'a Vec<Mat4>> for Locals<'a> {
    fn from(matrices: &'a Vec<Mat4>) -> Locals<'a> {
        Locals::Matrices(matrices)
    }
}

/// How local-to-model is computed. Both methods give the same result within floating-point rounding.
/// The seeds' other traversals (per parent, per level, on SoA data) lost to `IspcJoint` on every shape
/// measured; the lab keeps them (see docs/EXPERIMENTS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// [`Method::IspcJoint`] on the selected ISA, or [`Method::Reference`] where no ISA runs. This is the
    /// measured rule: the horizontal kernel was the fastest on every skeleton shape and size measured
    /// (README, "Traversal").
    #[default]
    Auto,
    /// The serial Rust reference: every joint after its parent, in level order.
    Reference,
    /// ISPC, one joint at a time with the gang spread over the matrix elements: no gathers.
    IspcJoint,
}

impl Method {
    /// Every concrete method (all but `Auto`).
    pub const ALL: [Method; 2] = [Method::Reference, Method::IspcJoint];

    /// Short name used in reports and bench ids.
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Reference => "reference",
            Method::IspcJoint => "ispc_joint",
        }
    }

    /// True for the methods that run ISPC kernels (and so use the job's backend).
    pub fn is_ispc(self) -> bool {
        self == Method::IspcJoint
    }
}

/// Computes model-space matrices from local transforms.
#[derive(Debug)]
pub struct LocalToModelJob<'a> {
    /// The hierarchy.
    pub skeleton: &'a Skeleton,
    /// Local transforms, one per joint, in level order.
    pub locals: Locals<'a>,
    /// Applied to every root: `model[root] = root * local[root]`. Identity by default.
    pub root: Mat4,
    /// Partial update: recompute only the subtree of this level-order joint (itself included; your joint
    /// `j` is [`Skeleton::level_index`]`(j)`). Its parent's model matrix
    /// is read from `models`, which must hold it already; every other joint is left untouched.
    pub from: Option<usize>,
    /// The implementation; [`Method::Auto`] by default.
    pub method: Method,
    /// The ISA for ISPC methods; [`Backend::Auto`] by default. With [`Backend::Reference`] every ISPC
    /// method falls back to the serial reference.
    pub backend: Backend,
    /// [`Precision::Fast`] (default) or [`Precision::Deterministic`]: the serial reference's bits on
    /// every backend and platform.
    pub precision: Precision,
    /// Output: model-space matrices, one per joint, in level order.
    pub models: &'a mut [Mat4],
}

impl<'a> LocalToModelJob<'a> {
    /// A job over the whole skeleton with the automatic method and ISA and an identity root.
    pub fn new(
        skeleton: &'a Skeleton,
        locals: impl Into<Locals<'a>>,
        models: &'a mut [Mat4],
    ) -> LocalToModelJob<'a> {
        LocalToModelJob {
            skeleton,
            locals: locals.into(),
            root: Mat4::IDENTITY,
            from: None,
            method: Method::Auto,
            backend: Backend::Auto,
            precision: Precision::Fast,
            models,
        }
    }

    /// Sets the transform applied to every root (the character's placement).
    pub fn root(mut self, root: Mat4) -> LocalToModelJob<'a> {
        self.root = root;
        self
    }

    /// Updates only this joint's subtree (see [`LocalToModelJob::from`](#structfield.from)).
    pub fn from_joint(mut self, joint: usize) -> LocalToModelJob<'a> {
        self.from = Some(joint);
        self
    }

    /// Sets the implementation.
    pub fn method(mut self, method: Method) -> LocalToModelJob<'a> {
        self.method = method;
        self
    }

    /// Sets who runs the job (an [`Isa`](crate::Isa) converts).
    pub fn backend(mut self, backend: impl Into<Backend>) -> LocalToModelJob<'a> {
        self.backend = backend.into();
        self
    }

    /// Sets the precision: [`Precision::Deterministic`] gives the serial reference's bits on every
    /// backend and platform.
    /// `validate` and `run` then refuse a thread (the caller's, or with `Threads::All` one of rayon's
    /// pool) whose floating-point mode is not the default ([`Error::FloatEnvironment`]).
    pub fn precision(mut self, precision: Precision) -> LocalToModelJob<'a> {
        self.precision = precision;
        self
    }

    /// Checks every rule (see the [module docs](crate::local_to_model)) without computing anything, the numeric rules on every
    /// float of the locals included.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan()?;
        self.locals.check_floats()
    }

    /// Checks the rules and decides what runs: the method (with `Auto` resolved) and, for ISPC methods,
    /// the proof that the ISA can run.
    fn plan(&self) -> Result<(Method, Option<Runnable>), Error> {
        self.locals.check(self.skeleton)?;
        self.skeleton
            .check_count("model matrices", self.models.len())?;
        numeric::check_finite("root matrix", &self.root.to_cols_array(), 16)?;
        if let Some(from) = self.from {
            if from >= self.skeleton.len() {
                return Err(Error::JointOutOfRange {
                    joint: from,
                    joints: self.skeleton.len(),
                });
            }
        }
        if !(self.method.is_ispc() || self.method == Method::Auto) {
            Resolved::Reference.with_precision(self.precision)?;
            return Ok((self.method, None));
        }
        let resolved = self.backend.resolve(KernelFamily::LocalToModel)?;
        Ok(match resolved.with_precision(self.precision)? {
            Resolved::Ispc(isa) if self.method == Method::Auto => (Method::IspcJoint, Some(isa)),
            Resolved::Ispc(isa) => (self.method, Some(isa)),
            Resolved::Reference => (Method::Reference, None),
        })
    }

    /// The method [`run`](LocalToModelJob::run) would use, with `Auto` resolved.
    pub fn resolved_method(&self) -> Result<Method, Error> {
        self.plan().map(|(m, _)| m)
    }

    /// Validates, then computes the model matrices. Returns the method that ran.
    pub fn run(&mut self) -> Result<Method, Error> {
        let (method, isa) = self.plan()?;

        // Affine3A inputs are converted once so that every method reads Mat4.
        let converted: Vec<Mat4>;
        let locals = match self.locals {
            Locals::Affines(a) => {
                converted = a.iter().map(|&a| Mat4::from(a)).collect();
                Locals::Matrices(&converted)
            }
            other => other,
        };
        // The joints to compute, as ranges in level order. A full update is every level; the joint-at-a-
        // time methods take it as the single range 0..n, so a full update allocates nothing.
        // A one-element list of ranges (not a list of joints), which is what the methods iterate.
        #[allow(clippy::single_range_in_vec_init)]
        let whole = [0..self.skeleton.len()];
        let subtree;
        let ranges: &[Range<usize>] = match self.from {
            Some(from) => {
                subtree = self.skeleton.level_subtree(from);
                &subtree
            }
            None => &whole,
        };
        // The numeric rules, checked on what was computed: the kernels report whether every element
        // they wrote is finite; the reference's outputs get one pass. Only where that fails are the
        // outputs checked exactly and the inputs searched, so that the error names the input that
        // broke a rule, or else the overflow.
        let proven = match (method, isa) {
            (Method::IspcJoint, Some(isa)) => self.run_joint(isa, locals, ranges),
            _ => {
                self.run_reference(locals, ranges);
                false
            }
        };
        if proven {
            return Ok(method);
        }
        for r in ranges {
            let floats: &[f32] = bytemuck::cast_slice(&self.models[r.clone()]);
            if !numeric::all_finite(floats) {
                self.locals.check_floats()?;
                return numeric::check_result("local to model", "model matrices", floats, 16)
                    .map_err(|e| numeric::at_index(e, r.start))
                    .map(|_| method);
            }
        }
        Ok(method)
    }

    fn run_reference(&mut self, locals: Locals<'_>, ranges: &[Range<usize>]) {
        for r in ranges {
            match locals {
                Locals::Matrices(m) => reference::local_to_model(
                    self.skeleton.level_parents(),
                    m,
                    &self.root,
                    self.models,
                    r.clone(),
                ),
                Locals::Trs(t) => reference::local_to_model_trs(
                    self.skeleton.level_parents(),
                    t,
                    &self.root,
                    self.models,
                    r.clone(),
                ),
                Locals::Affines(_) => {}
            }
        }
    }

    /// Runs the kernels over `ranges`; true when every call reported finite outputs.
    fn run_joint(&mut self, isa: Runnable, locals: Locals<'_>, ranges: &[Range<usize>]) -> bool {
        // A subtree's ranges are often adjacent in level order; each maximal run is one kernel call.
        let mut finite = true;
        let mut i = 0;
        while i < ranges.len() {
            let mut r = ranges[i].clone();
            while i + 1 < ranges.len() && ranges[i + 1].start == r.end {
                i += 1;
                r.end = ranges[i].end;
            }
            let order = self.skeleton.kernel_order();
            finite &= match locals {
                Locals::Matrices(m) => ffi::ltm_joint(isa, order, m, &self.root, self.models, r),
                Locals::Trs(t) => ffi::ltm_joint_trs(isa, order, t, &self.root, self.models, r),
                Locals::Affines(_) => false,
            };
            i += 1;
        }
        finite
    }
}
