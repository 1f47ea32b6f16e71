//! `ispc-skinning skin FILE`: poses a glTF character at one time of one clip and skins every skinned
//! primitive, then prints a summary or writes JSON, OBJ or a PNG picture.
//!
//! Outputs (chosen by the `--out` extension), all in glTF world space:
//! - `.json`: `{"asset", "clip", "time", "meshes": [{"node", "mesh", "primitive", "positions",
//!   "normals"}]}`, entries sorted by node index then primitive index, `normals` null when absent;
//! - `.obj`: one `o` per primitive with `v`, `vn` (when the primitive has normals) and `f` lines from
//!   the primitive's triangles;
//! - `.png`: see [`render`].

use ispc_skinning::gltf::{GltfScene, Wrap};
use ispc_skinning::{Backend, Isa};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

/// Which clip to sample.
enum ClipChoice {
    Default,
    Index(usize),
    Name(String),
    None,
}

struct Args {
    file: String,
    clip: ClipChoice,
    time: f32,
    out: Option<String>,
    backend: Backend,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut file = None;
    let mut clip = ClipChoice::Default;
    let mut time = 0.0f32;
    let mut out = None;
    let mut isa: Option<Isa> = None;
    let mut reference = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--clip" => {
                let v = value("--clip")?;
                clip =
                    if v == "none" {
                        ClipChoice::None
                    } else {
                        ClipChoice::Index(v.parse().map_err(|_| {
                            format!("--clip takes a clip index or 'none', not '{v}'")
                        })?)
                    };
            }
            "--clip-name" => clip = ClipChoice::Name(value("--clip-name")?),
            "--time" => {
                let v = value("--time")?;
                time = v
                    .parse()
                    .ok()
                    .filter(|t: &f32| t.is_finite())
                    .ok_or_else(|| format!("--time takes a finite number of seconds, not '{v}'"))?;
            }
            "--out" => out = Some(value("--out")?),
            "--isa" => {
                let v = value("--isa")?;
                isa = Some(v.parse().map_err(|e| format!("--isa: {e}"))?);
            }
            "--reference" => reference = true,
            other if other.starts_with("--") => {
                return Err(format!("skin: unknown option '{other}'"))
            }
            other if file.is_none() => file = Some(other.to_string()),
            other => return Err(format!("skin takes one file (got a second: '{other}')")),
        }
    }
    let backend = match (isa, reference) {
        (Some(_), true) => return Err("--isa and --reference exclude each other".into()),
        (Some(isa), false) => {
            isa.runnable().map_err(|e| format!("--isa: {e}"))?;
            Backend::Isa(isa)
        }
        (None, true) => Backend::Reference,
        (None, false) => Backend::Auto,
    };
    Ok(Args {
        file: file.ok_or("skin needs a .gltf or .glb file")?,
        clip,
        time,
        out,
        backend,
    })
}

pub fn main(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let scene = GltfScene::load(&args.file).map_err(|e| format!("{}: {e}", args.file))?;
    let clip = match &args.clip {
        ClipChoice::Default => (!scene.clips().is_empty()).then_some(0),
        ClipChoice::None => None,
        ClipChoice::Index(i) => Some(*i),
        ClipChoice::Name(name) => Some(scene.find_clip(name).ok_or_else(|| {
            let names: Vec<_> = scene
                .clips()
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i}: {}", c.name().unwrap_or("(unnamed)")))
                .collect();
            format!("no clip is named '{name}' (clips: {})", names.join(", "))
        })?),
    };
    let mut frame = scene.frame_buffers();
    let start = Instant::now();
    scene
        .evaluate(clip, args.time, Wrap::Clamp, args.backend, &mut frame)
        .map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    let asset = Path::new(&args.file)
        .file_name()
        .map_or(args.file.clone(), |n| n.to_string_lossy().into_owned());

    let Some(out) = &args.out else {
        let backend = match args.backend {
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
        Some("png") => render::png(&scene, &frame)?,
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
fn num(s: &mut String, v: f32) {
    if v.is_finite() {
        // Rust's shortest round-trip form, which is valid JSON (for example 0.1, -2, 1e-7).
        let _ = write!(s, "{v}");
    } else {
        s.push_str("null");
    }
}

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

fn json(
    scene: &GltfScene,
    frame: &ispc_skinning::gltf::Frame,
    asset: &str,
    clip: Option<usize>,
    time: f32,
) -> String {
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
    for (i, (p, out)) in scene.primitives().iter().zip(&frame.meshes).enumerate() {
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

fn obj(
    scene: &GltfScene,
    frame: &ispc_skinning::gltf::Frame,
    asset: &str,
    clip: Option<usize>,
    time: f32,
) -> String {
    let mut s = String::new();
    let clip = clip.map_or("none (rest pose)".to_string(), |c| c.to_string());
    let _ = writeln!(
        s,
        "# ispc-skinning skin: {asset}, clip {clip}, time {time} s, glTF world space"
    );
    // OBJ indices are 1-based and global across objects.
    let mut base = 1usize;
    for (p, out) in scene.primitives().iter().zip(&frame.meshes) {
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

/// The picture: a small software rasterizer.
///
/// Camera: orthographic, looking down -Z with +Y up and +X to the right (glTF world space seen from the
/// front), so screen x = world x and screen y = world y. The view is fitted to the skinned bounding box
/// of every primitive: the larger of its x and y extents fills 90% of the 512 x 512 image (a 5% margin on
/// each side), centred. Each triangle is flat shaded, Lambert with a fixed directional light from
/// (0.4, 0.6, 1.0) (upper right, towards the viewer) taken two-sided, plus 20% ambient, over a dark
/// background; a z-buffer keeps the nearest surface (largest z).
pub mod render {
    use ispc_skinning::gltf::{Frame, GltfScene};

    /// Image width and height in pixels.
    pub const SIZE: usize = 512;
    /// Background colour.
    pub const BACKGROUND: [u8; 3] = [24, 26, 32];
    const BASE: [f32; 3] = [222.0, 196.0, 160.0];

    /// RGB pixels, row after row from the top.
    pub fn rgb(scene: &GltfScene, frame: &Frame) -> Vec<u8> {
        let mut pixels: Vec<u8> = BACKGROUND.repeat(SIZE * SIZE);
        let mut depth = vec![f32::NEG_INFINITY; SIZE * SIZE];
        let all = frame
            .meshes
            .iter()
            .flat_map(|m| &m.positions)
            .filter(|p| p.is_finite());
        let (lo, hi) = all.fold(
            (
                glam::Vec3::splat(f32::INFINITY),
                glam::Vec3::splat(f32::NEG_INFINITY),
            ),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        // No finite vertex at all leaves the bounds inverted: nothing to draw.
        if lo.x > hi.x {
            return pixels;
        }
        let extent = (hi.x - lo.x).max(hi.y - lo.y);
        let scale = if extent > 0.0 {
            0.9 * SIZE as f32 / extent
        } else {
            1.0
        };
        let centre = (lo + hi) * 0.5;
        let half = SIZE as f32 * 0.5;
        let light = glam::Vec3::new(0.4, 0.6, 1.0).normalize();
        for (p, out) in scene.primitives().iter().zip(&frame.meshes) {
            let project = |i: u32| {
                let v = out.positions[i as usize];
                glam::Vec3::new(
                    half + (v.x - centre.x) * scale,
                    half - (v.y - centre.y) * scale,
                    v.z,
                )
            };
            for t in p.triangles() {
                let world = t.map(|i| out.positions[i as usize]);
                let n = (world[1] - world[0]).cross(world[2] - world[0]);
                let shade = 0.2 + 0.8 * n.normalize_or_zero().dot(light).abs();
                let colour = BASE.map(|c| (c * shade).clamp(0.0, 255.0) as u8);
                let [a, b, c] = t.map(project);
                fill(&mut pixels, &mut depth, a, b, c, colour);
            }
        }
        pixels
    }

    /// Twice the signed area of (a, b, p) in screen space.
    fn edge(a: glam::Vec3, b: glam::Vec3, px: f32, py: f32) -> f32 {
        (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)
    }

    /// Fills one triangle at pixel centres, either winding, testing and writing depth.
    fn fill(
        pixels: &mut [u8],
        depth: &mut [f32],
        a: glam::Vec3,
        b: glam::Vec3,
        c: glam::Vec3,
        colour: [u8; 3],
    ) {
        let area = edge(a, b, c.x, c.y);
        // Degenerate (edge-on) triangles cover no pixel centre; non-finite ones cannot be placed.
        let placeable = a.is_finite() && b.is_finite() && c.is_finite();
        if !placeable || area.abs() <= 1e-12 {
            return;
        }
        let clampi = |v: f32| v.clamp(0.0, SIZE as f32 - 1.0) as usize;
        let (x0, x1) = (clampi(a.x.min(b.x).min(c.x)), clampi(a.x.max(b.x).max(c.x)));
        let (y0, y1) = (clampi(a.y.min(b.y).min(c.y)), clampi(a.y.max(b.y).max(c.y)));
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let (w0, w1, w2) = (
                    edge(b, c, px, py) / area,
                    edge(c, a, px, py) / area,
                    edge(a, b, px, py) / area,
                );
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = w0 * a.z + w1 * b.z + w2 * c.z;
                let i = y * SIZE + x;
                if z > depth[i] {
                    depth[i] = z;
                    pixels[3 * i..3 * i + 3].copy_from_slice(&colour);
                }
            }
        }
    }

    /// The picture as PNG bytes.
    pub fn png(scene: &GltfScene, frame: &Frame) -> Result<Vec<u8>, String> {
        let pixels = rgb(scene, frame);
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, SIZE as u32, SIZE as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| format!("png: {e}"))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| format!("png: {e}"))?;
        writer.finish().map_err(|e| format!("png: {e}"))?;
        Ok(bytes)
    }
}
