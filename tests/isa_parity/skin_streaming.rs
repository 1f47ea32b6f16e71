//! Skinning with streaming stores: every ISA gives the bits of ordinary stores, on one thread and on
//! all, into separate streams, a tightly packed interleaved buffer (streamed) and one with gaps (not
//! streamed, the gaps untouched), on meshes of one influence count, mixed meshes reordered by their
//! permutation, and mixed meshes in their original order (which stream only when made of whole runs).

use crate::common::Rng;
use crate::skin::{input, mesh, palette, same_box, Mesh, JOINTS};
use glam::{Vec3, Vec4};
use ispc_skinning::{Isa, PrepareOptions, Renormalize, SkinOutput, SkinnedMesh, SkinningJob};

/// Streaming stores give the same bits as ordinary ones, on one thread and on all, into separate
/// streams, a tightly packed interleaved buffer (streamed) and one with gaps (not streamed, and the gaps
/// stay untouched); on a one-count mesh, a mixed mesh reordered by its permutation (both stream), and a
/// mixed mesh in its original order (streams when made of whole runs, else falls back to ordinary
/// stores).
pub fn check_skin_streaming(isa: Isa) -> Result<String, String> {
    // Whether the vertices of each influence group among the last n % 16 are consecutive (a vertex
    // of 9 to 11 influences is in the group of 12, one of 13 to 15 in the group of 16).
    fn tail_contiguous(n: usize, count: &dyn Fn(usize) -> usize) -> bool {
        let group = |k: usize| match k {
            9..=12 => 12,
            13..=16 => 16,
            _ => k,
        };
        let tail: Vec<usize> = (n - n % 16..n).collect();
        (1..=16).all(|k| {
            let of_k: Vec<usize> = tail
                .iter()
                .copied()
                .filter(|&i| group(count(i)) == k)
                .collect();
            of_k.windows(2).all(|w| w[1] == w[0] + 1)
        })
    }
    use ispc_skinning::Threads;
    let mut rng = Rng::new(77);
    let pal = palette(&mut rng);
    let mut cases = 0;
    for n in [1usize, 5, 255, 256, 257, 1000, 40_000] {
        let mixed = |i: usize| 1 + (i * 7 + i / 5) % 16;
        let original = mesh(n, &mut rng, &mixed, true);
        let prepared = SkinnedMesh::prepare(&input(&original), &PrepareOptions::new(JOINTS))
            .map_err(|e| e.to_string())?;
        // The same mesh reordered once by the permutation: each influence group is then contiguous.
        let perm = prepared.permutation();
        let pick = |i: usize| perm[i] as usize;
        let reordered = Mesh {
            pos: (0..n).map(|i| original.pos[pick(i)]).collect(),
            nrm: (0..n).map(|i| original.nrm[pick(i)]).collect(),
            tan: (0..n).map(|i| original.tan[pick(i)]).collect(),
            j: std::array::from_fn(|set| (0..n).map(|i| original.j[set][pick(i)]).collect()),
            w: std::array::from_fn(|set| (0..n).map(|i| original.w[set][pick(i)]).collect()),
        };
        let single = mesh(n, &mut rng, &|_| 4, true);
        for (what, m, sequential) in [
            ("one count", &single, Some(true)),
            ("reordered", &reordered, Some(true)),
            // Every whole run of 16 vertices of this mesh holds an 8-influence vertex, so preparing
            // puts the runs together in group 8, one contiguous range. The vertices of a last, partial
            // run go to the groups of their own counts: the mesh stays contiguous exactly when the
            // tail's vertices of each count are consecutive (n = 255: no; n = 257, 1000: yes).
            // Meshes shorter than a run are left unchecked.
            (
                "mixed",
                &original,
                (n >= 16).then(|| tail_contiguous(n, &mixed)),
            ),
        ] {
            let prepared = SkinnedMesh::prepare(&input(m), &PrepareOptions::new(JOINTS))
                .map_err(|e| e.to_string())?;
            if sequential.is_some_and(|s| s != prepared.streams_sequentially()) {
                return Err(format!(
                    "streaming {what} n={n}: streams_sequentially() is {}, expected {sequential:?}",
                    prepared.streams_sequentially()
                ));
            }
            // (stride in floats, offsets of position, normal, tangent); NaN-filled so gaps show.
            for (stride, offsets) in [(0usize, [0usize; 3]), (10, [0, 3, 6]), (13, [1, 4, 8])] {
                let run = |threads: Threads, streaming: bool| -> Result<Vec<u32>, String> {
                    let mut p = vec![Vec3::NAN; n];
                    let mut nn = vec![Vec3::NAN; n];
                    let mut t = vec![Vec4::NAN; n];
                    let mut buf = vec![f32::NAN; n * stride.max(1)];
                    let out = if stride == 0 {
                        SkinOutput::Separate {
                            positions: &mut p,
                            normals: Some(&mut nn),
                            tangents: Some(&mut t),
                        }
                    } else {
                        SkinOutput::Interleaved {
                            bytes: bytemuck::cast_slice_mut(&mut buf),
                            stride: 4 * stride,
                            positions: 4 * offsets[0],
                            normals: Some(4 * offsets[1]),
                            tangents: Some(4 * offsets[2]),
                        }
                    };
                    let mut job = SkinningJob::new(&prepared, &pal, out);
                    (job.backend, job.threads, job.streaming, job.renormalize) =
                        (isa.into(), threads, streaming, Renormalize::Fast);
                    let b = job.run_with_bounds().map_err(|e| e.to_string())?;
                    if stride > 0 {
                        p = buf
                            .chunks(stride)
                            .map(|f| Vec3::from_slice(&f[offsets[0]..offsets[0] + 3]))
                            .collect();
                    }
                    same_box(b, &p, &|| {
                        format!(
                            "streaming {isa} {what} n={n} stride={stride} {threads:?} {streaming}"
                        )
                    })?;
                    let mut bits: Vec<u32> = buf.iter().map(|x| x.to_bits()).collect();
                    if stride == 0 {
                        for i in 0..n {
                            bits.extend(p[i].to_array().map(f32::to_bits));
                            bits.extend(nn[i].to_array().map(f32::to_bits));
                            bits.extend(t[i].to_array().map(f32::to_bits));
                        }
                    }
                    Ok(bits)
                };
                let plain = run(Threads::One, false)?;
                for threads in [Threads::One, Threads::All] {
                    let streamed = run(threads, true)?;
                    if let Some(i) = (0..plain.len()).find(|&i| plain[i] != streamed[i]) {
                        return Err(format!(
                            "streaming {isa} {what} n={n} stride={stride} {threads:?}: float {i} is {} with streaming stores, {} without",
                            f32::from_bits(streamed[i]),
                            f32::from_bits(plain[i])
                        ));
                    }
                }
                cases += 1;
            }
        }
    }
    Ok(format!("{cases} cases"))
}
