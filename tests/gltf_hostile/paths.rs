//! Class 2: an external buffer URI never makes the importer read outside the directory of the .gltf:
//! `..` written out or percent-encoded, either separator, absolute paths, schemes, drive letters and
//! symbolic links are refused with [`GltfError::Buffer`]. Each case puts a file that would load (the
//! rig's own buffer, followed by a marker) where the URI leads, so only the path rule can refuse it.

use super::*;

const OUTSIDE: &str = "an external buffer path must stay inside the directory of the .gltf file";
const SCHEME: &str = "only data URIs and relative file paths are supported";
const MARKER: &[u8] = b"SECRET-MARKER-7f3a";

/// `root/secret.bin` (the rig's buffer and the marker) beside `root/asset/`, which holds
/// `model.gltf` once [`Layout::write`] is called, and an empty `root/asset/sub/`.
struct Layout {
    scratch: Scratch,
    builder: Builder,
    doc: Value,
}

impl Layout {
    fn new(test: &str) -> Layout {
        let scratch = Scratch::new(test);
        let mut builder = Builder::default();
        let doc = rig(&mut builder);
        let doc = builder.document(doc);
        let mut secret = builder.bin.clone();
        secret.extend_from_slice(MARKER);
        std::fs::write(scratch.path().join("secret.bin"), &secret).unwrap();
        std::fs::create_dir_all(scratch.path().join("asset/sub")).unwrap();
        Layout {
            scratch,
            builder,
            doc,
        }
    }

    fn root(&self) -> &Path {
        self.scratch.path()
    }

    fn asset(&self) -> PathBuf {
        self.root().join("asset")
    }

    /// Writes `asset/model.gltf` with one buffer at `uri` and returns its path.
    fn write(&self, uri: &str) -> PathBuf {
        let mut doc = self.doc.clone();
        doc["buffers"] = json!([{"byteLength": self.builder.bin.len(), "uri": uri}]);
        let path = self.asset().join("model.gltf");
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        path
    }

    /// Writes the rig's buffer at `asset/<relative>`.
    fn data(&self, relative: &str) {
        let path = self.asset().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &self.builder.bin).unwrap();
    }
}

/// Loads `uri` and asserts `Buffer { buffer: 0, reason }` with its message, and that nothing of the
/// secret is in the error.
fn refused(layout: &Layout, uri: &str, reason: &str) -> Result<(), String> {
    let path = layout.write(uri);
    let result = std::panic::catch_unwind(|| GltfScene::load(&path))
        .map_err(|_| format!("{uri:?}: PANICKED"))?;
    let want = Error::Gltf(GltfError::Buffer {
        buffer: 0,
        reason: reason.to_string(),
    });
    match result {
        Ok(_) => Err(format!("{uri:?}: LOADED (read a file it must not)")),
        Err(e) if e != want => Err(format!("{uri:?}: got {e:?}, want {want:?}")),
        Err(e) => {
            assert_eq!(e.to_string(), format!("glTF: buffer 0: {reason}"));
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("SECRET"), "{uri:?}: {shown}");
            Ok(())
        }
    }
}

fn all_refused(layout: &Layout, cases: &[(String, &str)]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(uri, reason)| refused(layout, uri, reason).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The control: the same bytes inside the directory load, so each refusal below is the path rule's.
#[test]
fn the_secret_would_load_from_inside_the_directory() {
    let layout = Layout::new("control");
    std::fs::copy(
        layout.root().join("secret.bin"),
        layout.asset().join("secret.bin"),
    )
    .unwrap();
    let scene = GltfScene::load(layout.write("secret.bin")).unwrap();
    assert_eq!(
        scene.primitives()[0].bind_positions()[1],
        glam::Vec3::new(0.0, 1.0, 0.0)
    );
}

#[test]
fn parent_directories_written_out_or_percent_encoded_are_refused() {
    let layout = Layout::new("dotdot");
    let cases: Vec<(String, &str)> = [
        "../secret.bin",
        "%2e%2e/secret.bin",
        "%2E%2E%2Fsecret.bin",
        "%2e%2E%2fsecret.bin",
        "..\\secret.bin",
        "%2e%2e%5csecret.bin",
        "sub/../../secret.bin",
        "sub/..%2F..%2Fsecret.bin",
        "./../secret.bin",
        "sub\\..\\..\\secret.bin",
        "..",
    ]
    .iter()
    .map(|u| (u.to_string(), OUTSIDE))
    .collect();
    all_refused(&layout, &cases);
}

#[test]
fn absolute_paths_drive_letters_and_schemes_are_refused() {
    let layout = Layout::new("absolute");
    let secret = layout.root().join("secret.bin");
    let secret = secret.to_str().unwrap();
    // Every separator and the drive colon encoded, so only decoding reveals the absolute path.
    let encoded = secret
        .replace('/', "%2F")
        .replace('\\', "%5C")
        .replace(':', "%3A");
    // On Windows the absolute path begins with a drive letter ("C:\\Users\\..."), and a `:` before any
    // `/` makes it a URI scheme by RFC 3986 (as for "C:/x.bin" below): the scheme rule refuses it first.
    let absolute = if cfg!(windows) { SCHEME } else { OUTSIDE };
    let cases: Vec<(String, &str)> = vec![
        (secret.to_string(), absolute),
        (encoded, OUTSIDE),
        (format!("/{secret}"), OUTSIDE),
        (format!("\\\\server\\share{secret}"), absolute),
        // Percent-encoded drive letters and colons are refused after decoding.
        ("C%3A/x.bin".into(), OUTSIDE),
        ("C%3a%5Cx.bin".into(), OUTSIDE),
        ("sub/C:/x.bin".into(), OUTSIDE),
        // A literal `C:` before any slash is a URI scheme by RFC 3986, and refused as one.
        ("C:/x.bin".into(), SCHEME),
        ("C:\\x.bin".into(), SCHEME),
        (format!("file://{secret}"), SCHEME),
        ("file:secret.bin".into(), SCHEME),
        ("file:../secret.bin".into(), SCHEME),
        ("FILE:///etc/passwd".into(), SCHEME),
        ("http://example.com/secret.bin".into(), SCHEME),
    ];
    all_refused(&layout, &cases);
}

#[test]
fn nul_and_bad_percent_escapes_are_refused() {
    let layout = Layout::new("escapes");
    layout.data("data.bin");
    all_refused(
        &layout,
        &[
            (
                "data.bin%00.png".into(),
                "an external buffer path cannot contain a NUL",
            ),
            ("%zz.bin".into(), "the URI has a bad percent escape"),
            ("data.bin%".into(), "the URI has a bad percent escape"),
            ("data.bin%2".into(), "the URI has a bad percent escape"),
            // %ff alone is not UTF-8.
            ("%ffdata.bin".into(), "the URI has a bad percent escape"),
        ],
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_directory_are_refused() {
    use std::os::unix::fs::symlink;
    let layout = Layout::new("symlinks");
    let asset = layout.asset();
    symlink(layout.root().join("secret.bin"), asset.join("link.bin")).unwrap();
    symlink("../secret.bin", asset.join("relative-link.bin")).unwrap();
    symlink(layout.root(), asset.join("up")).unwrap();
    symlink("/dev/zero", asset.join("zero.bin")).unwrap();
    all_refused(
        &layout,
        &[
            ("link.bin".into(), OUTSIDE),
            ("relative-link.bin".into(), OUTSIDE),
            ("up/secret.bin".into(), OUTSIDE),
            ("up/asset/../secret.bin".into(), OUTSIDE),
            ("zero.bin".into(), OUTSIDE),
        ],
    );
}

/// Legitimate relative URIs still load, with the same positions as the embedded buffer.
#[test]
fn relative_paths_inside_the_directory_still_load() {
    let layout = Layout::new("inside");
    layout.data("data.bin");
    layout.data("sub/data.bin");
    layout.data("my data.bin");
    layout.data("sub/deeper/data.bin");
    let mut b = Builder::default();
    let doc = rig(&mut b);
    let want = GltfScene::from_slice(&b.gltf(doc)).unwrap().primitives()[0]
        .bind_positions()
        .to_vec();
    for uri in [
        "data.bin",
        "./data.bin",
        "sub/data.bin",
        "sub/./data.bin",
        "sub//data.bin",
        "sub%2Fdata.bin",
        "my%20data.bin",
        "my data.bin",
        "sub/deeper/data.bin",
        "sub\\deeper\\data.bin",
    ] {
        let scene = GltfScene::load(layout.write(uri)).unwrap_or_else(|e| panic!("{uri:?}: {e}"));
        assert_eq!(scene.primitives()[0].bind_positions(), &want[..], "{uri:?}");
    }
    // A symbolic link that stays inside the directory is fine, and so is reaching the directory
    // itself through one.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("data.bin", layout.asset().join("alias.bin")).unwrap();
        GltfScene::load(layout.write("alias.bin")).unwrap();
        let linked = layout.root().join("linked-asset");
        std::os::unix::fs::symlink(layout.asset(), &linked).unwrap();
        layout.write("sub/data.bin");
        GltfScene::load(linked.join("model.gltf")).unwrap();
    }
}

/// A URI naming a directory, or nothing at all, is not a regular file; one naming a missing file
/// cannot be opened; without a directory no external file is read.
#[test]
fn directories_missing_files_and_no_directory() {
    let layout = Layout::new("not-files");
    let sub = layout.asset().join("sub");
    all_refused(
        &layout,
        &[(
            "sub".into(),
            &format!("'{}' is not a regular file", sub.display()),
        )],
    );
    let path = layout.write("");
    match gltf_err(GltfScene::load(&path)) {
        GltfError::Buffer { buffer: 0, reason } => {
            assert!(reason.ends_with("is not a regular file"), "{reason}")
        }
        e => panic!("{e:?}"),
    }
    let path = layout.write("missing.bin");
    match gltf_err(GltfScene::load(&path)) {
        GltfError::Buffer { buffer: 0, reason } => {
            let missing = layout.asset().join("missing.bin");
            assert!(
                reason.starts_with(&format!("cannot open '{}': ", missing.display())),
                "{reason}"
            )
        }
        e => panic!("{e:?}"),
    }
    let bytes = std::fs::read(layout.write("data.bin")).unwrap();
    assert_refused(
        GltfScene::from_slice(&bytes),
        GltfError::Buffer {
            buffer: 0,
            reason: "it is an external file, and a glTF loaded from bytes without a directory cannot read one".into(),
        },
        "buffer 0: it is an external file, and a glTF loaded from bytes without a directory cannot read one",
    );
}

/// A FIFO inside the directory, named as a buffer, is refused as not a regular file without being
/// opened (opening it for reading would wait for a writer): the test keeps opening its write end
/// while the load runs, which succeeds only while a reader has it open ([`reads_fifo`]).
#[cfg(unix)]
#[test]
fn a_fifo_buffer_is_refused_without_opening_it() {
    let layout = Layout::new("fifo-buffer");
    let fifo = layout.asset().join("pipe.bin");
    let Some(()) = mkfifo(&fifo) else { return };
    let path = layout.write("pipe.bin");
    let (result, opened) = reads_fifo(&fifo, move || GltfScene::load(&path).map(|_| ()));
    assert!(
        !opened,
        "loading a .gltf whose buffer is a FIFO opened the FIFO for reading"
    );
    let reason = format!(
        "'{}' is not a regular file",
        layout.asset().join("pipe.bin").display()
    );
    assert_eq!(
        result,
        Err(Error::Gltf(GltfError::Buffer { buffer: 0, reason }))
    );
}

/// The same symbolic link out, when the .gltf is named without a directory (`model.gltf`, read from
/// the current directory, as `ispc-skinning skin model.gltf` does). The load runs in a child process
/// (this test binary again) started in the asset's directory, so that no other test sees the change of
/// directory.
#[cfg(unix)]
#[test]
fn a_symlink_out_is_refused_when_the_gltf_is_named_without_a_directory() {
    const CHILD: &str = "GLTF_HOSTILE_CHILD_IN_ASSET_DIR";
    if std::env::var_os(CHILD).is_some() {
        let result = GltfScene::load("model.gltf");
        let want = Error::Gltf(GltfError::Buffer {
            buffer: 0,
            reason: OUTSIDE.into(),
        });
        match result {
            Ok(_) => panic!("loaded model.gltf through link.bin, which leads out of the directory"),
            Err(e) => assert_eq!(e, want),
        }
        return;
    }
    let layout = Layout::new("symlink-bare-name");
    std::os::unix::fs::symlink("../secret.bin", layout.asset().join("link.bin")).unwrap();
    layout.write("link.bin");
    // With a directory in the path the link is refused.
    assert_eq!(
        GltfScene::load(layout.asset().join("model.gltf")).unwrap_err(),
        Error::Gltf(GltfError::Buffer {
            buffer: 0,
            reason: OUTSIDE.into()
        })
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "paths::a_symlink_out_is_refused_when_the_gltf_is_named_without_a_directory",
            "--include-ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .current_dir(layout.asset())
        .output()
        .unwrap();
    if child_cannot_start(
        &out,
        "a_symlink_out_is_refused_when_the_gltf_is_named_without_a_directory",
    ) {
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the load of model.gltf in its own directory: {}",
        stderr
            .lines()
            .filter(|l| l.contains("panicked") || l.contains("loaded"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
}
