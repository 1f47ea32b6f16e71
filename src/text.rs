//! Wording shared by the error messages: counts with the right plural.

use std::fmt;

/// `n` followed by `noun`, plural unless `n` is 1: `Count(1, "joint")` shows as "1 joint",
/// `Count(3, "joint")` as "3 joints", `Count(2, "mesh")` as "2 meshes", `Count(0, "vertex")` as
/// "0 vertices", `Count(2, "palette entry")` as "2 palette entries".
pub(crate) struct Count(pub(crate) usize, pub(crate) &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Count(n, noun) = *self;
        if n == 1 {
            write!(f, "{n} {noun}")
        } else if let Some(stem) = noun.strip_suffix("ex") {
            write!(f, "{n} {stem}ices")
        } else if let Some(stem) = noun
            .strip_suffix('y')
            .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
        {
            write!(f, "{n} {stem}ies")
        } else if ["s", "x", "sh", "ch"].iter().any(|end| noun.ends_with(end)) {
            write!(f, "{n} {noun}es")
        } else {
            write!(f, "{n} {noun}s")
        }
    }
}
