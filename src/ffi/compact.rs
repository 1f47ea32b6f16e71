//! The compact sampling kernels (ispc/det/compact.ispc): `compact_sample`, every translation, rotation
//! and scale track of a compact clip for one character, the lanes across the tracks of a group, decoded
//! from the stream in place; and the same in two steps for a context, `compact_decode` (one frame into
//! a buffer the context keeps) and `compact_interpolate` (the pose between two decoded frames). They
//! are built only without fused multiply-adds and give the serial decoder's bits in every precision.

use super::Runnable;
use crate::layout::compact::{CompactLanes, FrameRecord};

/// Asserts the pose outputs of a compact kernel: 3, 4 and 3 floats per joint of the tables.
fn assert_outputs(lanes: &CompactLanes, translations: &[f32], rotations: &[f32], scales: &[f32]) {
    let joints = lanes.joints();
    assert_eq!(translations.len(), joints * 3, "sampled translations");
    assert_eq!(rotations.len(), joints * 4, "sampled rotations");
    assert_eq!(scales.len(), joints * 3, "sampled scales");
}

/// Asserts that `stream` is the one the tables were checked against (its length) and that every
/// record lies inside it (`CompactLanes::holds`).
fn assert_records(lanes: &CompactLanes, stream: &[u8], records: &[FrameRecord]) {
    assert_eq!(
        stream.len(),
        lanes.stream_len(),
        "the compact clip's stream"
    );
    assert!(
        records.iter().all(|&r| lanes.holds(r)),
        "compact frame records"
    );
}

/// Samples the clip whose `lanes` were built for `stream` between the frames of `r0` and `r1`, the
/// fraction `alpha` from the first, into the level-order `translations`, `rotations` and `scales` (3,
/// 4 and 3 floats per joint). Asserted: the stream is the one the tables were checked against (its
/// length), both records lie inside it (`CompactLanes::holds`), and each output holds the tables'
/// joints.
pub(crate) fn compact_sample(
    isa: Runnable,
    lanes: &CompactLanes,
    stream: &[u8],
    records: [FrameRecord; 2],
    alpha: f32,
    (translations, rotations, scales): (&mut [f32], &mut [f32], &mut [f32]),
) {
    assert_outputs(lanes, translations, rotations, scales);
    assert_records(lanes, stream, &records);
    let groups = lanes.groups();
    if groups.is_empty() {
        return;
    }
    let [r0, r1] = records;
    let byte = |r: FrameRecord| i32::try_from(r.byte).expect("a record byte the tables checked");
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. CompactLanes::new built the groups from
    // checked tracks: each group [kind 0..=5, n >= 1, base, first, l0] has its n levels and flags at
    // first .. first + n (each level below joints; l0 >= 0 only when they are l0, l0 + 1, ...
    // l0 + n - 1, so a whole gang's store_aos writes levels l0 + j0 .. l0 + j0 + gang, j0 + gang <=
    // n), an animated group's 3 * n components at base .. base + 3n of the offset, mask, inv, min and
    // extent tables (one entry per lane component) and a constant group's 3n (4n for rotations)
    // values at base.. of constants. A gang starts at a track j0 < n and reads its tables at j0 ..
    // j0 + gang - 1 (every lane on, the lanes past n storing nothing), at most 15 entries past a
    // group's last: every table, and each segment row's end, holds TABLE_PAD (16) entries past its
    // real ones (CompactLanes::new), so every read stays inside it. Records are whole bytes (record_bits a
    // multiple of 8), each component's offset + bits <= record_bits, every count and index fits in
    // i32, and stream_len (asserted equal to stream.len()) is at least frames * record_bits / 8 +
    // STREAM_READ_PAD (64). `holds` puts each record's first byte at or before the last record's, so
    // a bit offset p of a lane of a group's track lies at or below frames * record_bits bits from the
    // stream's start (a trailing component of 0 bits may sit at offset record_bits); a lane reads 4 bytes from
    // p / 8, a gang 4 * gang <= 64 bytes from the word of its first lane's p (4 * (p / 32) <= p / 8
    // bytes from the record's byte), and SSE4's gang of 4 lanes 16 bytes from its first lane's p / 8,
    // all below frames * record_bits / 8 + 64 <= stream.len() (a gang is at most 16 lanes: the
    // kernel refuses to compile wider). The gang's bytes are loaded from lane 0's
    // position, which is on in every call (a whole gang, a group's first gang from j = 0, or a foreach
    // from 0) and the smallest of the group's lanes: a gang's codes lie side by side in lane order,
    // checked by CompactLanes::new, so every code of the group's lanes lies in the bytes loaded (a
    // lane past the group's end takes some of those bytes, by a permute, and its value is dropped).
    // And `holds` puts a whole segment row from each record's segment entry, so segment + k <
    // segments.len() for every lane component k and the TABLE_PAD entries past it. Writes go to C
    // floats at C * level of the output of the group's property (C 4
    // for rotations, else 3), below joints * C = that output's length (asserted). The outputs are
    // three distinct buffers, distinct from the inputs. The tables are 4-byte aligned; the stream's
    // 4-byte words are read at byte addresses (typed as int32, which x86-64 and AArch64 load without
    // alignment).
    unsafe {
        (isa.det_only_kernels().compact_sample)(
            stream.as_ptr(),
            byte(r0),
            r0.segment,
            byte(r1),
            r1.segment,
            alpha,
            lanes.offsets().as_ptr(),
            lanes.masks().as_ptr(),
            lanes.invs().as_ptr(),
            lanes.mins().as_ptr(),
            lanes.extents().as_ptr(),
            lanes.segments().as_ptr(),
            lanes.constants().as_ptr(),
            groups.as_ptr(),
            (groups.len() / crate::layout::compact::COMPACT_GROUP_INTS) as i32,
            lanes.levels().as_ptr(),
            lanes.flags().as_ptr(),
            translations.as_mut_ptr(),
            rotations.as_mut_ptr(),
            scales.as_mut_ptr(),
        );
    }
}

/// Decodes the frame of record `r` of the clip whose `lanes` were built for `stream` into `frame`
/// (`CompactLanes::decoded_len` floats). Asserted: the stream's length is the tables', the record lies
/// inside it (`CompactLanes::holds`), and `frame` has the decoded length.
pub(crate) fn compact_decode(
    isa: Runnable,
    lanes: &CompactLanes,
    stream: &[u8],
    r: FrameRecord,
    frame: &mut [f32],
) {
    assert_records(lanes, stream, &[r]);
    assert_eq!(frame.len(), lanes.decoded_len(), "decoded compact frame");
    let groups = lanes.groups();
    let count = |x: usize| i32::try_from(x).expect("a count the tables checked");
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. CompactLanes::new checked every table: the
    // offset, mask, inv, min and extent tables hold lane_components entries each and TABLE_PAD (16)
    // more, every component's offset + bits <= record_bits, and every count fits in i32. The kernel
    // decodes whole gangs from k0 < lane_components, so it reads entries k < lane_components + 16,
    // inside the padded tables, and writes only k < lane_components. `holds` (asserted) puts the
    // record's first byte at or before the last record's, and a whole segment row from its segment
    // entry, so, as in compact_sample above, every stream byte read is below stream.len() (the
    // length asserted equal to the one the tables checked) and segment + k < segments.len() for every
    // k read (each row's end is followed by another row or the padding). The groups are the checked
    // [kind, n, base, first, l0]: an animated rotation group's 3n components lie at base .. base + 3n
    // <= lane_components and its tracks at first .. first + n <= tracks; whole gangs from j0 < n read
    // the frame at base + 2n + j < lane_components + 16 <= decoded_len, and write only j < n, to
    // lane_components + first + j < decoded_len = frame.len() (asserted). `frame` is a distinct
    // buffer. The tables and frame are 4-byte aligned; the stream is read as in compact_sample.
    unsafe {
        (isa.det_only_kernels().compact_decode)(
            stream.as_ptr(),
            count(r.byte),
            r.segment,
            lanes.offsets().as_ptr(),
            lanes.masks().as_ptr(),
            lanes.invs().as_ptr(),
            lanes.mins().as_ptr(),
            lanes.extents().as_ptr(),
            lanes.segments().as_ptr(),
            count(lanes.lane_components()),
            groups.as_ptr(),
            count(groups.len() / crate::layout::compact::COMPACT_GROUP_INTS),
            frame.as_mut_ptr(),
        );
    }
}

/// Samples the clip of `lanes` at `alpha` between two frames that [`compact_decode`] decoded, into the
/// level-order `translations`, `rotations` and `scales` (3, 4 and 3 floats per joint). Asserted: both
/// frames have the decoded length, and each output holds the tables' joints.
pub(crate) fn compact_interpolate(
    isa: Runnable,
    lanes: &CompactLanes,
    frames: [&[f32]; 2],
    alpha: f32,
    (translations, rotations, scales): (&mut [f32], &mut [f32], &mut [f32]),
) {
    assert_outputs(lanes, translations, rotations, scales);
    assert!(
        frames.iter().all(|f| f.len() == lanes.decoded_len()),
        "decoded compact frames"
    );
    let groups = lanes.groups();
    if groups.is_empty() {
        return;
    }
    let count = |x: usize| i32::try_from(x).expect("a count the tables checked");
    // SAFETY: `isa` proves the CPU runs this kernel's ISA. The groups are CompactLanes::new's checked
    // [kind, n, base, first, l0] (see compact_sample above): a gang's reads from each frame, for j
    // up to 15 past a group's last track, are base + c * n + j < lane_components + 16 and, for
    // rotations, lane_components + first + j < lane_components + tracks + 16 = decoded_len, both
    // below each frame's length (asserted decoded_len); a constant group's values, and the flags,
    // lie in their tables with the same padding (see compact_sample). Only a group's own tracks store:
    // writes go to C floats at C * level of its property's output, each level below
    // joints, so below that output's asserted length. The outputs are three distinct buffers, distinct
    // from the inputs; only 4-byte alignment is assumed.
    unsafe {
        (isa.det_only_kernels().compact_interpolate)(
            frames[0].as_ptr(),
            frames[1].as_ptr(),
            count(lanes.lane_components()),
            alpha,
            lanes.constants().as_ptr(),
            groups.as_ptr(),
            count(groups.len() / crate::layout::compact::COMPACT_GROUP_INTS),
            lanes.levels().as_ptr(),
            lanes.flags().as_ptr(),
            translations.as_mut_ptr(),
            rotations.as_mut_ptr(),
            scales.as_mut_ptr(),
        );
    }
}
