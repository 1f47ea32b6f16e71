//! The hierarchy rows of the report: the level-order seed's micro-benchmark (`level_sum`), local-to-model
//! on 40,000 joints with matrix input (`local_to_model`, every variant), on 120 joints with TRS input
//! (`local_to_model_trs`), and crowds of 256 x 64 (`crowd_local_to_model`, 1 and 2 threads).

use crate::baseline;
use crate::report::peer::{self, Job, Peer};
use crate::report::row::Row;
use crate::report::timing::{median_ns_per_call_in_pool, Budget};
use glam::{Affine3A, Mat4, Vec3, Vec4};
use indicatif::ProgressBar;
use ispc_skinning::experiments::{level_sum, local_to_model_soa, SoaMatrices, SoaMethod};
use ispc_skinning::reference::trs_matrix;
use ispc_skinning::{
    Backend, CrowdLocalToModelJob, CrowdModels, CrowdPose, Isa, LocalToModelJob, Locals, Method,
    Precision, Skeleton, Threads, Trs,
};
use scenes::{animated_pose, humanoid_parents, level_tree};

/// The seed's published figures for its 40,000-bone, 100-iteration benchmark (ms), serial code with
/// SSE; not measured here.
const SEED_MS: [(&str, f64); 3] = [
    ("LevelOrderSum", 3.93),
    ("RegularTraverseSum", 2.65),
    ("ParallelLevelOrder (ISPC)", 1.795),
];

type Candidate<'a> = (String, Box<dyn FnMut() + Send + 'a>);

/// Times every candidate interleaved and appends one row each. The candidate named `reference` gives
/// `reference_ns_per_item`; `items` divides the per-call time.
fn push(
    rows: &mut Vec<Row>,
    budget: Budget,
    kernel: &'static str,
    items: usize,
    threads: usize,
    c: Vec<Candidate<'_>>,
) {
    push_with_peer(rows, budget, kernel, items, threads, c, None);
}

/// [`push`], with the ozz-animation-rs peer's `kernel` on `items` in the same round-robin when there is
/// a peer (the first candidate must then be the reference).
fn push_with_peer(
    rows: &mut Vec<Row>,
    budget: Budget,
    kernel: &'static str,
    items: usize,
    threads: usize,
    mut c: Vec<Candidate<'_>>,
    peer: Option<&mut Peer>,
) {
    let mut calls: Vec<Box<dyn FnMut() + '_>> = c
        .iter_mut()
        .map(|(_, f)| Box::new(f) as Box<dyn FnMut()>)
        .collect();
    let job = Job {
        kernel,
        size: items,
        influences: None,
        file: None,
    };
    let times = peer::median_ns_per_call(peer, job, budget, &mut calls);
    drop(calls);
    let reference = c
        .iter()
        .position(|(n, _)| n == "reference")
        .map(|i| times[i])
        .unwrap_or(f64::NAN);
    for ((name, _), t) in c.iter().zip(times) {
        rows.push(Row {
            kernel,
            isa: name.clone(),
            size: items,
            influences: None,
            threads,
            ns_per_item: t / items as f64,
            reference_ns_per_item: reference / items as f64,
        });
    }
}

/// Appends every hierarchy row: `level_sum*`, `local_to_model*`, `local_to_model_trs`,
/// `crowd_local_to_model` and `crowd_threads`.
pub fn rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
    mut peer: Option<&mut Peer>,
) {
    level_sum_rows(budget, isas, rows, progress);
    local_to_model_rows(budget, isas, rows, progress);
    // 1,000 joints (a large rig) only beside the peer, so that a report without `--peers` keeps its rows.
    let sizes: &[usize] = if peer.is_some() { &[120, 1000] } else { &[120] };
    for &n in sizes {
        trs_rows(budget, isas, rows, progress, n, peer.as_deref_mut());
    }
    deterministic_trs_rows(budget, isas, rows, progress, 120);
    crowd_rows(budget, isas, rows, progress);
}

/// The seed's benchmark: 40,000 bones, float4 positions, each pass adds every parent to its children.
/// Two trees: the 17-level tree of the notes (about 2.2 children per parent) and a 3-level wide tree
/// (about 200 children per parent). Positions start at zero so values stay bounded over millions of
/// passes; the float adds cost the same whatever the values.
fn level_sum_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    for (kernel, by_level, levels) in [
        ("level_sum", "level_sum_by_level", 17usize),
        ("level_sum_wide", "level_sum_wide_by_level", 3),
    ] {
        progress.set_message(format!("{kernel} (40,000 bones, {levels} levels)"));
        let skeleton = Skeleton::from_parents(&level_tree(40_000, levels, 1)).expect("valid tree");
        let s = &skeleton;
        // The seed's three methods.
        let mut bufs: Vec<Vec<Vec4>> = (0..2 + isas.len())
            .map(|_| vec![Vec4::ZERO; 40_000])
            .collect();
        let mut it = bufs.iter_mut();
        let (a, b) = (it.next().unwrap(), it.next().unwrap());
        let mut c: Vec<Candidate<'_>> = vec![
            (
                "reference".into(),
                Box::new(move || level_sum::regular_traverse_sum(s, b)),
            ),
            (
                "serial_level_order".into(),
                Box::new(move || level_sum::level_order_sum(s, a)),
            ),
        ];
        for (&isa, d) in isas.iter().zip(it) {
            c.push((
                isa.name().into(),
                Box::new(move || level_sum::parallel_level_order_sum(isa, s, d).expect("valid")),
            ));
        }
        push(rows, budget, kernel, 40_000, 1, c);
        // The branch-free per-level ISPC method, with the parent loop measured again beside it.
        let mut bufs: Vec<Vec<Vec4>> = (0..1 + isas.len())
            .map(|_| vec![Vec4::ZERO; 40_000])
            .collect();
        let mut it = bufs.iter_mut();
        let r = it.next().unwrap();
        let mut c: Vec<Candidate<'_>> = vec![(
            "reference".into(),
            Box::new(move || level_sum::regular_traverse_sum(s, r)),
        )];
        for (&isa, d) in isas.iter().zip(it) {
            c.push((
                isa.name().into(),
                Box::new(move || level_sum::level_by_level_sum(isa, s, d).expect("valid")),
            ));
        }
        push(rows, budget, by_level, 40_000, 1, c);
    }
}

fn local_to_model_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    progress.set_message("local_to_model (40,000 joints)");
    let n = 40_000;
    let skeleton = Skeleton::from_parents(&level_tree(n, 17, 1)).expect("valid tree");
    let (t, q, s) = animated_pose(n, 0.3, true, 1);
    let locals: Vec<Mat4> = (0..n)
        .map(|j| Mat4::from_cols_array(&trs_matrix(t[j], q[j], s[j])))
        .collect();
    let root = Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0));
    let (sk, mats) = (&skeleton, &locals);
    let job = |method: Method, backend: Backend, out: &mut [Mat4]| {
        let mut j = LocalToModelJob::new(sk, Locals::Matrices(&locals), out);
        (j.root, j.method, j.backend) = (root, method, backend);
        j.run().expect("valid job");
    };
    let mut outs: Vec<Vec<Mat4>> = (0..3 + 3 * isas.len())
        .map(|_| vec![Mat4::ZERO; n])
        .collect();
    let mut it = outs.iter_mut();
    let (o1, o2) = (it.next().unwrap(), it.next().unwrap());
    let mut c: Vec<Candidate<'_>> = vec![
        (
            "reference".into(),
            Box::new(move || job(Method::Reference, Backend::Reference, o1)),
        ),
        (
            "glam".into(),
            Box::new(|| baseline::local_to_model(sk, &locals, &root, o2)),
        ),
    ];
    for &isa in isas {
        let o = it.next().unwrap();
        c.push((
            isa.name().into(),
            Box::new(move || job(Method::Auto, isa.into(), o)),
        ));
    }
    push(rows, budget, "local_to_model", n, 1, c);

    // The other implementations, each in its own group with the reference measured again beside it.
    let o = it.next().unwrap();
    let mut r1 = vec![Mat4::ZERO; n];
    let c: Vec<Candidate<'_>> = vec![
        (
            "reference".into(),
            Box::new(|| job(Method::Reference, Backend::Reference, &mut r1)),
        ),
        (
            "serial".into(),
            // The seed's serial per-parent method lives in the lab, not the library.
            Box::new(move || baseline::local_to_model_serial_children(sk, mats, &root, o)),
        ),
    ];
    push(rows, budget, "local_to_model_serial_children", n, 1, c);
    // The SoA traversals on the AoS job's data: Mat4 in, converted to SoA, traversed, converted back.
    // The conversions are part of these rows' cost, as they would be for a user with Mat4 poses.
    for (kernel, method) in [
        ("local_to_model_children", SoaMethod::Children),
        ("local_to_model_level", SoaMethod::Level),
    ] {
        let mut r = vec![Mat4::ZERO; n];
        let mut c: Vec<Candidate<'_>> = vec![(
            "reference".into(),
            Box::new(move || job(Method::Reference, Backend::Reference, &mut r)),
        )];
        for &isa in isas {
            let o = it.next().unwrap();
            let mats = &locals;
            c.push((
                isa.name().into(),
                Box::new(move || {
                    let l = SoaMatrices::from_mat4(mats);
                    let mut m = SoaMatrices::zeroed(n);
                    local_to_model_soa(sk, &l, &root, &mut m, method, isa.into()).expect("valid");
                    m.to_mat4(o).expect("one matrix per joint");
                }),
            ));
        }
        push(rows, budget, kernel, n, 1, c);
    }
    // The SoA traversals on data that is already SoA (no conversions).
    let soa_locals = SoaMatrices::from_mat4(&locals);
    for (kernel, method) in [
        ("local_to_model_children_soa", SoaMethod::Children),
        ("local_to_model_level_soa", SoaMethod::Level),
    ] {
        let mut r = vec![Mat4::ZERO; n];
        let mut c: Vec<Candidate<'_>> = vec![(
            "reference".into(),
            Box::new(move || job(Method::Reference, Backend::Reference, &mut r)),
        )];
        for &isa in isas {
            let mut models = SoaMatrices::zeroed(n);
            let l = &soa_locals;
            c.push((
                isa.name().into(),
                Box::new(move || {
                    local_to_model_soa(sk, l, &root, &mut models, method, isa.into())
                        .expect("valid");
                }),
            ));
        }
        push(rows, budget, kernel, n, 1, c);
    }
}

/// `n` joints (120: a detailed humanoid) with TRS input: the whole job, as a game calls it each frame.
fn trs_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
    n: usize,
    peer: Option<&mut Peer>,
) {
    progress.set_message(format!("local_to_model_trs ({n} joints)"));
    let skeleton = Skeleton::from_parents(&humanoid_parents(n)).expect("valid rig");
    let (t, q, s) = animated_pose(n, 0.3, true, 2);
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    };
    let sk = &skeleton;
    let job = move |method: Method, backend: Backend, out: &mut [Mat4]| {
        let mut j = LocalToModelJob::new(sk, Locals::Trs(trs), out);
        (j.method, j.backend) = (method, backend);
        j.run().expect("valid job");
    };
    let mut r = vec![Mat4::ZERO; n];
    let mut g = vec![Affine3A::IDENTITY; n];
    let mut c: Vec<Candidate<'_>> = vec![
        (
            "reference".into(),
            Box::new(move || job(Method::Reference, Backend::Reference, &mut r)),
        ),
        (
            "glam".into(),
            Box::new(move || baseline::local_to_model_trs(sk, trs, &Affine3A::IDENTITY, &mut g)),
        ),
    ];
    for &isa in isas {
        let mut o = vec![Mat4::ZERO; n];
        c.push((
            isa.name().into(),
            Box::new(move || job(Method::Auto, isa.into(), &mut o)),
        ));
    }
    push_with_peer(rows, budget, "local_to_model_trs", n, 1, c, peer);
}

/// `local_to_model_trs_deterministic`: `trs_rows`' job with `Precision::Deterministic`, the reference's
/// bits on every ISA (the reference row is the reference, deterministic as it is).
fn deterministic_trs_rows(
    budget: Budget,
    isas: &[Isa],
    rows: &mut Vec<Row>,
    progress: &ProgressBar,
    n: usize,
) {
    progress.set_message(format!("local_to_model_trs_deterministic ({n} joints)"));
    let skeleton = Skeleton::from_parents(&humanoid_parents(n)).expect("valid rig");
    let (t, q, s) = animated_pose(n, 0.3, true, 2);
    let trs = Trs {
        translations: &t,
        rotations: &q,
        scales: &s,
    };
    let sk = &skeleton;
    let job = move |backend: Backend, out: &mut [Mat4]| {
        LocalToModelJob::new(sk, Locals::Trs(trs), out)
            .backend(backend)
            .precision(Precision::Deterministic)
            .run()
            .expect("valid job");
    };
    let mut r = vec![Mat4::ZERO; n];
    let mut c: Vec<Candidate<'_>> = vec![(
        "reference".into(),
        Box::new(move || job(Backend::Reference, &mut r)),
    )];
    for &isa in isas {
        let mut o = vec![Mat4::ZERO; n];
        c.push((isa.name().into(), Box::new(move || job(isa.into(), &mut o))));
    }
    push(rows, budget, "local_to_model_trs_deterministic", n, 1, c);
}

/// 256 instances of a 64-joint rig, each at its own place, TRS input. The reference and glam rows run
/// the per-instance serial loops over plain per-instance arrays (what a user without crowds writes).
/// The 2-thread rows call the job from inside rayon's pool, as a job system would: from outside the pool
/// each call pays a thread wake-up (about 16 us on this VM, as much as the whole 1-thread job).
fn crowd_rows(budget: Budget, isas: &[Isa], rows: &mut Vec<Row>, progress: &ProgressBar) {
    progress.set_message("crowd_local_to_model (256 x 64)");
    let (joints, instances) = (64, 256);
    let skeleton = Skeleton::from_parents(&humanoid_parents(joints)).expect("valid rig");
    let poses: Vec<_> = (0..instances)
        .map(|i| animated_pose(joints, i as f32 * 0.01, true, i as u64))
        .collect();
    let roots: Vec<Mat4> = (0..instances)
        .map(|i| Mat4::from_translation(Vec3::new((i % 16) as f32, 0.0, (i / 16) as f32)))
        .collect();
    let mut pose = CrowdPose::new(&skeleton, instances).expect("within the crowd limits");
    for (i, (t, q, s)) in poses.iter().enumerate() {
        pose.set_instance(
            i,
            Trs {
                translations: t,
                rotations: q,
                scales: s,
            },
        )
        .expect("sizes match");
    }
    let sk = &skeleton;
    let items = joints * instances;
    for threads in [1usize, 2] {
        let (p, rts) = (&pose, &roots);
        let job = move |isa: Isa, threads: usize, out: &mut CrowdModels| {
            let mut j = CrowdLocalToModelJob::new(sk, p, out);
            (j.roots, j.backend) = (Some(rts.as_slice()), isa.into());
            j.threads = if threads == 1 {
                Threads::One
            } else {
                Threads::All
            };
            j.run().expect("valid job");
        };
        let mut aos = vec![Mat4::ZERO; joints];
        let mut aff = vec![Affine3A::IDENTITY; joints];
        let ps = &poses;
        let mut c: Vec<Candidate<'_>> = vec![
            (
                "reference".into(),
                Box::new(move || {
                    for ((t, q, s), root) in ps.iter().zip(rts) {
                        let trs = Trs {
                            translations: t,
                            rotations: q,
                            scales: s,
                        };
                        ispc_skinning::reference::local_to_model_trs(
                            sk.level_parents(),
                            trs,
                            root,
                            &mut aos,
                            0..joints,
                        );
                    }
                }),
            ),
            (
                "glam".into(),
                Box::new(move || {
                    for ((t, q, s), root) in ps.iter().zip(rts) {
                        let trs = Trs {
                            translations: t,
                            rotations: q,
                            scales: s,
                        };
                        baseline::local_to_model_trs(
                            sk,
                            trs,
                            &Affine3A::from_mat4(*root),
                            &mut aff,
                        );
                    }
                }),
            ),
        ];
        if threads == 1 {
            for &isa in isas {
                let mut out = CrowdModels::new(sk, instances).expect("within the crowd limits");
                c.push((isa.name().into(), Box::new(move || job(isa, 1, &mut out))));
            }
            push(rows, budget, "crowd_local_to_model", items, 1, c);
        } else {
            // The `crowd_threads` block: every ISA with one thread and with the pool, sampled
            // interleaved, so the scaling ratio comes from one block. The serial rows are measured
            // again as the reference; they do not use threads.
            let pool = rayon::current_num_threads();
            let mut counts = vec![1, 1];
            for &isa in isas {
                for t in [1, pool] {
                    let mut out = CrowdModels::new(sk, instances).expect("within the crowd limits");
                    c.push((isa.name().into(), Box::new(move || job(isa, t, &mut out))));
                    counts.push(t);
                }
            }
            let mut calls: Vec<Box<dyn FnMut() + Send + '_>> = c
                .iter_mut()
                .map(|(_, f)| Box::new(f) as Box<dyn FnMut() + Send>)
                .collect();
            let times = median_ns_per_call_in_pool(budget, &mut calls);
            drop(calls);
            for (((name, _), t), threads) in c.iter().zip(&times).zip(counts) {
                rows.push(Row {
                    kernel: "crowd_threads",
                    isa: name.clone(),
                    size: items,
                    influences: None,
                    threads,
                    ns_per_item: t / items as f64,
                    reference_ns_per_item: times[0] / items as f64,
                });
            }
        }
    }
}

/// Prints the targets for the hierarchy, read off this run's rows, and the seed's published
/// figures beside the `level_sum` rows.
pub fn print_summary(rows: &[Row]) {
    let find = |k: &str, isa: &str, threads: usize| {
        rows.iter()
            .find(|r| r.kernel == k && r.isa == isa && r.threads == threads)
    };
    let best = |k: &str, threads: usize| {
        rows.iter()
            .filter(|r| r.kernel == k && r.threads == threads && Isa::from_name(&r.isa).is_some())
            .min_by(|a, b| a.ns_per_item.total_cmp(&b.ns_per_item))
    };
    for (kernel, by_level) in [
        ("level_sum", "level_sum_by_level"),
        ("level_sum_wide", "level_sum_wide_by_level"),
    ] {
        let ms = |r: &Row| r.ns_per_item * 40_000.0 * 100.0 / 1e6;
        let serial = [
            find(kernel, "serial_level_order", 1),
            find(kernel, "reference", 1),
        ];
        print!("{kernel} (40,000 bones x 100 passes, ms): ");
        if let [Some(a), Some(b)] = serial {
            print!(
                "LevelOrderSum {:.3}, RegularTraverseSum {:.3}",
                ms(a),
                ms(b)
            );
        }
        for (label, k) in [("children foreach", kernel), ("by level", by_level)] {
            // The faster serial method measured in the same row, interleaved with these ISAs.
            let faster = rows
                .iter()
                .filter(|r| r.kernel == k && Isa::from_name(&r.isa).is_none())
                .map(|r| r.ns_per_item)
                .fold(f64::INFINITY, f64::min);
            for r in rows
                .iter()
                .filter(|r| r.kernel == k && Isa::from_name(&r.isa).is_some())
            {
                print!(
                    ", ISPC {label} {} {:.3} ({:.2}x the faster serial)",
                    r.isa,
                    ms(r),
                    faster / r.ns_per_item
                );
            }
        }
        println!();
    }
    println!(
        "  the seed's published figures (ms, not measured here): {}",
        SEED_MS
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let (Some(b), Some(r)) = (
        best("local_to_model", 1),
        find("local_to_model", "reference", 1),
    ) {
        println!("local_to_model, 40,000 joints: best ISA {} {:.2} ns/joint, {:.2}x the reference (target 1.8x)", b.isa, b.ns_per_item, r.ns_per_item / b.ns_per_item);
    }
    if let Some(b) = best("local_to_model_trs", 1) {
        println!(
            "local_to_model_trs, 120 joints: best ISA {} {:.2} ns/joint (target under 4 ns)",
            b.isa, b.ns_per_item
        );
    }
    if let (Some(b1), Some(r)) = (
        best("crowd_local_to_model", 1),
        find("crowd_local_to_model", "reference", 1),
    ) {
        print!("crowd_local_to_model 256 x 64: best ISA {} {:.2} ns/joint-instance on 1 thread, {:.2}x the reference (target 2.5x)", b1.isa, b1.ns_per_item, r.ns_per_item / b1.ns_per_item);
        // The scaling comes from the crowd_threads block, where both runs were sampled together.
        let block = |many: bool| {
            rows.iter()
                .find(|x| x.kernel == "crowd_threads" && (x.threads > 1) == many && x.isa == b1.isa)
        };
        if let (Some(one), Some(all)) = (block(false), block(true)) {
            print!(
                "; {} threads {:.2} ns, {:.2}x one thread measured beside it ({:.2} ns) (target 1.7x)",
                all.threads,
                all.ns_per_item,
                one.ns_per_item / all.ns_per_item,
                one.ns_per_item
            );
        }
        println!();
    }
    println!();
}
