//! Every ISPC kernel on every ISA against the serial reference (see tests/isa_parity/harness.rs for how
//! ISAs that cannot run are reported). The seeds' experiments (cargo feature `experiments`) are checked
//! only when that feature is on.

mod blend;
#[path = "../common/mod.rs"]
mod common;
mod compact;
mod deterministic;
#[cfg(feature = "experiments")]
mod fused_morph;
mod harness;
mod hierarchy;
mod morph;
mod sample;
mod skin;
mod skin_dq;
mod skin_positions;
mod skin_streaming;
mod transform;

fn main() {
    // Without `experiments` nothing is added below.
    #[cfg_attr(not(feature = "experiments"), allow(unused_mut))]
    let mut checks: Vec<(&'static str, harness::Check)> = vec![
        ("transform_points", transform::check_transform_points_vec4),
        ("transform_points3", transform::check_transform_points_vec3),
        ("local_to_model_joint", hierarchy::check_joint),
        ("local_to_model_partial", hierarchy::check_partial),
        ("crowd_local_to_model", hierarchy::check_crowd),
        ("skin_palette", hierarchy::check_palette),
        ("morph_floats", morph::check_morph),
        ("skin_pnt", skin::check_skin),
        ("skin_pnt_compact", skin::check_skin_compact),
        ("skin_outputs", skin::check_skin_outputs),
        ("skin_pnt_renormalize", skin::check_skin_renormalize),
        ("skin_pnt_threads", skin::check_skin_threads),
        ("skin_pnt_streaming", skin_streaming::check_skin_streaming),
        ("skin_p_only", skin_positions::check_skin_p_only),
        ("skin_dq", skin_dq::check_skin_dq),
        ("skin_dq_compact", skin_dq::check_skin_dq_compact),
        ("compact_sample", compact::check_compact_sample),
        ("blend", blend::check_blend),
        ("crowd_blend", blend::check_crowd_blend),
        ("sample_tracks", sample::check_sample),
        ("sample_crowd", sample::check_crowd_sample),
        ("deterministic_ltm", deterministic::check_ltm),
        ("deterministic_palette", deterministic::check_palette),
        ("deterministic_skin", deterministic::check_skin),
        ("deterministic_skin_dq", deterministic::check_skin_dq),
        (
            "deterministic_skin_dq_rigid",
            deterministic::check_skin_dq_rigid,
        ),
        ("deterministic_crowd", deterministic::check_crowd),
    ];
    #[cfg(feature = "experiments")]
    checks.extend([
        (
            "local_to_model_soa_children",
            hierarchy::check_soa_children as harness::Check,
        ),
        ("local_to_model_soa_level", hierarchy::check_soa_level),
        ("level_sum", hierarchy::check_level_sum),
        ("skin_p_base", skin_positions::check_skin_p_base),
        (
            "skin_p_base_threads",
            skin_positions::check_skin_p_base_threads,
        ),
        ("skin_p_bone_major", skin_positions::check_skin_p_bone_major),
        ("skin_morph_fused", fused_morph::check_fused_morph),
    ]);
    harness::run(&checks)
}
