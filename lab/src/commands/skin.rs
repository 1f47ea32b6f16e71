//! `ispc-skinning skin FILE`: poses a glTF character at one time of one clip and skins every skinned
//! primitive, then prints a summary or writes JSON, OBJ or a PNG picture.
//!
//! Outputs (chosen by the `--out` extension), all in glTF world space:
//! - `.json`: `{"asset", "clip", "time", "meshes": [{"node", "mesh", "primitive", "positions",
//!   "normals"}]}`, entries sorted by node index then primitive index, `normals` null when absent;
//! - `.obj`: one `o` per primitive with `v`, `vn` (when the primitive has normals) and `f` lines from
//!   the primitive's triangles;
//! - `.png`: a shaded picture, drawn by `commands::render`.

use clap::Args;
use ispc_skinning::{Backend, Isa};
#[cfg(feature = "gltf")]
use {
    ispc_skinning::gltf::{Frame, GltfScene, Wrap},
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
    /// Where to write the result: PATH.json, PATH.obj or PATH.png.
    #[arg(long, value_name = "PATH")]
    pub out: Option<String>,
    /// The ISA that runs the kernels: sse4, avx2, avx512 or neon [default: auto].
    #[arg(long, value_name = "NAME", value_parser = parse_isa, conflicts_with = "reference")]
    pub isa: Option<Isa>,
    /// Run the serial Rust reference instead of an ISA.
    #[arg(long)]
    pub reference: bool,
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
pub fn run(args: &SkinArgs) -> Result<(), String> {
    #[cfg(feature = "gltf")]
    return skin(args);
    #[cfg(not(feature = "gltf"))]
    {
        let _ = args;
        Err("this binary was built without the 'gltf' cargo feature, which 'skin' needs".into())
    }
}

#[cfg(feature = "gltf")]
fn skin(args: &SkinArgs) -> Result<(), String> {
    let backend = args.backend()?;
    let scene = GltfScene::load(&args.file).map_err(|e| format!("{}: {e}", args.file))?;
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
    let mut frame = scene.frame_buffers().backend(backend);
    let start = Instant::now();
    scene
        .evaluate(clip, args.time, Wrap::Clamp, &mut frame)
        .map_err(|e| e.to_string())?;
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
            None => println!("clip:      none (rest pose)"),
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
    let bytes = match ext.as_deref() {
        Some("json") => json(&scene, &frame, &asset, clip, args.time).into_bytes(),
        Some("obj") => obj(&scene, &frame, &asset, clip, args.time).into_bytes(),
        Some("png") => super::render::png(&scene, &frame)?,
        _ => {
            return Err(format!(
                "--out must end in .json, .obj or .png (got '{out}')"
            ))
        }
    };
    std::fs::File::create(out)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| format!("cannot write '{out}': {e}"))
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
fn vec3s(s: &mut String, v: &[glam::Vec3]) {
    s.push('[');
    for (i, p) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
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
}

#[cfg(feature = "gltf")]
fn json(scene: &GltfScene, frame: &Frame, asset: &str, clip: Option<usize>, time: f32) -> String {
    let mut s = String::new();
    let asset = serde_json::to_string(asset).unwrap_or_else(|_| "\"\"".into());
    let _ = write!(s, "{{\"asset\": {asset}, \"clip\": ");
    match clip {
        Some(c) => {
            let _ = write!(s, "{c}");
        }
        None => s.push_str("null"),
    }
    s.push_str(", \"time\": ");
    num(&mut s, time);
    s.push_str(", \"meshes\": [");
    // The scene's primitives are already sorted by node index, then primitive index.
    for (i, (p, out)) in scene.primitives().iter().zip(frame.meshes()).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(
            s,
            "{{\"node\": {}, \"mesh\": {}, \"primitive\": {}, \"positions\": ",
            p.node(),
            p.mesh(),
            p.primitive()
        );
        vec3s(&mut s, &out.positions);
        s.push_str(", \"normals\": ");
        match &out.normals {
            Some(n) => vec3s(&mut s, n),
            None => s.push_str("null"),
        }
        s.push('}');
    }
    s.push_str("]}\n");
    s
}

#[cfg(feature = "gltf")]
fn obj(scene: &GltfScene, frame: &Frame, asset: &str, clip: Option<usize>, time: f32) -> String {
    let mut s = String::new();
    let clip = clip.map_or("none (rest pose)".to_string(), |c| c.to_string());
    let _ = writeln!(
        s,
        "# ispc-skinning skin: {asset}, clip {clip}, time {time} s, glTF world space"
    );
    // OBJ indices are 1-based and global across objects.
    let mut base = 1usize;
    for (p, out) in scene.primitives().iter().zip(frame.meshes()) {
        let _ = writeln!(
            s,
            "o node{}_mesh{}_primitive{}",
            p.node(),
            p.mesh(),
            p.primitive()
        );
        for v in &out.positions {
            let _ = writeln!(s, "v {} {} {}", v.x, v.y, v.z);
        }
        if let Some(normals) = &out.normals {
            for n in normals {
                let _ = writeln!(s, "vn {} {} {}", n.x, n.y, n.z);
            }
        }
        for t in p.triangles() {
            let [a, b, c] = t.map(|i| i as usize + base);
            if out.normals.is_some() {
                let _ = writeln!(s, "f {a}//{a} {b}//{b} {c}//{c}");
            } else {
                let _ = writeln!(s, "f {a} {b} {c}");
            }
        }
        base += out.positions.len();
    }
    s
}
