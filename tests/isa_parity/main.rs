//! Every ISPC kernel on every ISA against the serial reference (see tests/harness/mod.rs for how ISAs
//! that cannot run are reported).

#[path = "../harness/mod.rs"]
mod harness;
mod hierarchy;
mod skin;
mod transform;

fn main() {
    harness::run(&[
        ("transform_points", transform::check_transform_points_vec4),
        ("transform_points3", transform::check_transform_points_vec3),
        ("local_to_model_joint", hierarchy::check_joint),
        ("local_to_model_children", hierarchy::check_children),
        ("local_to_model_level", hierarchy::check_level),
        ("local_to_model_partial", hierarchy::check_partial),
        ("local_to_model_soa", hierarchy::check_soa_api),
        ("crowd_local_to_model", hierarchy::check_crowd),
        ("skin_palette", hierarchy::check_palette),
        ("level_sum", hierarchy::check_level_sum),
        ("skin_pnt", skin::check_skin),
        ("skin_pnt_compact", skin::check_skin_compact),
        ("skin_outputs", skin::check_skin_outputs),
        ("skin_pnt_renormalize", skin::check_skin_renormalize),
        ("skin_pnt_threads", skin::check_skin_threads),
        ("skin_pnt_streaming", skin::check_skin_streaming),
        ("skin_p_only", skin::check_skin_p_only),
        ("skin_p_base", skin::check_skin_p_base),
        ("skin_p_base_threads", skin::check_skin_p_base_threads),
        ("skin_p_bone_major", skin::check_skin_p_bone_major),
    ])
}
