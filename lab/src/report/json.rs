//! `bench --json PATH`: the rows as a JSON array, one row per line.
//!
//! Each row is an object with exactly the keys `kernel, isa, size, influences, threads, ns_per_item,
//! reference_ns_per_item`, in that order, written as `{"kernel": "transform_points", "isa":
//! "reference", ...}` (a space after each colon and comma, as CI's grep expects). Strings are escaped
//! by serde_json; times have four decimals, and a time that is not finite is `null`.

use crate::report::row::Row;
use std::fmt::Write as _;

/// The JSON text of `rows`, ending with a newline.
pub fn to_json(rows: &[Row]) -> String {
    let mut s = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let influences = r.influences.map_or("null".to_string(), |v| v.to_string());
        let _ = write!(
            s,
            "  {{\"kernel\": {}, \"isa\": {}, \"size\": {}, \"influences\": {}, \"threads\": {}, \"ns_per_item\": {}, \"reference_ns_per_item\": {}}}",
            string(r.kernel),
            string(&r.isa),
            r.size,
            influences,
            r.threads,
            time(r.ns_per_item),
            time(r.reference_ns_per_item)
        );
        s.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    s.push_str("]\n");
    s
}

/// A JSON string literal.
fn string(text: &str) -> String {
    serde_json::to_string(text).expect("a str always serializes")
}

/// A time with four decimals; JSON has no NaN or infinity, so those are `null`.
fn time(ns: f64) -> String {
    if ns.is_finite() {
        format!("{ns:.4}")
    } else {
        "null".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_keys_and_spacing_and_parse() {
        let rows = vec![
            Row {
                kernel: "transform_points",
                isa: "reference".into(),
                size: 128,
                influences: None,
                threads: 1,
                ns_per_item: 1.5,
                reference_ns_per_item: 1.5,
            },
            Row {
                kernel: "skin_p",
                isa: "avx2".into(),
                size: 1024,
                influences: Some(4),
                threads: 2,
                ns_per_item: 0.25,
                reference_ns_per_item: f64::NAN,
            },
        ];
        let text = to_json(&rows);
        assert!(text.contains(r#""kernel": "transform_points", "isa": "reference""#));
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let keys: Vec<&str> = text
            .lines()
            .nth(1)
            .unwrap()
            .split("\": ")
            .map(|k| k.rsplit('"').next().unwrap())
            .collect();
        assert_eq!(
            &keys[..7],
            [
                "kernel",
                "isa",
                "size",
                "influences",
                "threads",
                "ns_per_item",
                "reference_ns_per_item"
            ]
        );
        assert_eq!(v[1]["influences"], 4);
        assert!(v[1]["reference_ns_per_item"].is_null());
        assert!(v[0]["influences"].is_null());
    }
}
