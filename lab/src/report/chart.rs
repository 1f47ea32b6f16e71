//! `bench --plot PATH`: an SVG chart of the report's speedups over the serial reference, drawn with
//! plotters. One group of horizontal bars per kernel (at one representative size, one thread) and one
//! bar per ISA and the glam loop, with the reference's 1x marked.

use crate::report::row::Row;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Kernels shown, each at the size (0 for any) and influence count it is judged at.
const SHOWN: &[(&str, usize, Option<u32>)] = &[
    ("character_frame", 0, Some(4)),
    ("gltf_frame", 0, None),
    ("gltf_frame_by_count", 0, None),
    ("gltf_crowd_frame", 0, None),
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

/// The bars of each group, in order, with their colours.
const COLOURS: &[(&str, RGBColor)] = &[
    ("glam", RGBColor(0x99, 0x99, 0x99)),
    ("sse4", RGBColor(0x4e, 0x79, 0xa7)),
    ("avx2", RGBColor(0xf2, 0x8e, 0x2b)),
    ("avx512", RGBColor(0xe1, 0x57, 0x59)),
    ("neon", RGBColor(0x59, 0xa1, 0x4f)),
];

/// One group of bars: the kernel's label and (bar name, speedup) per bar.
type Group = (String, Vec<(&'static str, f64)>);

/// The groups the chart shows: every shown kernel that has at least one bar among `rows`.
fn groups(rows: &[Row]) -> Vec<Group> {
    let mut groups = Vec::new();
    for &(kernel, size, influences) in SHOWN {
        let bars: Vec<(&'static str, f64)> = COLOURS
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
                    .filter(|(_, v)| v.is_finite())
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
    groups
}

fn chart_error(e: impl std::fmt::Display) -> String {
    format!("cannot draw the chart: {e}")
}

/// The SVG text of the chart. `title` names the machine.
///
/// # Errors
/// When plotters fails to draw, which writing to a string should never do.
pub fn svg(rows: &[Row], title: &str) -> Result<String, String> {
    let groups = groups(rows);
    let slots = groups.len().max(1);
    let max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| b.1))
        .fold(1.0f64, f64::max);
    // Room right of the longest bar for its value label.
    let max = (max * 1.1).ceil();
    let bars_per_group = COLOURS.len() as f64;
    let height = 90 + 16 * (COLOURS.len() as u32 + 1) * slots as u32;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Speedup over the serial Rust reference (one thread), {title}"),
                ("sans-serif", 16),
            )
            .margin(12)
            .margin_left(230)
            .x_label_area_size(36)
            .build_cartesian_2d(0.0..max, 0.0..slots as f64)
            .map_err(chart_error)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(max as usize + 1)
            .x_label_formatter(&|v| format!("{v:.0}x"))
            .x_desc("speedup over the reference (higher is faster)")
            .draw()
            .map_err(chart_error)?;
        // The reference itself: 1x.
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(1.0, 0.0), (1.0, slots as f64)],
                BLACK.stroke_width(2),
            )))
            .map_err(chart_error)?;
        // Group g fills the band [slots - g - 1, slots - g], the first group at the top; bar b of it is
        // one of COLOURS.len() equal slices, leaving a margin above and below the group.
        let band = |g: usize, b: usize| {
            let top = (slots - g) as f64 - 0.1;
            let h = 0.8 / bars_per_group;
            (
                top - h * (b + 1) as f64 + 0.1 * h,
                top - h * b as f64 - 0.1 * h,
            )
        };
        for &(isa, colour) in COLOURS {
            let bars: Vec<(usize, usize, f64)> = groups
                .iter()
                .enumerate()
                .filter_map(|(g, (_, bars))| {
                    let b = bars.iter().position(|(name, _)| *name == isa)?;
                    Some((g, b, bars[b].1))
                })
                .collect();
            if bars.is_empty() {
                continue;
            }
            chart
                .draw_series(bars.iter().map(|&(g, b, v)| {
                    let (y0, y1) = band(g, b);
                    Rectangle::new([(0.0, y0), (v, y1)], colour.filled())
                }))
                .map_err(chart_error)?
                .label(isa)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
            chart
                .draw_series(bars.iter().map(|&(g, b, v)| {
                    let (y0, y1) = band(g, b);
                    EmptyElement::at((v, (y0 + y1) / 2.0))
                        + Text::new(
                            format!("{v:.2}x"),
                            (4, 0),
                            TextStyle::from(("sans-serif", 10).into_font())
                                .pos(Pos::new(HPos::Left, VPos::Center)),
                        )
                }))
                .map_err(chart_error)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(chart_error)?;
        // The kernel names, right-aligned left of the plot, level with their groups.
        let label_style = TextStyle::from(("sans-serif", 13).into_font())
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (g, (label, _)) in groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(0.0, (slots - g) as f64 - 0.5));
            root.draw(&Text::new(label.as_str(), (x - 8, y), label_style.clone()))
                .map_err(chart_error)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &'static str, isa: &str, size: usize, ns: f64) -> Row {
        Row {
            kernel,
            isa: isa.into(),
            size,
            influences: None,
            threads: 1,
            ns_per_item: ns,
            reference_ns_per_item: 2.0,
        }
    }

    #[test]
    fn the_chart_names_every_shown_kernel_and_isa() {
        let rows = vec![
            row("transform_points", "reference", 4096, 2.0),
            row("transform_points", "glam", 4096, 1.0),
            row("transform_points", "avx2", 4096, 0.5),
            row("local_to_model", "sse4", 40_000, 1.0),
            row("not_shown", "avx2", 1, 1.0),
        ];
        let text = svg(&rows, "test cpu").unwrap();
        assert!(text.starts_with("<svg"), "{text}");
        for needle in [
            "transform_points (4096)",
            "local_to_model (40000)",
            "avx2",
            "sse4",
            "glam",
            "4.00x",
            "test cpu",
        ] {
            assert!(text.contains(needle), "{needle} missing");
        }
        assert!(!text.contains("not_shown"));
        // An empty report still draws an (empty) chart.
        assert!(svg(&[], "x").unwrap().contains("</svg>"));
    }
}
