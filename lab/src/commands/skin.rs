//! `ispc-skinning skin FILE`: poses a glTF character at one time of one clip and skins every skinned
//! primitive, then prints a summary or writes JSON, OBJ or a PNG picture.
//!
//! Every drawn primitive instance of the default scene comes out: skinned ones, rigid ones (mesh nodes
//! under a joint or an animated node) and static ones, with morph targets applied. Outputs (chosen by
//! the `--out` extension), all in glTF world space, are written by `commands::skin_output`:
//! - `.json`: `{"asset", "clip", "clips", "time", "meshes": [{"node", "mesh", "primitive", "kind",
//!   "positions", "normals", "tangents"}]}`, entries sorted by node index then primitive index,
//!   `clips` the `--clips` set's file name (null for the file's own clips), `normals` null when
//!   absent, `tangents` only when present;
//! - `.obj`: one `o` per primitive with `v`, `vn` (when the primitive has normals) and `f` lines from
//!   the primitive's triangles;
//! - `.png`: a shaded picture, drawn by `commands::render` from `--azimuth` and `--elevation`.

use super::Failure;
use clap::Args;
use ispc_skinning::{Backend, Escaped, Isa, Skinning};
#[cfg(feature = "gltf")]
use {
    super::skin_output::{json, obj},
    ispc_skinning::gltf::{GltfError, GltfScene, PrimitiveKind, Wrap},
    ispc_skinning::Precision,
    std::path::Path,
    std::time::Instant,
};

/// Which clip `--clip` names.
#[derive(Clone, Debug, PartialEq)]
pub enum ClipChoice {
    /// A clip by its index in the file.
    Index(usize),
    /// No clip: the rest pose (`--clip none`).
    None,
}

/// The arguments of `skin`.
#[derive(Debug, Args)]
#[command(
    after_help = "Outputs, all in glTF world space, of every drawn primitive (skinned, rigid and \
static): PATH.json writes the positions, normals and tangents, PATH.obj the geometry, PATH.png a shaded \
512 x 512 picture seen from --azimuth and --elevation; without --out, a summary."
)]
pub struct SkinArgs {
    /// The character: a .gltf or .glb file.
    pub file: String,
    /// The clip to sample, by index, or `none` for the rest pose [default: clip 0, if any].
    #[arg(long, value_name = "N|none", value_parser = parse_clip, overrides_with = "clip_name")]
    pub clip: Option<ClipChoice>,
    /// The clip to sample, by name.
    #[arg(long, value_name = "S", overrides_with = "clip")]
    pub clip_name: Option<String>,
    /// The time in seconds; times outside the clip hold its ends.
    #[arg(long, value_name = "T", default_value_t = 0.0, value_parser = parse_time, allow_negative_numbers = true)]
    pub time: f32,
    /// Blend clips instead of playing one: each clip (index or name) sampled at --time, blended by
    /// weight (BlendingJob; the rest pose fills in below a total weight of 0.1).
    #[cfg(feature = "gltf")]
    #[arg(long, value_name = "CLIP:WEIGHT[,CLIP:WEIGHT...]", value_parser = super::blend::parse_blend, conflicts_with_all = ["clip", "clip_name"])]
    pub blend: Option<super::blend::BlendSpec>,
    /// Play the clips of a clip set that `compress` wrote (compact clips) instead of the file's own:
    /// --clip and --clip-name then choose among them.
    #[cfg(feature = "gltf")]
    #[arg(long, value_name = "SET", conflicts_with = "blend")]
    pub clips: Option<String>,
    /// Where to write the result: PATH.json, PATH.obj or PATH.png; never the input file or a file it
    /// names (refused by device and inode), written whole or not at all.
    #[arg(long, value_name = "PATH")]
    pub out: Option<String>,
    /// The ISA that runs the kernels: sse4, avx2, avx512 or neon [default: auto].
    #[arg(long, value_name = "NAME", value_parser = parse_isa, conflicts_with = "reference")]
    pub isa: Option<Isa>,
    /// Run the serial Rust reference instead of an ISA.
    #[arg(long)]
    pub reference: bool,
    /// How to skin: lbs (linear blend skinning) or dq (dual quaternions, which keep a twisting joint's
    /// volume).
    #[arg(long, value_name = "lbs|dq", default_value = "lbs", value_parser = parse_skinning)]
    pub skinning: Skinning,
    /// Bit-identical results on every backend and platform (Precision::Deterministic): `--out x.json`
    /// then writes the same bytes with --reference and every --isa, on every machine (CI checks
    /// x86-64 and AArch64 Linux and x86-64 Windows).
    #[arg(long)]
    pub deterministic: bool,
    /// The picture's camera turn around +Y, in degrees (0 looks down -Z, 90 from +X).
    #[arg(long, value_name = "DEG", default_value_t = 0.0, value_parser = parse_angle, allow_negative_numbers = true)]
    pub azimuth: f32,
    /// The picture's camera height, in degrees above the horizontal plane (90 looks straight down).
    #[arg(long, value_name = "DEG", default_value_t = 0.0, value_parser = parse_angle, allow_negative_numbers = true)]
    pub elevation: f32,
    /// Import and output limits: a file over one fails with a message naming it.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The import limits of the library (`ImportLimits`, same defaults) and the CLI's own output limits.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Largest glTF file, and external buffer file, to read (bytes).
    #[arg(long, value_name = "BYTES", default_value_t = 512 << 20)]
    pub max_file_bytes: usize,
    /// Most nodes in the file.
    #[arg(long, value_name = "N", default_value_t = 1 << 16)]
    pub max_nodes: usize,
    /// Most key times in one animation channel.
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    pub max_keys: usize,
    /// Most skinned vertices over every primitive instance.
    #[arg(long, value_name = "N", default_value_t = 1 << 22)]
    pub max_vertices: usize,
    /// Most bytes of skinned output, in memory and in the file --out writes.
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    pub max_output_bytes: usize,
    /// Most pixel tests the PNG render may make (each triangle's screen bounding box, summed).
    #[arg(long, value_name = "N", default_value_t = 1 << 28)]
    pub max_render_work: u64,
}

impl Default for LimitArgs {
    fn default() -> LimitArgs {
        LimitArgs {
            max_file_bytes: 512 << 20,
            max_nodes: 1 << 16,
            max_keys: 1 << 20,
            max_vertices: 1 << 22,
            max_output_bytes: 256 << 20,
            max_render_work: 1 << 28,
        }
    }
}

#[cfg(feature = "gltf")]
impl LimitArgs {
    /// The library's load options with these limits.
    pub(crate) fn load_options(&self) -> ispc_skinning::gltf::LoadOptions {
        let mut options = ispc_skinning::gltf::LoadOptions::default();
        options.limits.file_bytes = self.max_file_bytes;
        options.limits.nodes = self.max_nodes;
        options.limits.keys_per_channel = self.max_keys;
        options.limits.skinned_vertices = self.max_vertices;
        options.limits.output_bytes = self.max_output_bytes;
        options
    }
}

fn parse_clip(v: &str) -> Result<ClipChoice, String> {
    if v == "none" {
        return Ok(ClipChoice::None);
    }
    v.parse()
        .map(ClipChoice::Index)
        .map_err(|_| format!("--clip takes a clip index or 'none', not '{v}'"))
}

fn parse_time(v: &str) -> Result<f32, String> {
    v.parse()
        .ok()
        .filter(|t: &f32| t.is_finite())
        .ok_or_else(|| format!("--time takes a finite number of seconds, not '{v}'"))
}

fn parse_angle(v: &str) -> Result<f32, String> {
    v.parse()
        .ok()
        .filter(|a: &f32| a.is_finite())
        .ok_or_else(|| format!("takes a finite angle in degrees, not '{v}'"))
}

fn parse_isa(v: &str) -> Result<Isa, String> {
    v.parse().map_err(|e| format!("{e}"))
}

/// `--skinning`: `lbs` or `dq`.
fn parse_skinning(v: &str) -> Result<Skinning, String> {
    match v {
        "lbs" => Ok(Skinning::Linear),
        "dq" => Ok(Skinning::DualQuaternion),
        _ => Err(format!("'{}': expected lbs or dq", Escaped(v))),
    }
}

impl SkinArgs {
    /// Who runs the kernels: `--isa` (checked to run here), `--reference`, or `Backend::Auto` (with
    /// `ISPC_SKINNING_ISA` checked here too).
    ///
    /// # Errors
    /// When the ISA given cannot run on this CPU, by `--isa` or by `ISPC_SKINNING_ISA` (which
    /// `Backend::Auto` follows): a request that cannot be carried out (exit status 2), found before
    /// the file is read, so it is never blamed on the file.
    pub fn backend(&self) -> Result<Backend, String> {
        match (self.isa, self.reference) {
            (Some(isa), _) => {
                isa.runnable().map_err(|e| format!("--isa: {e}"))?;
                Ok(Backend::Isa(isa))
            }
            (None, true) => Ok(Backend::Reference),
            (None, false) => {
                super::isa_override()?;
                Ok(Backend::Auto)
            }
        }
    }
}

/// Runs `skin`: loads the file, poses and skins it, then prints the summary or writes `--out`.
///
/// # Errors
/// A message for a file that cannot be loaded, a clip that is not there, an ISA that cannot run, an
/// unknown output extension, an output that is the input (or a file it names) or that cannot be
/// written (the old file then stays whole, see [`crate::output`]); and, in a binary built without the
/// `gltf` feature, always.
pub fn run(args: &SkinArgs) -> Result<(), Failure> {
    #[cfg(feature = "gltf")]
    return skin(args);
    #[cfg(not(feature = "gltf"))]
    {
        let _ = args;
        Err(Failure::from(
            "this binary was built without the 'gltf' cargo feature, which 'skin' needs"
                .to_string(),
        ))
    }
}

#[cfg(feature = "gltf")]
fn skin(args: &SkinArgs) -> Result<(), Failure> {
    let backend = args.backend()?;
    // The output may not be the input, nor a file the input names: checked before the file is loaded
    // (see crate::output), and again when it is written.
    let mut protected = crate::output::Protected::new();
    if let Some(out) = &args.out {
        protected.gltf(Path::new(&args.file), args.limits.max_file_bytes);
        if let Some(set) = &args.clips {
            protected.file(Path::new(set));
        }
        protected.check("--out", Path::new(out))?;
    }
    // With --clips, the clips of the set play instead of the file's own (read first: it is small).
    let set = match &args.clips {
        Some(path) => Some(load_set(path, args.limits.max_file_bytes)?),
        None => None,
    };
    let shown = Escaped(&args.file);
    let scene = GltfScene::load_with(&args.file, &args.limits.load_options()).map_err(|e| {
        // A limit's message names the library's field; a CLI user needs the flag.
        let flag = match &e {
            ispc_skinning::Error::Gltf(GltfError::Limit { limit, .. }) => match *limit {
                "file_bytes" => " (pass --max-file-bytes to raise it)",
                "nodes" => " (pass --max-nodes to raise it)",
                "keys_per_channel" => " (pass --max-keys to raise it)",
                "skinned_vertices" => " (pass --max-vertices to raise it)",
                "output_bytes" => " (pass --max-output-bytes to raise it)",
                _ => "",
            },
            _ => "",
        };
        Failure::input(format!("{shown}: {e}{flag}"))
    })?;
    let names: Vec<Option<&str>> = match &set {
        Some(set) => set.iter().map(|c| c.name()).collect(),
        None => scene.clips().iter().map(|c| c.name()).collect(),
    };
    let clip = match (&args.clip_name, &args.clip) {
        (Some(name), _) => Some(
            names
                .iter()
                .position(|n| !name.is_empty() && *n == Some(name.as_str()))
                .ok_or_else(|| {
                    let listed: Vec<_> = names
                        .iter()
                        .enumerate()
                        .map(|(i, n)| format!("{i}: {}", Escaped(n.unwrap_or("(unnamed)"))))
                        .collect();
                    format!(
                        "no clip is named '{}' (clips: {})",
                        Escaped(name),
                        listed.join(", ")
                    )
                })?,
        ),
        (None, Some(ClipChoice::Index(i))) => Some(*i),
        (None, Some(ClipChoice::None)) => None,
        (None, None) => (!names.is_empty()).then_some(0),
    };
    if let Some(c) = clip.filter(|&c| c >= names.len()) {
        let from = args.clips.as_deref().unwrap_or(&args.file);
        return Err(Failure::from(format!(
            "--clip {c}: {} has {} clip(s)",
            Escaped(from),
            names.len()
        )));
    }
    // The written normals are the product here, so they are made unit length (not the runtime's
    // default, see Renormalize).
    let mut frame = scene
        .frame_buffers()
        .backend(backend)
        .skinning(args.skinning)
        .precision(if args.deterministic {
            Precision::Deterministic
        } else {
            Precision::Fast
        })
        .renormalize(ispc_skinning::Renormalize::Precise);
    let start = Instant::now();
    // With --blend the JSON's "clip" is null: the pose is the blend, not one clip.
    let clip = if args.blend.is_some() { None } else { clip };
    match (&args.blend, set.as_deref().zip(clip)) {
        (Some(spec), _) => super::blend::evaluate(&scene, spec, args.time, backend, &mut frame)?,
        // A compact clip: played as the one layer of a frame, then the rest of the frame.
        (None, Some((set, c))) => {
            let layer = ispc_skinning::ClipLayer::new(&set[c], args.time).wrap(Wrap::Clamp);
            let character = scene.character();
            character
                .play(&mut frame, &[layer], &[])
                .and_then(|()| character.evaluate(&mut frame))
                .map_err(|e| {
                    let from = Escaped(args.clips.as_deref().unwrap_or_default());
                    Failure::input(format!("{shown}: clip {c} of --clips {from}: {e}"))
                })?
        }
        (None, None) => scene
            .evaluate(clip, args.time, Wrap::Clamp, &mut frame)
            .map_err(|e| Failure::input(format!("{shown}: {e}")))?,
    }
    let elapsed = start.elapsed();
    let asset = Path::new(&args.file)
        .file_name()
        .map_or(args.file.clone(), |n| n.to_string_lossy().into_owned());

    let Some(out) = &args.out else {
        let backend = match backend {
            Backend::Auto => Backend::Auto
                .for_kernel(ispc_skinning::KernelFamily::Skinning)
                .map_err(|e| e.to_string())?,
            b => b,
        };
        let drawn = scene.drawn(&frame).map_err(|e| e.to_string())?;
        let vertices: usize = drawn.iter().map(|d| d.vertices.positions.len()).sum();
        let triangles: usize = drawn.iter().map(|d| d.triangles.len()).sum();
        let kind = |k: PrimitiveKind| drawn.iter().filter(|d| d.kind == k).count();
        println!("asset:     {}", Escaped(&asset));
        let duration = |c: usize| match &set {
            Some(set) => set.get(c).map_or(0.0, |k| k.duration()),
            None => scene.clips().get(c).map_or(0.0, |k| k.duration()),
        };
        match clip {
            Some(c) => println!(
                "clip:      {c} ({}{}), {:.3} s long, sampled at {} s",
                Escaped(names.get(c).copied().flatten().unwrap_or("unnamed")),
                if set.is_some() { ", compact" } else { "" },
                duration(c),
                args.time
            ),
            None => match &args.blend {
                Some(b) => println!("blend:     {b}, sampled at {} s", args.time),
                None => println!("clip:      none (rest pose)"),
            },
        }
        println!(
            "meshes:    {} primitives ({} skinned, {} rigid, {} static), {vertices} vertices, {triangles} triangles, {} skins, {} nodes",
            drawn.len(),
            kind(PrimitiveKind::Skinned),
            kind(PrimitiveKind::Rigid),
            kind(PrimitiveKind::Static),
            scene.skins().len(),
            scene.node_count()
        );
        println!("backend:   {}", backend.name());
        println!(
            "skinning:  {}",
            match args.skinning {
                Skinning::Linear => "linear blend (lbs)",
                Skinning::DualQuaternion => "dual quaternions (dq)",
            }
        );
        println!("precision: {}", frame.precision.name());
        println!(
            "time:      {:.3} ms for one frame (sample, local to model, palette, morph, skin, rigid; first frame, cold caches)",
            elapsed.as_secs_f64() * 1e3
        );
        return Ok(());
    };
    let ext = Path::new(out)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let over = |written: usize| {
        Failure::input(format!(
            "{shown}: the output passed --max-output-bytes {} ({written} bytes written when it stopped)",
            args.limits.max_output_bytes
        ))
    };
    let max = args.limits.max_output_bytes;
    let drawn = scene.drawn(&frame).map_err(|e| e.to_string())?;
    let camera = super::render::Camera {
        azimuth: args.azimuth,
        elevation: args.elevation,
    };
    let bytes = match ext.as_deref() {
        Some("json") => {
            let set = args.clips.as_deref().filter(|_| clip.is_some()).map(|p| {
                Path::new(p)
                    .file_name()
                    .map_or(p.to_string(), |n| n.to_string_lossy().into_owned())
            });
            json(&drawn, &asset, clip, set.as_deref(), args.time, max)
                .map_err(over)?
                .into_bytes()
        }
        Some("obj") => obj(&drawn, &asset, clip, args.time, max)
            .map_err(over)?
            .into_bytes(),
        Some("png") => {
            let work = super::render::work(&drawn, camera, args.limits.max_render_work);
            if work > args.limits.max_render_work {
                return Err(Failure::input(format!(
                    "{shown}: the picture needs over {work} units of work (triangles and their pixel tests), over --max-render-work {}",
                    args.limits.max_render_work
                )));
            }
            super::render::png(&drawn, camera)?
        }
        _ => {
            return Err(Failure::from(format!(
                "--out must end in .json, .obj or .png (got '{}')",
                Escaped(out)
            )))
        }
    };
    crate::output::write("--out", Path::new(out), &bytes, &protected).map_err(Failure::from)
}

/// The compact clips of the clip set at `path` (`compress` writes them), at most `max_bytes` long.
#[cfg(feature = "gltf")]
fn load_set(path: &str, max_bytes: usize) -> Result<Vec<ispc_skinning::CompactClip>, Failure> {
    use std::io::Read;
    let shown = Escaped(path);
    let fail = |e: std::io::Error| Failure::input(format!("--clips {shown}: {e}"));
    // The path is checked before opening (opening a FIFO blocks until a writer comes) and the open
    // file again (a path swapped in between): a FIFO or device (`/dev/zero`) would hang or never end.
    // At most `max_bytes + 1` bytes are read.
    if !std::fs::metadata(path).map_err(fail)?.is_file() {
        return Err(Failure::input(format!(
            "--clips {shown}: not a regular file"
        )));
    }
    let file = std::fs::File::open(path).map_err(fail)?;
    if !file.metadata().map_err(fail)?.is_file() {
        return Err(Failure::input(format!(
            "--clips {shown}: not a regular file"
        )));
    }
    let mut bytes = Vec::new();
    file.take((max_bytes as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() > max_bytes {
        return Err(Failure::input(format!(
            "--clips {shown}: over --max-file-bytes {max_bytes}"
        )));
    }
    super::compress::read_set(&bytes).map_err(|e| Failure::input(format!("--clips {shown}: {e}")))
}
