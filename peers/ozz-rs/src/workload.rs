//! The one thing every workload module and the protocol share, in a leaf file so that they do not
//! import each other in a circle.

/// One workload set up for timing; `run` is the call that is timed.
pub trait Workload {
    /// One call: one skinning job, one local-to-model job, one blending job or one whole frame.
    fn run(&mut self);
}
