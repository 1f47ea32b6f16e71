//! Where skinned vertices go, as the kernels and the reference see it: float slices, either one stream
//! per attribute or one interleaved buffer, plus the renormalization of normals and tangents.

/// Whether skinned normals and tangents are made unit length again.
///
/// The default, everywhere ([`SkinningJob`](crate::SkinningJob), [`Frame`](crate::Frame), the crowd
/// jobs), is [`Renormalize::None`], as in ozz-animation. Linear blend skinning leaves a normal between
/// joints that disagree short (by up to 21% at a 30-degree bend between neighbouring joints), but the
/// consumers of skinned normals normalize them anyway: a fragment shader after interpolation, a ray
/// tracer at the hit point (an interpolated normal is short even from unit vertices). Renormalizing on
/// the CPU is then paid twice: on CesiumMan's whole frame it cost 30% (`Precise`) and 26% (`Fast`) over
/// `None` with AVX2 (docs/RESULTS.md). Choose `Precise` where the vertex normals themselves are the
/// product (an exported mesh: `skin --out` does), or `Fast` where 1e-6 of unit length is enough.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Renormalize {
    /// Left as the blended matrix makes them. The default.
    #[default]
    None,
    /// Divided by their length (a square root and a division).
    Precise,
    /// Multiplied by an approximate reciprocal square root refined by one Newton step (ISPC's `rsqrt`);
    /// the tests bound its error at 1e-6 of unit length. The reference computes the precise result.
    Fast,
}

/// How a [`Frame`](crate::Frame) or a [`CrowdFrame`](crate::CrowdFrame) skins its meshes: linear blend skinning with the palette matrices
/// (the default, as every peer), or dual quaternions ([`SkinningJob::dual_quaternion`]), which keep a
/// twisting joint's volume where linear blending pinches it, at about three times the skinning time
/// on AVX2 (docs/RESULTS.md, "Dual-quaternion skinning").
///
/// [`SkinningJob::dual_quaternion`]: crate::SkinningJob::dual_quaternion
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Skinning {
    /// Linear blend skinning with blended palette matrices. The default.
    #[default]
    Linear,
    /// Dual-quaternion skinning with scale: the frame converts each skin's palette with
    /// [`dual_quat_palette`](crate::dual_quat_palette) once per skin stage.
    DualQuaternion,
}

/// Which skinned attributes a [`Frame`](crate::Frame) or a [`CrowdFrame`](crate::CrowdFrame) writes.
/// A ray-pick or a collider needs positions only: a positions-only CesiumMan frame took 0.82x the time
/// of a whole one on AVX2, and a crowd of 100 of them 0.71x (docs/RESULTS.md, "Frames that skin only
/// what they ask for").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VertexOutputs {
    /// Positions, and normals and tangents where the mesh has them. The default.
    #[default]
    All,
    /// Positions and normals; tangents are not written.
    PositionsAndNormals,
    /// Positions only; normals and tangents are not written.
    Positions,
}

impl VertexOutputs {
    /// Whether normals are written.
    pub(crate) fn normals(self) -> bool {
        self != VertexOutputs::Positions
    }

    /// Whether tangents are written.
    pub(crate) fn tangents(self) -> bool {
        self == VertexOutputs::All
    }
}

/// A validated output as float slices, for the reference and the kernels.
#[derive(Debug)]
pub(crate) enum OutputView<'o> {
    /// Stream slices: positions (3 floats per vertex), normals (3) and tangents (4).
    Separate {
        positions: &'o mut [f32],
        normals: Option<&'o mut [f32]>,
        tangents: Option<&'o mut [f32]>,
    },
    /// One buffer: vertex v's attribute at `floats[v * stride + offset]`.
    Interleaved {
        floats: &'o mut [f32],
        stride: usize,
        positions: usize,
        normals: Option<usize>,
        tangents: Option<usize>,
    },
}

impl OutputView<'_> {
    /// Writes the attributes of vertex `v` that this output holds.
    pub(crate) fn write(
        &mut self,
        v: usize,
        position: [f32; 3],
        normal: [f32; 3],
        tangent: [f32; 4],
    ) {
        match self {
            OutputView::Separate {
                positions,
                normals,
                tangents,
            } => {
                positions[3 * v..3 * v + 3].copy_from_slice(&position);
                if let Some(n) = normals {
                    n[3 * v..3 * v + 3].copy_from_slice(&normal);
                }
                if let Some(t) = tangents {
                    t[4 * v..4 * v + 4].copy_from_slice(&tangent);
                }
            }
            OutputView::Interleaved {
                floats,
                stride,
                positions,
                normals,
                tangents,
            } => {
                let base = v * *stride;
                floats[base + *positions..base + *positions + 3].copy_from_slice(&position);
                if let Some(o) = normals {
                    floats[base + *o..base + *o + 3].copy_from_slice(&normal);
                }
                if let Some(o) = tangents {
                    floats[base + *o..base + *o + 4].copy_from_slice(&tangent);
                }
            }
        }
    }

    pub(crate) fn wants_normals(&self) -> bool {
        matches!(
            self,
            OutputView::Separate {
                normals: Some(_),
                ..
            } | OutputView::Interleaved {
                normals: Some(_),
                ..
            }
        )
    }

    pub(crate) fn wants_tangents(&self) -> bool {
        matches!(
            self,
            OutputView::Separate {
                tangents: Some(_),
                ..
            } | OutputView::Interleaved {
                tangents: Some(_),
                ..
            }
        )
    }
}

/// True when two of the present attributes, each an (offset, size) in one unit, share any part. The
/// caller makes sure every offset + size fits in usize.
pub(crate) fn overlap(attrs: &[(Option<usize>, usize)]) -> bool {
    let present: Vec<(usize, usize)> = attrs
        .iter()
        .filter_map(|&(o, size)| o.map(|o| (o, size)))
        .collect();
    present.iter().enumerate().any(|(i, a)| {
        present[i + 1..]
            .iter()
            .any(|b| a.0 < b.0 + b.1 && b.0 < a.0 + a.1)
    })
}
