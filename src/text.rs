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

/// A string that came from a file (a node, mesh, skin or animation name, an extension name, a URI, a
/// parser's message quoting the file), shown with its control characters escaped, so that the file
/// cannot move the cursor, recolour, retitle or erase a terminal that prints it.
///
/// Each control character (`char::is_control`: U+0000 to U+001F, U+007F and U+0080 to U+009F, the C1
/// set that holds the 8-bit CSI) is written as [`char::escape_default`] writes it (`\t`, `\n`, `\r`,
/// `\u{1b}`, `\u{9b}`, ...); every other character, backslashes and non-ASCII letters included, is
/// written as it is, so ordinary names stay readable. Every error message of this crate that holds a
/// string from a file writes it through `Escaped`, and so does the `ispc-skinning` command for the
/// names it prints.
///
/// ```
/// use ispc_skinning::Escaped;
/// assert_eq!(Escaped("Bone\u{1b}]0;owned\u{7}").to_string(), "Bone\\u{1b}]0;owned\\u{7}");
/// assert_eq!(Escaped("Épaule_gauche 肩").to_string(), "Épaule_gauche 肩");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        let mut rest = self.0;
        // Runs of ordinary characters are written whole; only the control characters are split out.
        while let Some(at) = rest.find(char::is_control) {
            f.write_str(&rest[..at])?;
            let mut chars = rest[at..].chars();
            if let Some(c) = chars.next() {
                for e in c.escape_default() {
                    f.write_char(e)?;
                }
            }
            rest = chars.as_str();
        }
        f.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::Escaped;

    #[test]
    fn control_characters_are_escaped_and_nothing_else() {
        let hostile = "a\u{1b}[2J\u{1b}]0;title\u{7}b\r\n\t\u{0}\u{7f}\u{9b}31m";
        let shown = Escaped(hostile).to_string();
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(
            shown,
            "a\\u{1b}[2J\\u{1b}]0;title\\u{7}b\\r\\n\\t\\u{0}\\u{7f}\\u{9b}31m"
        );
        for plain in [
            "",
            "Armature|Walk",
            "C:\\models\\fox.glb",
            "Épaule 肩 🦊",
            "%2E%2E",
        ] {
            assert_eq!(Escaped(plain).to_string(), plain);
        }
        // Escaping what is already escaped changes nothing: the output holds no control character.
        assert_eq!(Escaped(&shown).to_string(), shown);
    }
}
