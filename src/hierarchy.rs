//! Local-to-model: `model[j] = model[parent[j]] * local[j]` over a level-order [`Skeleton`].
//!
//! [`LocalToModelJob`] follows ozz-animation's job shape: a plain struct, inputs first and outputs second,
//! with [`validate`](LocalToModelJob::validate) and [`run`](LocalToModelJob::run). The rules it checks,
//! each reported as its own [`Error`] variant:
//! - the local transforms have one entry per joint (every TRS stream too): [`Error::CountMismatch`];
//! - the output has one matrix per joint: [`Error::CountMismatch`];
//! - `from`, when given, names a joint: [`Error::JointOutOfRange`];
//! - an explicit ISA can run here: [`Error::IsaUnavailable`].
//!
//! Conventions: every array is in the skeleton's level order. Matrices are affine: the bottom row of an
//! input is taken as (0, 0, 0, 1) and the output's bottom row is exactly that. Rotations are those of
//! `q / |q|` ([`reference::trs_matrix`]), so keyframe quaternions need not be exactly unit length.

use crate::backend::{Backend, Resolved};
use crate::error::Error;
use crate::ffi;
use crate::isa::Runnable;
use crate::reference;
use crate::skeleton::Skeleton;
use glam::{Affine3A, Mat4, Quat, Vec3};
use std::ops::Range;

/// Local transforms as translation, rotation and (non-uniform) scale streams, one entry per joint.
#[derive(Clone, Copy, Debug)]
pub struct Trs<'a> {
    /// Translation of each joint.
    pub translations: &'a [Vec3],
    /// Rotation of each joint; normalized by the job (see the module docs).
    pub rotations: &'a [Quat],
    /// Scale of each joint; non-uniform scale is allowed.
    pub scales: &'a [Vec3],
}

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

impl Locals<'_> {
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
}

/// How local-to-model is computed. Every method gives the same result within floating-point rounding;
/// they exist so that each can be measured (see the README's traversal table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// [`Method::IspcJoint`] on the selected ISA, or [`Method::Reference`] where no ISA runs. This is the
    /// measured rule: the horizontal kernel was the fastest on every skeleton shape and size measured
    /// (README, "Traversal").
    #[default]
    Auto,
    /// The serial Rust reference: every joint after its parent, in level order.
    Reference,
    /// Serial Rust over each parent's contiguous children (the seed's `LevelOrderSum`).
    SerialChildren,
    /// ISPC `foreach` over each parent's children (the seed's `ParallelLevelOrder`) on SoA matrices.
    IspcChildren,
    /// ISPC `foreach` over a whole level at a time on SoA matrices; each lane gathers its parent.
    IspcLevel,
    /// ISPC, one joint at a time with the gang spread over the matrix elements: no gathers.
    IspcJoint,
}

impl Method {
    /// Every concrete method (all but `Auto`).
    pub const ALL: [Method; 5] = [
        Method::Reference,
        Method::SerialChildren,
        Method::IspcChildren,
        Method::IspcLevel,
        Method::IspcJoint,
    ];

    /// Short name used in reports and bench ids.
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Reference => "reference",
            Method::SerialChildren => "serial_children",
            Method::IspcChildren => "ispc_children",
            Method::IspcLevel => "ispc_level",
            Method::IspcJoint => "ispc_joint",
        }
    }

    /// True for the methods that run ISPC kernels (and so use the job's backend).
    pub fn is_ispc(self) -> bool {
        matches!(
            self,
            Method::IspcChildren | Method::IspcLevel | Method::IspcJoint
        )
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
    /// Partial update: recompute only this joint's subtree (itself included). Its parent's model matrix
    /// is read from `models`, which must hold it already; every other joint is left untouched.
    pub from: Option<usize>,
    /// The implementation; [`Method::Auto`] by default.
    pub method: Method,
    /// The ISA for ISPC methods; [`Backend::Auto`] by default. With [`Backend::Reference`] every ISPC
    /// method falls back to the serial reference.
    pub backend: Backend,
    /// Output: model-space matrices, one per joint, in level order.
    pub models: &'a mut [Mat4],
}

impl<'a> LocalToModelJob<'a> {
    /// A job over the whole skeleton with the automatic method and ISA and an identity root.
    pub fn new(
        skeleton: &'a Skeleton,
        locals: Locals<'a>,
        models: &'a mut [Mat4],
    ) -> LocalToModelJob<'a> {
        LocalToModelJob {
            skeleton,
            locals,
            root: Mat4::IDENTITY,
            from: None,
            method: Method::Auto,
            backend: Backend::Auto,
            models,
        }
    }

    /// Checks every rule (see the module docs) without computing anything.
    pub fn validate(&self) -> Result<(), Error> {
        self.plan().map(|_| ())
    }

    /// Checks the rules and decides what runs: the method (with `Auto` resolved) and, for ISPC methods,
    /// the proof that the ISA can run.
    fn plan(&self) -> Result<(Method, Option<Runnable>), Error> {
        self.locals.check(self.skeleton)?;
        self.skeleton
            .check_count("model matrices", self.models.len())?;
        if let Some(from) = self.from {
            if from >= self.skeleton.len() {
                return Err(Error::JointOutOfRange {
                    joint: from,
                    joints: self.skeleton.len(),
                });
            }
        }
        if !(self.method.is_ispc() || self.method == Method::Auto) {
            return Ok((self.method, None));
        }
        Ok(match self.backend.resolve()? {
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
        let all_levels;
        let ranges: &[Range<usize>] = match self.from {
            Some(from) => {
                subtree = self.skeleton.subtree_ranges(from);
                &subtree
            }
            None if matches!(method, Method::Reference | Method::IspcJoint) => &whole,
            None => {
                all_levels = self.skeleton.levels().collect::<Vec<_>>();
                &all_levels
            }
        };
        match (method, isa) {
            (Method::IspcJoint, Some(isa)) => self.run_joint(isa, locals, ranges),
            (Method::IspcChildren, Some(isa)) => self.run_soa(isa, locals, ranges, false),
            (Method::IspcLevel, Some(isa)) => self.run_soa(isa, locals, ranges, true),
            (Method::SerialChildren, _) => self.run_serial_children(locals, ranges),
            _ => self.run_reference(locals, ranges),
        }
        Ok(method)
    }

    fn run_reference(&mut self, locals: Locals<'_>, ranges: &[Range<usize>]) {
        for r in ranges {
            match locals {
                Locals::Matrices(m) => {
                    reference::local_to_model(self.skeleton, m, &self.root, self.models, r.clone())
                }
                Locals::Trs(t) => reference::local_to_model_trs(
                    self.skeleton,
                    t,
                    &self.root,
                    self.models,
                    r.clone(),
                ),
                Locals::Affines(_) => {}
            }
        }
    }

    fn run_serial_children(&mut self, locals: Locals<'_>, ranges: &[Range<usize>]) {
        // The first range (the roots, or `from`) has no parent in the ranges: compute it joint by joint.
        // Every later range is exactly the children of the range before it.
        let Some(first) = ranges.first() else { return };
        let owned: Vec<Mat4>;
        let m = match locals {
            Locals::Matrices(m) => m,
            Locals::Trs(t) => {
                owned = (0..self.skeleton.len())
                    .map(|j| {
                        Mat4::from_cols_array(&reference::trs_matrix(
                            t.translations[j],
                            t.rotations[j],
                            t.scales[j],
                        ))
                    })
                    .collect();
                &owned
            }
            Locals::Affines(_) => return,
        };
        reference::local_to_model(self.skeleton, m, &self.root, self.models, first.clone());
        for r in ranges {
            reference::local_to_model_children(self.skeleton, m, self.models, r.clone());
        }
    }

    fn run_joint(&mut self, isa: Runnable, locals: Locals<'_>, ranges: &[Range<usize>]) {
        // A subtree's ranges are often adjacent in level order; each maximal run is one kernel call.
        let mut i = 0;
        while i < ranges.len() {
            let mut r = ranges[i].clone();
            while i + 1 < ranges.len() && ranges[i + 1].start == r.end {
                i += 1;
                r.end = ranges[i].end;
            }
            match locals {
                Locals::Matrices(m) => {
                    ffi::ltm_joint(isa, self.skeleton, m, &self.root, self.models, r)
                }
                Locals::Trs(t) => {
                    ffi::ltm_joint_trs(isa, self.skeleton, t, &self.root, self.models, r)
                }
                Locals::Affines(_) => {}
            }
            i += 1;
        }
    }

    /// The SoA traversals. The job's arrays are AoS `Mat4`, so this converts the inputs to SoA, runs
    /// the kernels and converts the results back; the conversions are part of these methods' cost.
    fn run_soa(
        &mut self,
        isa: Runnable,
        locals: Locals<'_>,
        ranges: &[Range<usize>],
        per_level: bool,
    ) {
        let n = self.skeleton.len();
        let Some(first) = ranges.first() else { return };
        let mut local = SoaMatrices::zeroed(n);
        match locals {
            Locals::Matrices(m) => to_soa(m, &mut local, 0..n),
            Locals::Trs(t) => ffi::trs_to_soa(isa, t, &mut local),
            Locals::Affines(_) => return,
        }
        let mut model = SoaMatrices::zeroed(n);
        // A partial update reads the subtree root's parent from the output.
        if let Some(p) = self.skeleton.parent(first.start) {
            to_soa(self.models, &mut model, p..p + 1);
        }
        // The first range: roots use the root matrix; a partial update's subtree root has a parent.
        if self.skeleton.parent(first.start).is_none() {
            ffi::ltm_roots_soa(isa, n, &local, &self.root, &mut model, first.clone());
        } else {
            ffi::ltm_level_soa(isa, self.skeleton, &local, &mut model, first.clone());
        }
        for (i, r) in ranges.iter().enumerate() {
            if per_level {
                if let Some(next) = ranges.get(i + 1) {
                    ffi::ltm_level_soa(isa, self.skeleton, &local, &mut model, next.clone());
                }
            } else {
                ffi::ltm_children_soa(isa, self.skeleton, &local, &mut model, r.clone());
            }
        }
        for r in ranges {
            from_soa(&model, self.models, r.clone());
        }
    }
}

fn to_soa(m: &[Mat4], soa: &mut SoaMatrices, joints: Range<usize>) {
    let stride = soa.stride;
    for j in joints {
        let c = m[j].to_cols_array();
        for r in 0..3 {
            for col in 0..4 {
                soa.data[(4 * r + col) * stride + j] = c[4 * col + r];
            }
        }
    }
}

fn from_soa(soa: &SoaMatrices, m: &mut [Mat4], joints: Range<usize>) {
    let stride = soa.stride;
    for j in joints {
        let mut c = [0.0f32; 16];
        for r in 0..3 {
            for col in 0..4 {
                c[4 * col + r] = soa.data[(4 * r + col) * stride + j];
            }
        }
        c[15] = 1.0;
        m[j] = Mat4::from_cols_array(&c);
    }
}

/// Affine matrices of many joints as a structure of arrays: twelve arrays (rows 0..2 times columns 0..3)
/// of one float per joint. This is the layout of the SoA traversals ([`Method::IspcChildren`] and
/// [`Method::IspcLevel`]); keeping poses in it avoids the conversions the AoS job pays for those methods.
#[derive(Clone, Debug, PartialEq)]
pub struct SoaMatrices {
    /// Element (row r, column c) of joint j is `data[(4 * r + c) * stride + j]`.
    pub(crate) data: Vec<f32>,
    pub(crate) stride: usize,
}

impl SoaMatrices {
    /// Identity-free zeroed storage for `joints` matrices.
    pub fn zeroed(joints: usize) -> SoaMatrices {
        SoaMatrices {
            data: vec![0.0; 12 * joints],
            stride: joints,
        }
    }

    /// The matrices of a `Mat4` slice (bottom rows dropped).
    pub fn from_mat4(matrices: &[Mat4]) -> SoaMatrices {
        let mut soa = SoaMatrices::zeroed(matrices.len());
        to_soa(matrices, &mut soa, 0..matrices.len());
        soa
    }

    /// Number of matrices.
    pub fn len(&self) -> usize {
        self.stride
    }

    /// True when there are no matrices.
    pub fn is_empty(&self) -> bool {
        self.stride == 0
    }

    /// One matrix as a `Mat4` (bottom row (0, 0, 0, 1)), or `None` past the end.
    pub fn get(&self, joint: usize) -> Option<Mat4> {
        (joint < self.stride).then(|| {
            let mut c = [0.0f32; 16];
            for r in 0..3 {
                for col in 0..4 {
                    c[4 * col + r] = self.data[(4 * r + col) * self.stride + joint];
                }
            }
            c[15] = 1.0;
            Mat4::from_cols_array(&c)
        })
    }

    /// Writes every matrix into `out`.
    ///
    /// # Errors
    /// [`Error::CountMismatch`] when `out` does not have one matrix per entry.
    pub fn to_mat4(&self, out: &mut [Mat4]) -> Result<(), Error> {
        if out.len() != self.stride {
            return Err(Error::CountMismatch {
                what: "matrices",
                expected: self.stride,
                got: out.len(),
            });
        }
        from_soa(self, out, 0..self.stride);
        Ok(())
    }

    pub(crate) fn fits(&self, n: usize) -> bool {
        self.stride == n && self.data.len() == 12 * n
    }
}

/// Local to model on SoA matrices with the seed's per-parent foreach ([`Method::IspcChildren`], also what
/// `Auto` picks here) or the per-level foreach ([`Method::IspcLevel`]). Any other method, or a backend
/// with no runnable ISA, runs the serial reference through `Mat4` conversions.
///
/// # Errors
/// [`Error::CountMismatch`] when `locals` or `models` do not have one matrix per joint, and
/// [`Error::IsaUnavailable`] for an explicit ISA that cannot run.
pub fn local_to_model_soa(
    skeleton: &Skeleton,
    locals: &SoaMatrices,
    root: &Mat4,
    models: &mut SoaMatrices,
    method: Method,
    backend: Backend,
) -> Result<Method, Error> {
    let n = skeleton.len();
    skeleton.check_count("local matrices", locals.len())?;
    skeleton.check_count("model matrices", models.len())?;
    let isa = match backend.resolve()? {
        Resolved::Ispc(isa) => Some(isa),
        Resolved::Reference => None,
    };
    let per_level = match (method, isa) {
        (Method::IspcLevel, Some(_)) => true,
        (Method::IspcChildren | Method::Auto, Some(_)) => false,
        _ => {
            let mut l = vec![Mat4::ZERO; n];
            let mut m = vec![Mat4::ZERO; n];
            locals.to_mat4(&mut l)?;
            reference::local_to_model(skeleton, &l, root, &mut m, 0..n);
            *models = SoaMatrices::from_mat4(&m);
            return Ok(Method::Reference);
        }
    };
    let Some(isa) = isa else {
        return Ok(Method::Reference);
    };
    ffi::ltm_roots_soa(isa, n, locals, root, models, skeleton.roots());
    for (k, level) in skeleton.levels().enumerate() {
        if per_level {
            if k > 0 {
                ffi::ltm_level_soa(isa, skeleton, locals, models, level);
            }
        } else {
            ffi::ltm_children_soa(isa, skeleton, locals, models, level);
        }
    }
    Ok(if per_level {
        Method::IspcLevel
    } else {
        Method::IspcChildren
    })
}
