//! Strings that come from a file (paths, names, messages, extension names) reach an error's message
//! with their control characters escaped, so that a hostile file cannot send terminal escapes through
//! the crate's errors (issue 31). The CLI's own printing is tested in lab/tests/files_cli.rs.
#![cfg(feature = "gltf")]

use ispc_skinning::gltf::GltfError;
use ispc_skinning::Error;

/// Every string a file can put in an error reaches the message with its control characters escaped.
#[test]
fn strings_from_the_file_are_shown_escaped() {
    let hostile = || "x\u{1b}]0;pwned\u{7}\u{1b}[2K\u{9b}1m".to_string();
    let errors: Vec<GltfError> = vec![
        GltfError::Io {
            path: hostile(),
            message: hostile(),
        },
        GltfError::Parse { message: hostile() },
        GltfError::Json {
            path: hostile(),
            reason: "r",
        },
        GltfError::UnsupportedExtension { name: hostile() },
        GltfError::Buffer {
            buffer: 0,
            reason: hostile(),
        },
        GltfError::AccessorFormat {
            accessor: 0,
            usage: "u",
            found: hostile(),
        },
        GltfError::MissingAttribute {
            mesh: 0,
            primitive: 0,
            attribute: hostile(),
        },
        GltfError::InverseBindMatrices {
            skin: 0,
            reason: hostile(),
        },
    ];
    for e in errors {
        let shown = Error::Gltf(e).to_string();
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(
            shown.contains("x\\u{1b}]0;pwned\\u{7}\\u{1b}[2K\\u{9b}1m"),
            "{shown}"
        );
    }
    let isa = Error::UnknownIsaName(hostile()).to_string();
    assert!(!isa.chars().any(char::is_control), "{isa:?}");
}
