//! `ispc-skinning compress FILE OUT`: every clip of a glTF file in compact form
//! ([`Clip::compress`](ispc_skinning::Clip::compress)), written as one clip set that
//! `skin FILE --clips OUT` plays.
//!
//! The clip set is `ISKCSET\0`, version 1 (u32), the clip count (u32), then each clip as its byte
//! length (u32) and [`CompactClip::to_bytes`], little-endian; [`read_set`] checks every length against
//! the bytes left and loads each clip with [`CompactClip::from_bytes`].

use super::skin::LimitArgs;
use super::Failure;
use clap::Args;
use ispc_skinning::{CompactClip, Compression, Escaped, MAX_SAMPLE_RATE};
#[cfg(feature = "gltf")]
use {ispc_skinning::gltf::GltfScene, ispc_skinning::Trs, std::path::Path};

const MAGIC: &[u8; 8] = b"ISKCSET\0";
const VERSION: u32 = 1;

/// The arguments of `compress`.
#[derive(Debug, Args)]
#[command(
    after_help = "Prints each clip's raw and compact bytes, frames and largest error. OUT is written \
whole or not at all, and never replaces FILE or a file it names."
)]
pub struct CompressArgs {
    /// The character: a .gltf or .glb file.
    pub file: String,
    /// Where to write the clip set.
    pub out: String,
    /// The largest displacement allowed of a joint or of a virtual point around it, in the file's
    /// units (metres in glTF).
    #[arg(long, value_name = "M", default_value_t = Compression::default().tolerance, value_parser = parse_positive)]
    pub tolerance: f32,
    /// How far from each joint its virtual points lie, in the file's units.
    /// 0 measures the joints alone.
    #[arg(long, value_name = "M", default_value_t = Compression::default().distance, value_parser = parse_distance)]
    pub distance: f32,
    /// Frames per second to sample every clip at, at most 1000 [default: each clip's own key rate].
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub sample_rate: Option<f32>,
    /// Import limits: a file over one fails with a message naming it.
    #[command(flatten)]
    pub limits: LimitArgs,
}

fn parse_positive(v: &str) -> Result<f32, String> {
    v.parse()
        .ok()
        .filter(|x: &f32| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("takes a finite positive number, not '{}'", Escaped(v)))
}

fn parse_distance(v: &str) -> Result<f32, String> {
    v.parse()
        .ok()
        .filter(|x: &f32| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("takes a finite number ≥ 0, not '{}'", Escaped(v)))
}

fn parse_rate(v: &str) -> Result<f32, String> {
    v.parse()
        .ok()
        .filter(|x: &f32| *x > 0.0 && *x <= MAX_SAMPLE_RATE)
        .ok_or_else(|| {
            format!(
                "takes a number of frames per second above 0 and at most {MAX_SAMPLE_RATE}, not '{}'",
                Escaped(v)
            )
        })
}

/// The clip set of `clips`.
///
/// # Errors
/// More than `u32::MAX` clips, a clip over `u32::MAX` bytes, or a set over `max_bytes`, named.
pub fn write_set(clips: &[CompactClip], max_bytes: usize) -> Result<Vec<u8>, String> {
    let u32_of = |n: usize, what: &str| {
        u32::try_from(n).map_err(|_| format!("{what} {n} does not fit the clip set's u32"))
    };
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&u32_of(clips.len(), "the clip count")?.to_le_bytes());
    let over = |len: usize| {
        format!("the clip set passed --max-output-bytes {max_bytes} ({len} bytes when it stopped)")
    };
    for clip in clips {
        if out.len() > max_bytes {
            return Err(over(out.len()));
        }
        let bytes = clip.to_bytes();
        out.extend_from_slice(&u32_of(bytes.len(), "a clip's length")?.to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    if out.len() > max_bytes {
        return Err(over(out.len()));
    }
    Ok(out)
}

/// The clips of a clip set.
///
/// # Errors
/// A message naming what is wrong: the magic bytes, the version, a length the bytes do not hold,
/// bytes after the last clip, or a clip `from_bytes` refuses (with its rule).
pub fn read_set(bytes: &[u8]) -> Result<Vec<CompactClip>, String> {
    if bytes.get(..8) != Some(&MAGIC[..]) {
        return Err("not a clip set: it does not start with ISKCSET".into());
    }
    let mut at = 8usize;
    let version = read_u32(bytes, &mut at, "the version")?;
    if version != VERSION {
        return Err(format!(
            "clip set version {version}: this build reads version {VERSION}"
        ));
    }
    let count = read_u32(bytes, &mut at, "the clip count")? as usize;
    // Each clip takes at least its 4-byte length: a count the bytes cannot hold is refused before
    // anything is reserved for it.
    if count > bytes.len().saturating_sub(at) / 4 {
        return Err(format!(
            "not a clip set: {count} clips cannot fit in {} bytes",
            bytes.len()
        ));
    }
    // Grown clip by clip: each clip's length has been read from the bytes before it is stored.
    let mut clips = Vec::new();
    for i in 0..count {
        let len = read_u32(bytes, &mut at, "a clip's length")? as usize;
        let clip = bytes
            .get(at..at.saturating_add(len))
            .ok_or_else(|| format!("not a clip set: clip {i} is cut short"))?;
        at += len;
        clips.push(CompactClip::from_bytes(clip).map_err(|e| format!("clip {i}: {e}"))?);
    }
    if at != bytes.len() {
        return Err(format!(
            "not a clip set: {} bytes follow its last clip",
            bytes.len() - at
        ));
    }
    Ok(clips)
}

/// The little-endian u32 at `at`, which moves past it.
fn read_u32(bytes: &[u8], at: &mut usize, what: &str) -> Result<u32, String> {
    let b = bytes
        .get(*at..at.saturating_add(4))
        .ok_or_else(|| format!("not a clip set: it ends before {what} (byte {at})"))?;
    *at += 4;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Runs `compress`.
///
/// # Errors
/// A file that cannot be loaded, a clip the compressor refuses (its error names the rule), an output
/// that is the input (or a file it names) or cannot be written; and, in a binary built without the
/// `gltf` feature, always.
pub fn run(args: &CompressArgs) -> Result<(), Failure> {
    #[cfg(feature = "gltf")]
    return compress(args);
    #[cfg(not(feature = "gltf"))]
    {
        let _ = args;
        Err(Failure::from(
            "this binary was built without the 'gltf' cargo feature, which 'compress' needs"
                .to_string(),
        ))
    }
}

#[cfg(feature = "gltf")]
fn compress(args: &CompressArgs) -> Result<(), Failure> {
    let mut protected = crate::output::Protected::new();
    protected.gltf(Path::new(&args.file), args.limits.max_file_bytes);
    protected.check("OUT", Path::new(&args.out))?;
    let shown = Escaped(&args.file);
    let scene = GltfScene::load_with(&args.file, &args.limits.load_options())
        .map_err(|e| Failure::input(format!("{shown}: {e}")))?;
    let settings = Compression {
        tolerance: args.tolerance,
        distance: args.distance,
        sample_rate: args.sample_rate,
        ..Compression::default()
    };
    let (t, q, s) = scene.character().level_rest();
    let rest = Trs::new(t, q, s);
    let mut clips = Vec::with_capacity(scene.clips().len());
    println!("clip  name                      raw bytes  compact  ratio   frames  max error");
    for c in 0..scene.clips().len() {
        let clip = scene
            .runtime_clip(c)
            .map_err(|e| Failure::input(format!("{shown}: clip {c}: {e}")))?;
        let compact = clip
            .compress(scene.skeleton(), rest, &settings)
            .map_err(|e| Failure::input(format!("{shown}: clip {c}: {e}")))?;
        let error = compact
            .error(&clip, scene.skeleton(), rest, settings.distance)
            .map_err(|e| Failure::input(format!("{shown}: clip {c}: {e}")))?;
        let (raw, size) = (clip.key_bytes(), compact.stored_size());
        println!(
            "{c:>4}  {:<24} {raw:>10} {size:>8} {:>5.1}:1 {:>7}  {:.2e}",
            Escaped(clip.name().unwrap_or("(unnamed)")).to_string(),
            raw as f64 / size.max(1) as f64,
            compact.frames(),
            error.max
        );
        clips.push(compact);
    }
    let bytes = write_set(&clips, args.limits.max_output_bytes)
        .map_err(|e| Failure::input(format!("OUT {}: {e}", Escaped(&args.out))))?;
    crate::output::write("OUT", Path::new(&args.out), &bytes, &protected).map_err(Failure::from)?;
    println!(
        "wrote {} clips, {} bytes, to {}",
        clips.len(),
        bytes.len(),
        Escaped(&args.out)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_set_round_trips_and_hostile_sets_are_refused() {
        let empty = write_set(&[], 1 << 20).unwrap();
        assert!(write_set(&[], 15).unwrap_err().contains("max-output-bytes"));
        assert!(read_set(&empty).unwrap().is_empty());
        for n in 0..empty.len() {
            assert!(read_set(&empty[..n]).is_err(), "{n} bytes");
        }
        let mut huge = empty.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_set(&huge).unwrap_err().contains("cannot fit"));
        let mut longer = empty.clone();
        longer.push(0);
        assert!(read_set(&longer).unwrap_err().contains("follow"));
        let mut one = empty;
        one[12..16].copy_from_slice(&1u32.to_le_bytes());
        one.extend_from_slice(&3u32.to_le_bytes());
        one.extend_from_slice(b"abc");
        assert!(read_set(&one).unwrap_err().starts_with("clip 0:"));
    }
}
