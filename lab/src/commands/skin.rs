//! `ispc-skinning skin FILE`: poses a glTF character at one time of one clip and skins every skinned
//! primitive, then prints a summary or writes JSON, OBJ or a PNG picture.
//!
//! Outputs (chosen by the `--out` extension), all in glTF world space:
//! - `.json`: `{"asset", "clip", "time", "meshes": [{"node", "mesh", "primitive", "positions",
//!   "normals"}]}`, entries sorted by node index then primitive index, `normals` null when absent;
//! - `.obj`: one `o` per primitive with `v`, `vn` (when the primitive has normals) and `f` lines from
//!   the primitive's triangles;
//! - `.png`: a shaded picture, drawn by `commands::render`.

use super::Failure;
use clap::Args;
use ispc_skinning::{Backend, Isa};
#[cfg(feature = "gltf")]
use {
    ispc_skinning::gltf::{Frame, GltfError, GltfScene, Wrap},
    std::fmt::Write as _,
    std::io::Write as _,
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
    after_help = "Outputs, all in glTF world space: PATH.json writes the skinned positions and \
normals, PATH.obj the skinned geometry, PATH.png a shaded 512 x 512 picture; without --out, a summary."
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
    /// Where to write the result: PATH.json, PATH.obj or PATH.png.
    #[arg(long, value_name = "PATH")]
    pub out: Option<String>,
    /// The ISA that runs the kernels: sse4, avx2, avx512 or neon [default: auto].
    #[arg(long, value_name = "NAME", value_parser = parse_isa, conflicts_with = "reference")]
    pub isa: Option<Isa>,
    /// Run the serial Rust reference instead of an ISA.
    #[arg(long)]
    pub reference: bool,
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
    fn load_options(&self) -> ispc_skinning::gltf::LoadOptions {
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

fn parse_isa(v: &str) -> Result<Isa, String> {
    v.parse().map_err(|e| format!("{e}"))
}

impl SkinArgs {
    /// Who runs the kernels: `--isa` (checked to run here), `--reference`, or `Backend::Auto`.
    ///
    /// # Errors
    /// When the ISA given cannot run on this CPU.
    pub fn backend(&self) -> Result<Backend, String> {
        match (self.isa, self.reference) {
            (Some(isa), _) => {
                isa.runnable().map_err(|e| format!("--isa: {e}"))?;
                Ok(Backend::Isa(isa))
            }
            (None, true) => Ok(Backend::Reference),
            (None, false) => Ok(Backend::Auto),
        }
    }
}

/// Runs `skin`: loads the file, poses and skins it, then prints the summary or writes `--out`.
///
/// # Errors
/// A message for a file that cannot be loaded, a clip that is not there, an ISA that cannot run, an
/// unknown output extension or an output that cannot be written; and, in a binary built without the
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
        Failure::input(format!("{}: {e}{flag}", args.file))
    })?;
    let clip = match (&args.clip_name, &args.clip) {
        (Some(name), _) => Some(scene.find_clip(name).ok_or_else(|| {
            let names: Vec<_> = scene
                .clips()
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i}: {}", c.name().unwrap_or("(unnamed)")))
                .collect();
            format!("no clip is named '{name}' (clips: {})", names.join(", "))
        })?),
        (None, Some(ClipChoice::Index(i))) => Some(*i),
        (None, Some(ClipChoice::None)) => None,
        (None, None) => (!scene.clips().is_empty()).then_some(0),
    };
    if let Some(c) = clip.filter(|&c| c >= scene.clips().len()) {
        return Err(Failure::from(format!(
            "--clip {c}: {} has {} clip(s)",
            args.file,
            scene.clips().len()
        )));
    }
    let mut frame = scene.frame_buffers().backend(backend);
    let start = Instant::now();
    // With --blend the JSON's "clip" is null: the pose is the blend, not one clip.
    let clip = if args.blend.is_some() { None } else { clip };
    match &args.blend {
        Some(spec) => super::blend::evaluate(&scene, spec, args.time, backend, &mut frame)?,
        None => scene
            .evaluate(clip, args.time, Wrap::Clamp, &mut frame)
            .map_err(|e| Failure::input(format!("{}: {e}", args.file)))?,
    }
    let elapsed = start.elapsed();
    let asset = Path::new(&args.file)
        .file_name()
        .map_or(args.file.clone(), |n| n.to_string_lossy().into_owned());

    let Some(out) = &args.out else {
        let backend = match backend {
            Backend::Auto => Backend::selected().map_err(|e| e.to_string())?,
            b => b,
        };
        let vertices: usize = scene.primitives().iter().map(|p| p.vertex_count()).sum();
        let triangles: usize = scene.primitives().iter().map(|p| p.triangles().len()).sum();
        println!("asset:     {asset}");
        match clip {
            Some(c) => println!(
                "clip:      {c} ({}), {:.3} s long, sampled at {} s",
                scene.clips()[c].name().unwrap_or("unnamed"),
                scene.clips()[c].duration(),
                args.time
            ),
            None => match &args.blend {
                Some(b) => println!("blend:     {b}, sampled at {} s", args.time),
                None => println!("clip:      none (rest pose)"),
            },
        }
        println!(
            "meshes:    {} skinned primitives, {vertices} vertices, {triangles} triangles, {} skins, {} nodes",
            scene.primitives().len(),
            scene.skins().len(),
            scene.node_count()
        );
        println!("backend:   {}", backend.name());
        println!(
            "time:      {:.3} ms for one frame (sample, local to model, palette, skin; first frame, cold caches)",
            elapsed.as_secs_f64() * 1e3
        );
        return Ok(());
    };
    let ext = Path::new(out)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let over = |written: usize| {
        Failure::input(format!(
            "{}: the output passed --max-output-bytes {} ({written} bytes written when it stopped)",
            args.file, args.limits.max_output_bytes
        ))
    };
    let max = args.limits.max_output_bytes;
    let bytes = match ext.as_deref() {
        Some("json") => json(&scene, &frame, &asset, clip, args.time, max)
            .map_err(over)?
            .into_bytes(),
        Some("obj") => obj(&scene, &frame, &asset, clip, args.time, max)
            .map_err(over)?
            .into_bytes(),
        Some("png") => {
            let work = super::render::work(&scene, &frame, args.limits.max_render_work);
            if work > args.limits.max_render_work {
                return Err(Failure::input(format!(
                    "{}: the picture needs over {work} units of work (triangles and their pixel tests), over --max-render-work {}",
                    args.file, args.limits.max_render_work
                )));
            }
            super::render::png(&scene, &frame)?
        }
        _ => {
            return Err(Failure::from(format!(
                "--out must end in .json, .obj or .png (got '{out}')"
            )))
        }
    };
    std::fs::File::create(out)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| Failure::from(format!("cannot write '{out}': {e}")))
}

/// Text output that stops at a size limit: `check` fails once more than `max` bytes are written, so
/// a file whose skinned output is huge ends in an error instead of filling memory.
#[cfg(feature = "gltf")]
struct Capped {
    s: String,
    max: usize,
}

#[cfg(feature = "gltf")]
impl Capped {
    fn check(&self) -> Result<(), usize> {
        if self.s.len() > self.max {
            Err(self.s.len())
        } else {
            Ok(())
        }
    }
}

/// A JSON number; JSON has no NaN or infinity, so those are written as null.
#[cfg(feature = "gltf")]
fn num(s: &mut String, v: f32) {
    if v.is_finite() {
        // Rust's shortest round-trip form, which is valid JSON (for example 0.1, -2, 1e-7).
        let _ = write!(s, "{v}");
    } else {
        s.push_str("null");
    }
}

#[cfg(feature = "gltf")]
fn vec3s(out: &mut Capped, v: &[glam::Vec3]) -> Result<(), usize> {
    let s = &mut out.s;
    s.push('[');
    for (i, p) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if i % 1024 == 0 && s.len() > out.max {
            return Err(s.len());
        }
        s.push('[');
        num(s, p.x);
        s.push(',');
        num(s, p.y);
        s.push(',');
        num(s, p.z);
        s.push(']');
    }
    s.push(']');
    out.check()
}

#[cfg(feature = "gltf")]
fn json(
    scene: &GltfScene,
    frame: &Frame,
    asset: &str,
    clip: Option<usize>,
    time: f32,
    max: usize,
) -> Result<String, usize> {
    let mut out = Capped {
        s: String::new(),
        max,
    };
    let asset = serde_json::to_string(asset).unwrap_or_else(|_| "\"\"".into());
    let _ = write!(out.s, "{{\"asset\": {asset}, \"clip\": ");
    match clip {
        Some(c) => {
            let _ = write!(out.s, "{c}");
        }
        None => out.s.push_str("null"),
    }
    out.s.push_str(", \"time\": ");
    num(&mut out.s, time);
    out.s.push_str(", \"meshes\": [");
    // The scene's primitives are already sorted by node index, then primitive index.
    for (i, (p, mesh)) in scene.primitives().iter().zip(frame.meshes()).enumerate() {
        if i > 0 {
            out.s.push_str(", ");
        }
        let _ = write!(
            out.s,
            "{{\"node\": {}, \"mesh\": {}, \"primitive\": {}, \"positions\": ",
            p.node(),
            p.mesh(),
            p.primitive()
        );
        vec3s(&mut out, &mesh.positions)?;
        out.s.push_str(", \"normals\": ");
        match &mesh.normals {
            Some(n) => vec3s(&mut out, n)?,
            None => out.s.push_str("null"),
        }
        out.s.push('}');
    }
    out.s.push_str("]}\n");
    out.check()?;
    Ok(out.s)
}

#[cfg(feature = "gltf")]
fn obj(
    scene: &GltfScene,
    frame: &Frame,
    asset: &str,
    clip: Option<usize>,
    time: f32,
    max: usize,
) -> Result<String, usize> {
    let mut out = Capped {
        s: String::new(),
        max,
    };
    let s = &mut out.s;
    let clip = clip.map_or("none (rest pose)".to_string(), |c| c.to_string());
    let _ = writeln!(
        s,
        "# ispc-skinning skin: {asset}, clip {clip}, time {time} s, glTF world space"
    );
    // OBJ indices are 1-based and global across objects.
    let mut base = 1usize;
    for (p, mesh) in scene.primitives().iter().zip(frame.meshes()) {
        let _ = writeln!(
            out.s,
            "o node{}_mesh{}_primitive{}",
            p.node(),
            p.mesh(),
            p.primitive()
        );
        for (i, v) in mesh.positions.iter().enumerate() {
            let _ = writeln!(out.s, "v {} {} {}", v.x, v.y, v.z);
            if i % 1024 == 0 {
                out.check()?;
            }
        }
        if let Some(normals) = &mesh.normals {
            for (i, n) in normals.iter().enumerate() {
                let _ = writeln!(out.s, "vn {} {} {}", n.x, n.y, n.z);
                if i % 1024 == 0 {
                    out.check()?;
                }
            }
        }
        for (i, t) in p.triangles().iter().enumerate() {
            let [a, b, c] = t.map(|i| i as usize + base);
            if mesh.normals.is_some() {
                let _ = writeln!(out.s, "f {a}//{a} {b}//{b} {c}//{c}");
            } else {
                let _ = writeln!(out.s, "f {a} {b} {c}");
            }
            if i % 1024 == 0 {
                out.check()?;
            }
        }
        base += mesh.positions.len();
    }
    out.check()?;
    Ok(out.s)
}
