//! Typed accessor reads: the [`Reader`] checks every view and accessor bound, counts each accessor
//! against the load's memory budget, converts the spec's component types (with normalization) and
//! applies sparse substitutions.

use super::buffers::LoadedBuffer;
use super::error::{GltfError, READ_BUDGET_SLACK};
use super::limits::{ImportLimits, Tally};
use super::schema::{Accessor, DataType, Dimensions, Document, View};
use crate::Error;
use glam::Vec3;

/// Reads accessors out of the loaded buffers, checking every bound first.
pub(super) struct Reader<'a> {
    /// The validated document.
    pub(super) doc: &'a Document,
    /// Every buffer's bytes, cut to its `byteLength`.
    buffers: &'a [LoadedBuffer],
    /// Components the accessors of this load may still hold (see [`READ_BUDGET_SLACK`]).
    budget: std::cell::Cell<usize>,
    /// Accessors already counted against the budget.
    charged: std::cell::RefCell<std::collections::HashSet<usize>>,
    /// The load's running totals against its [`ImportLimits`](super::ImportLimits).
    pub(super) tally: Tally,
}

fn component_name(t: DataType) -> &'static str {
    match t {
        DataType::I8 => "i8",
        DataType::U8 => "u8",
        DataType::I16 => "i16",
        DataType::U16 => "u16",
        DataType::U32 => "u32",
        DataType::F32 => "f32",
    }
}

/// One component as f32, with the spec's normalization of integer types.
pub(super) fn component_f32(t: DataType, normalized: bool, b: &[u8]) -> f32 {
    match t {
        DataType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        DataType::U8 if normalized => b[0] as f32 / 255.0,
        DataType::U8 => b[0] as f32,
        DataType::I8 if normalized => (b[0] as i8 as f32 / 127.0).max(-1.0),
        DataType::I8 => b[0] as i8 as f32,
        DataType::U16 if normalized => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
        DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as f32,
        DataType::I16 if normalized => {
            (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0)
        }
        DataType::I16 => i16::from_le_bytes([b[0], b[1]]) as f32,
        DataType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
    }
}

/// One unsigned integer component (indices, joints); only called for u8, u16 and u32 accessors.
pub(super) fn component_u32(t: DataType, b: &[u8]) -> u32 {
    match t {
        DataType::U8 => b[0] as u32,
        DataType::U16 => u16::from_le_bytes([b[0], b[1]]) as u32,
        _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

impl<'a> Reader<'a> {
    /// A reader over the loaded buffers. The load's budget is four components per buffer byte plus
    /// [`READ_BUDGET_SLACK`].
    /// `held` is the bytes the buffers hold, each shared source counted once.
    pub(super) fn new(
        doc: &'a Document,
        buffers: &'a [LoadedBuffer],
        held: usize,
        limits: ImportLimits,
    ) -> Reader<'a> {
        let bytes = held;
        Reader {
            doc,
            buffers,
            budget: std::cell::Cell::new(bytes.saturating_mul(4).saturating_add(READ_BUDGET_SLACK)),
            charged: Default::default(),
            tally: Tally::new(limits),
        }
    }

    /// The bytes of a buffer view, checked against its buffer.
    fn view_bytes(&self, view: &View) -> Result<&[u8], GltfError<Error>> {
        let buffer = self
            .buffers
            .get(view.buffer)
            .map_or(&[][..], LoadedBuffer::bytes);
        let (offset, length) = (view.offset, view.length);
        offset
            .checked_add(length)
            .and_then(|end| buffer.get(offset..end))
            .ok_or(GltfError::BufferViewOutOfBounds {
                view: view.index,
                offset,
                length,
                buffer_length: buffer.len(),
            })
    }

    /// Checks an accessor's type against what its use allows.
    pub(super) fn check_format(
        &self,
        acc: &Accessor,
        usage: &'static str,
        dims: &[Dimensions],
        types: &[DataType],
    ) -> Result<(), GltfError<Error>> {
        if dims.contains(&acc.dimensions) && types.contains(&acc.data_type) {
            Ok(())
        } else {
            Err(GltfError::AccessorFormat {
                accessor: acc.index,
                usage,
                found: format!(
                    "{} of {}",
                    acc.dimensions.name(),
                    component_name(acc.data_type)
                ),
            })
        }
    }

    /// Every component of an accessor (count x components, row after row), dense data first, then the
    /// sparse substitutions. `convert` turns one component's bytes into a value.
    pub(super) fn read<T: Copy + Default>(
        &self,
        acc: &Accessor,
        convert: impl Fn(DataType, &[u8]) -> T,
    ) -> Result<Vec<T>, GltfError<Error>> {
        let t = acc.data_type;
        let comps = acc.dimensions.multiplicity();
        let csize = t.size();
        let esize = csize * comps;
        let count = acc.count;
        let out_of_bounds =
            |needed: Option<usize>, available: usize| GltfError::AccessorOutOfBounds {
                accessor: acc.index,
                count,
                needed,
                available,
            };
        let components = count.saturating_mul(comps);
        // Counts every read against the predicted allocation (a copy is made each time), and the
        // accessor against the load's budget once, before anything is allocated for it.
        let charge = || {
            let mut charged = self.charged.borrow_mut();
            if charged.contains(&acc.index) {
                return self.tally.components(components);
            }
            let left = self.budget.get();
            if components > left {
                return Err(GltfError::AccessorTooLarge {
                    accessor: acc.index,
                    components,
                });
            }
            self.tally.components(components)?;
            self.budget.set(left - components);
            charged.insert(acc.index);
            Ok(())
        };
        let view = acc.view.and_then(|v| self.doc.views.get(v));
        let mut out = match view {
            Some(view) => {
                let data = self.view_bytes(view)?;
                let stride = view.stride.unwrap_or(esize);
                let offset = acc.offset;
                let needed = match count {
                    0 => Some(0),
                    n => (n - 1)
                        .checked_mul(stride)
                        .and_then(|x| x.checked_add(offset))
                        .and_then(|x| x.checked_add(esize)),
                };
                match needed {
                    Some(needed) if stride >= esize && needed <= data.len() => {}
                    _ => return Err(out_of_bounds(needed, data.len())),
                }
                // The check above bounds count by the data, and the budget bounds repeated views of it.
                charge()?;
                let mut out = Vec::with_capacity(components);
                for i in 0..count {
                    let base = offset + i * stride;
                    for c in 0..comps {
                        let at = base + c * csize;
                        out.push(convert(t, &data[at..at + csize]));
                    }
                }
                out
            }
            // Implicit zeros: only the budget bounds them.
            None => {
                charge()?;
                vec![T::default(); components]
            }
        };
        if let Some(sparse) = &acc.sparse {
            let n = sparse.count;
            let index_type = sparse.index_type;
            let isize = index_type.size();
            let views = |i: usize| self.doc.views.get(i);
            let (Some(iview), Some(vview)) =
                (views(sparse.indices_view), views(sparse.values_view))
            else {
                return Err(GltfError::Parse {
                    message: format!(
                        "accessor {}: a sparse buffer view does not exist",
                        acc.index
                    ),
                });
            };
            let idata = self.view_bytes(iview)?;
            let vdata = self.view_bytes(vview)?;
            let ioff = sparse.indices_offset;
            let voff = sparse.values_offset;
            let ineed = n.checked_mul(isize).and_then(|x| x.checked_add(ioff));
            let vneed = n.checked_mul(esize).and_then(|x| x.checked_add(voff));
            if ineed.is_none_or(|x| x > idata.len()) {
                return Err(out_of_bounds(ineed, idata.len()));
            }
            if vneed.is_none_or(|x| x > vdata.len()) {
                return Err(out_of_bounds(vneed, vdata.len()));
            }
            for s in 0..n {
                let at = ioff + s * isize;
                let index = component_u32(index_type, &idata[at..at + isize]) as usize;
                if index >= count {
                    return Err(GltfError::SparseIndexOutOfRange {
                        accessor: acc.index,
                        index,
                        count,
                    });
                }
                for c in 0..comps {
                    let at = voff + s * esize + c * csize;
                    out[index * comps + c] = convert(t, &vdata[at..at + csize]);
                }
            }
        }
        Ok(out)
    }

    pub(super) fn floats(&self, acc: &Accessor) -> Result<Vec<f32>, GltfError<Error>> {
        let normalized = acc.normalized;
        self.read(acc, |t, b| component_f32(t, normalized, b))
    }

    /// A VEC3 attribute (positions, normals) as f32 or normalized integers.
    pub(super) fn vec3s(
        &self,
        acc: &Accessor,
        usage: &'static str,
        types: &[DataType],
    ) -> Result<Vec<Vec3>, GltfError<Error>> {
        self.check_format(acc, usage, &[Dimensions::Vec3], types)?;
        let f = self.floats(acc)?;
        Ok(f.chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect())
    }
}

/// Component types of attributes and keys that may be floats or normalized integers.
pub(super) const FLOATS_AND_NORMALIZED: [DataType; 5] = [
    DataType::F32,
    DataType::I8,
    DataType::U8,
    DataType::I16,
    DataType::U16,
];
/// Component types of normals and tangents: floats or signed normalized integers.
pub(super) const SIGNED_FLOATS: [DataType; 3] = [DataType::F32, DataType::I8, DataType::I16];
