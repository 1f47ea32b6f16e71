//! The text outputs of `skin --out`: JSON and OBJ of every drawn primitive instance of a frame (see
//! [`GltfScene::drawn`](ispc_skinning::gltf::GltfScene::drawn)), in glTF world space, sorted by node
//! then primitive. Both stop at a size limit instead of filling memory.

use ispc_skinning::gltf::DrawnPrimitive;
use std::fmt::Write as _;

/// Text output that stops at a size limit: `check` fails once more than `max` bytes are written, so
/// a file whose output is huge ends in an error instead of filling memory.
struct Capped {
    s: String,
    max: usize,
}

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
fn num(s: &mut String, v: f32) {
    if v.is_finite() {
        // Rust's shortest round-trip form, which is valid JSON (for example 0.1, -2, 1e-7).
        let _ = write!(s, "{v}");
    } else {
        s.push_str("null");
    }
}

/// An array of vectors (each `N` floats) as JSON arrays.
fn vectors<const N: usize>(
    out: &mut Capped,
    v: impl Iterator<Item = [f32; N]>,
) -> Result<(), usize> {
    let s = &mut out.s;
    s.push('[');
    for (i, p) in v.enumerate() {
        if i > 0 {
            s.push(',');
        }
        if i % 1024 == 0 && s.len() > out.max {
            return Err(s.len());
        }
        s.push('[');
        for (k, x) in p.into_iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            num(s, x);
        }
        s.push(']');
    }
    s.push(']');
    out.check()
}

/// `{"asset", "clip", "clips", "time", "meshes": [{"node", "mesh", "primitive", "kind", "positions",
/// "normals", "tangents"?}]}`: `clips` names the clip set (`--clips`) the clip came from, null when it
/// is the file's own; `normals` is null when the primitive has none, `tangents` (x, y, z, w) is there
/// only when it has them. `Err` holds the bytes written when the output passed `max`.
pub fn json(
    drawn: &[DrawnPrimitive<'_>],
    asset: &str,
    clip: Option<usize>,
    clip_set: Option<&str>,
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
    out.s.push_str(", \"clips\": ");
    match clip_set.and_then(|c| serde_json::to_string(c).ok()) {
        Some(c) => out.s.push_str(&c),
        None => out.s.push_str("null"),
    }
    out.s.push_str(", \"time\": ");
    num(&mut out.s, time);
    out.s.push_str(", \"meshes\": [");
    for (i, d) in drawn.iter().enumerate() {
        if i > 0 {
            out.s.push_str(", ");
        }
        let _ = write!(
            out.s,
            "{{\"node\": {}, \"mesh\": {}, \"primitive\": {}, \"kind\": \"{}\", \"positions\": ",
            d.node,
            d.mesh,
            d.primitive,
            d.kind.name()
        );
        let v = d.vertices;
        vectors(&mut out, v.positions.iter().map(|p| p.to_array()))?;
        out.s.push_str(", \"normals\": ");
        match &v.normals {
            Some(n) => vectors(&mut out, n.iter().map(|p| p.to_array()))?,
            None => out.s.push_str("null"),
        }
        if let Some(t) = &v.tangents {
            out.s.push_str(", \"tangents\": ");
            vectors(&mut out, t.iter().map(|p| p.to_array()))?;
        }
        out.s.push('}');
    }
    out.s.push_str("]}\n");
    out.check()?;
    Ok(out.s)
}

/// One `o` per primitive with `v`, `vn` (when it has normals) and `f` lines; `Err` as for [`json`].
pub fn obj(
    drawn: &[DrawnPrimitive<'_>],
    asset: &str,
    clip: Option<usize>,
    time: f32,
    max: usize,
) -> Result<String, usize> {
    let mut out = Capped {
        s: String::new(),
        max,
    };
    let clip = clip.map_or("none (rest pose)".to_string(), |c| c.to_string());
    let _ = writeln!(
        out.s,
        "# ispc-skinning skin: {}, clip {clip}, time {time} s, glTF world space",
        // A line break in the name would end the comment.
        ispc_skinning::Escaped(asset)
    );
    // OBJ indices are 1-based and global across objects.
    let mut base = 1usize;
    for d in drawn {
        let _ = writeln!(
            out.s,
            "o node{}_mesh{}_primitive{}",
            d.node, d.mesh, d.primitive
        );
        let mesh = d.vertices;
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
        for (i, t) in d.triangles.iter().enumerate() {
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
