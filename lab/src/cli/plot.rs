//! `bench --plot PATH`: an SVG bar chart of the report's speedups over the serial reference, one group
//! of bars per kernel (at one representative size, one thread) and one bar per ISA and the glam loop.
//! Written by hand: an SVG is a few rectangles and labels, not worth a plotting dependency.

use super::bench::Row;
use std::fmt::Write as _;

/// Kernels shown, each at the size (and influence count) it is judged at.
const SHOWN: &[(&str, usize, Option<u32>)] = &[
    ("character_frame", 0, Some(4)),
    ("gltf_frame", 0, None),
    ("transform_points", 4096, None),
    ("local_to_model", 40_000, None),
    ("local_to_model_trs", 120, None),
    ("crowd_local_to_model", 0, None),
    ("skin_p", 1024, Some(4)),
    ("skin_pn", 1024, Some(4)),
    ("skin_pnt", 1024, Some(4)),
    ("skin_rigid", 1024, Some(1)),
    ("skin_p_base", 1024, Some(4)),
    ("skin_p_bone_major", 1024, Some(4)),
    ("davies_cylinders", 0, Some(2)),
];

const COLOURS: &[(&str, &str)] = &[
    ("glam", "#999999"),
    ("sse4", "#4e79a7"),
    ("avx2", "#f28e2b"),
    ("avx512", "#e15759"),
    ("neon", "#59a14f"),
];

/// The SVG text of the chart. `title` names the machine.
pub fn svg(rows: &[Row], title: &str) -> String {
    // Per shown kernel: (label, [(isa, speedup)]).
    let mut groups: Vec<(String, Vec<(&str, f64)>)> = Vec::new();
    for &(kernel, size, influences) in SHOWN {
        let bars: Vec<(&str, f64)> = COLOURS
            .iter()
            .filter_map(|&(isa, _)| {
                rows.iter()
                    .find(|r| {
                        r.kernel == kernel
                            && r.isa == isa
                            && r.threads == 1
                            && (size == 0 || r.size == size)
                            && (influences.is_none() || r.influences == influences)
                    })
                    .map(|r| (isa, r.speedup()))
            })
            .collect();
        if !bars.is_empty() {
            let label = if size == 0 {
                kernel.to_string()
            } else {
                format!("{kernel} ({size})")
            };
            groups.push((label, bars));
        }
    }
    let max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| b.1))
        .fold(1.0f64, f64::max)
        .ceil();
    let (left, top, plot_h, group_w, bar_w) = (60.0, 50.0, 300.0, 84.0, 14.0);
    let width = left + group_w * groups.len() as f64 + 140.0;
    let height = top + plot_h + 150.0;
    let y = |v: f64| top + plot_h * (1.0 - v / max);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="24" font-size="15">Speedup over the serial Rust reference (one thread), {}</text>"#,
        escape(title)
    );
    // Horizontal grid lines at every whole speedup, the reference (1x) darker.
    for t in 0..=max as usize {
        let yy = y(t as f64);
        let colour = if t == 1 { "#333333" } else { "#dddddd" };
        let _ = writeln!(
            s,
            r#"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="{colour}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{t}x</text>"#,
            width - 140.0,
            left - 6.0,
            yy + 4.0
        );
    }
    for (g, (label, bars)) in groups.iter().enumerate() {
        let x0 = left + group_w * g as f64 + (group_w - bar_w * bars.len() as f64) / 2.0;
        for (b, (isa, v)) in bars.iter().enumerate() {
            let colour = COLOURS.iter().find(|c| c.0 == *isa).map_or("#000", |c| c.1);
            let (x, yy) = (x0 + bar_w * b as f64, y(*v));
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{label} {isa}: {v:.2}x</title></rect>"#,
                bar_w - 2.0,
                top + plot_h - yy
            );
        }
        let cx = left + group_w * (g as f64 + 0.5);
        let cy = top + plot_h + 12.0;
        let _ = writeln!(
            s,
            r#"<text x="{cx:.1}" y="{cy:.1}" transform="rotate(40 {cx:.1} {cy:.1})">{}</text>"#,
            escape(label)
        );
    }
    for (i, (isa, colour)) in COLOURS.iter().enumerate() {
        let (x, yy) = (width - 120.0, top + 20.0 * i as f64);
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{yy:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{:.1}">{isa}</text>"#,
            x + 18.0,
            yy + 11.0
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
