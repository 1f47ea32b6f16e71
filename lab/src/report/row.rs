//! The report's vocabulary: one measured [`Row`], the backends a row family runs on, and
//! [`push_rows`], which turns one round-robin's times into rows.

use ispc_skinning::{Backend, Isa};

/// One report row; the field names are the JSON keys.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured, for example `transform_points` or `skin_pnt`.
    pub kernel: &'static str,
    /// `reference`, `glam`, an ISA name, or the name of a lab method (such as `serial`).
    pub isa: String,
    /// Items per call: vertices, joints, or joint-instances for crowds.
    pub size: usize,
    /// Skinning influences per vertex; `None` for kernels without influences.
    pub influences: Option<u32>,
    /// Threads the call used.
    pub threads: usize,
    /// Median nanoseconds per item.
    pub ns_per_item: f64,
    /// The serial reference's median nanoseconds per item, measured in the same round-robin.
    pub reference_ns_per_item: f64,
}

impl Row {
    /// How many times faster than the serial reference this row ran.
    pub fn speedup(&self) -> f64 {
        self.reference_ns_per_item / self.ns_per_item
    }
}

/// The serial reference and every ISA given, as (report name, backend), the reference first.
pub fn backends(isas: &[Isa]) -> Vec<(String, Backend)> {
    std::iter::once(("reference".to_string(), Backend::Reference))
        .chain(isas.iter().map(|&i| (i.name().to_string(), i.into())))
        .collect()
}

/// Appends one single-thread row per backend of `backends`, from the times (ns per call of `size`
/// items) measured for them in one round-robin; the first is the reference.
pub fn push_rows(
    rows: &mut Vec<Row>,
    kernel: &'static str,
    backends: &[(String, Backend)],
    times: &[f64],
    size: usize,
    influences: Option<u32>,
) {
    for ((name, _), t) in backends.iter().zip(times) {
        rows.push(Row {
            kernel,
            isa: name.clone(),
            size,
            influences,
            threads: 1,
            ns_per_item: t / size as f64,
            reference_ns_per_item: times[0] / size as f64,
        });
    }
}
