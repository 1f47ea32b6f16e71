//! The picture: a small software rasterizer.
//!
//! Camera: orthographic, turned by an azimuth and an elevation ([`Camera`]). At azimuth 0 and elevation
//! 0 (the default) it looks down -Z with +Y up and +X to the right (glTF world space seen from the
//! front), so screen x = world x and screen y = world y. Azimuth turns the camera around the +Y axis
//! (90 degrees looks from +X towards -X), elevation raises it above the horizontal plane (90 degrees
//! looks straight down). The view is fitted to the bounding box, in view space, of every drawn
//! primitive (skinned, rigid and static): the larger of its x and y extents fills 90% of the 512 x 512
//! image (a 5% margin on each side), centred. Each triangle is flat shaded, Lambert with a fixed directional light from
//! (0.4, 0.6, 1.0) in view space (upper right, towards the viewer) taken two-sided, plus 20% ambient, over a dark
//! background; a z-buffer keeps the nearest surface (largest z).
//!
//! While it draws, a progress bar counts pixel tests on a terminal ([`crate::progress`]); [`work`] gives
//! their number beforehand, which the skin command holds to a budget.

use indicatif::ProgressBar;
use ispc_skinning::gltf::DrawnPrimitive;

/// Image width and height in pixels.
pub const SIZE: usize = 512;
/// Background colour.
pub const BACKGROUND: [u8; 3] = [24, 26, 32];
const BASE: [f32; 3] = [222.0, 196.0, 160.0];

/// Where the camera looks from, in degrees (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Camera {
    /// Turn around +Y; 0 looks down -Z, 90 looks from +X.
    pub azimuth: f32,
    /// Height above the horizontal plane; 90 looks straight down.
    pub elevation: f32,
}

impl Camera {
    /// World to view: view x right, y up, z towards the camera.
    fn rotation(self) -> glam::Quat {
        glam::Quat::from_rotation_x(self.elevation.to_radians())
            * glam::Quat::from_rotation_y(-self.azimuth.to_radians())
    }
}

/// The view fitted to the bounding box of every drawn vertex (see the module docs), or `None` when no
/// vertex is finite and there is nothing to draw.
struct View {
    rotation: glam::Quat,
    centre: glam::Vec3,
    scale: f32,
}

impl View {
    fn fit(drawn: &[DrawnPrimitive<'_>], camera: Camera) -> Option<View> {
        let rotation = camera.rotation();
        let all = drawn
            .iter()
            .flat_map(|d| &d.vertices.positions)
            .map(|p| rotation * *p)
            .filter(|p| p.is_finite());
        let (lo, hi) = all.fold(
            (
                glam::Vec3::splat(f32::INFINITY),
                glam::Vec3::splat(f32::NEG_INFINITY),
            ),
            |(lo, hi), p| (lo.min(p), hi.max(p)),
        );
        // No finite vertex at all leaves the bounds inverted.
        if lo.x > hi.x {
            return None;
        }
        let extent = (hi.x - lo.x).max(hi.y - lo.y);
        let scale = if extent > 0.0 {
            0.9 * SIZE as f32 / extent
        } else {
            1.0
        };
        Some(View {
            rotation,
            centre: (lo + hi) * 0.5,
            scale,
        })
    }

    /// Screen position (x right, y down, in pixels) and view depth (larger is nearer).
    fn project(&self, v: glam::Vec3) -> glam::Vec3 {
        let v = self.rotation * v;
        let half = SIZE as f32 * 0.5;
        glam::Vec3::new(
            half + (v.x - self.centre.x) * self.scale,
            half - (v.y - self.centre.y) * self.scale,
            v.z,
        )
    }
}

/// The pixels a triangle's screen bounding box covers, clamped to the image: what `fill` tests.
fn box_pixels(a: glam::Vec3, b: glam::Vec3, c: glam::Vec3) -> u64 {
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return 0;
    }
    let clampi = |v: f32| v.clamp(0.0, SIZE as f32 - 1.0) as u64;
    let (x0, x1) = (clampi(a.x.min(b.x).min(c.x)), clampi(a.x.max(b.x).max(c.x)));
    let (y0, y1) = (clampi(a.y.min(b.y).min(c.y)), clampi(a.y.max(b.y).max(c.y)));
    (x1 - x0 + 1) * (y1 - y0 + 1)
}

/// The render's work: one unit per triangle of every primitive instance, plus its pixel tests. A
/// hostile file can instance huge (or very many) triangles many times; the skin command refuses a
/// picture over its budget before drawing anything. Counting stops as soon as the total passes
/// `budget`, and the triangle count alone is compared first, so refusing costs no more than the budget.
pub fn work(drawn: &[DrawnPrimitive<'_>], camera: Camera, budget: u64) -> u64 {
    let triangles: u64 = drawn
        .iter()
        .map(|d| d.triangles.len() as u64)
        .fold(0, u64::saturating_add);
    let Some(view) = View::fit(drawn, camera) else {
        return triangles;
    };
    if triangles > budget {
        return triangles;
    }
    let mut total = triangles;
    for d in drawn {
        for t in d.triangles {
            let [a, b, c] = t.map(|i| view.project(d.vertices.positions[i as usize]));
            total = total.saturating_add(box_pixels(a, b, c));
            if total > budget {
                return total;
            }
        }
    }
    total
}

/// RGB pixels, row after row from the top. `progress` advances by each triangle's pixel tests, so a
/// long render shows how far it is.
pub fn rgb(drawn: &[DrawnPrimitive<'_>], camera: Camera, progress: &ProgressBar) -> Vec<u8> {
    let mut pixels: Vec<u8> = BACKGROUND.repeat(SIZE * SIZE);
    let mut depth = vec![f32::NEG_INFINITY; SIZE * SIZE];
    let Some(view) = View::fit(drawn, camera) else {
        return pixels;
    };
    // The light is fixed to the camera: from the upper right, towards the viewer.
    let light = view.rotation.inverse() * glam::Vec3::new(0.4, 0.6, 1.0).normalize();
    for d in drawn {
        for t in d.triangles {
            let world = t.map(|i| d.vertices.positions[i as usize]);
            let n = (world[1] - world[0]).cross(world[2] - world[0]);
            let shade = 0.2 + 0.8 * n.normalize_or_zero().dot(light).abs();
            let colour = BASE.map(|c| (c * shade).clamp(0.0, 255.0) as u8);
            let [a, b, c] = world.map(|v| view.project(v));
            fill(&mut pixels, &mut depth, a, b, c, colour);
            progress.inc(1 + box_pixels(a, b, c));
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
pub fn png(drawn: &[DrawnPrimitive<'_>], camera: Camera) -> Result<Vec<u8>, String> {
    let progress = crate::progress::bar(work(drawn, camera, u64::MAX));
    progress.set_message("rendering");
    let pixels = rgb(drawn, camera, &progress);
    progress.finish_and_clear();
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
