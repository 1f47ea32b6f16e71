//! Wording shared by the error messages: counts with the right plural.

use std::fmt;

/// `n` followed by `noun`, plural unless `n` is 1: `Count(1, "joint")` shows as "1 joint",
/// `Count(3, "joint")` as "3 joints".
pub(crate) struct Count(pub(crate) usize, pub(crate) &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Count(n, noun) = *self;
        write!(f, "{n} {noun}{}", if n == 1 { "" } else { "s" })
    }
}
