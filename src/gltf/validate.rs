//! The importer's own check of the raw JSON tree, before anything is read from it.
//!
//! Every index the importer follows, every enum it matches on, and every required field is checked
//! here first, and a document that breaks one is a [`GltfError::Json`](super::GltfError::Json) naming
//! the JSON path, for example `animations[0].channels[3].target.node`. The typed document
//! ([`schema`](super::schema)) is then read from the checked tree. (Before, the gltf crate read the
//! document, and it panicked on some of these: an accessor index out of range in a primitive's
//! attributes, inside its own validation; an animation target node out of range; a target `path` that
//! is not one of the spec's strings. docs/FUZZING.md lists them.)

use super::error::GltfError;
use super::limits::ImportLimits;
use crate::Error;
use serde_json::Value;

/// A place in the document, written out only when it goes into an error.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

struct Checker<'v> {
    /// The document, known to be a JSON object.
    root: &'v Value,
}

type Result<T> = std::result::Result<T, GltfError<Error>>;

fn error(path: &[Seg<'_>], reason: &'static str) -> GltfError<Error> {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    GltfError::Json { path: s, reason }
}

/// The checked document, without the animation channels this importer ignores and with the
/// `KHR_animation_pointer` channels it plays rewritten as plain ones; for each animation, the file's
/// index of each of its channels now (`None` for an animation left as it was); and one warning per
/// ignored channel.
pub(super) struct Checked {
    pub(super) value: Value,
    pub(super) origins: Vec<Option<Vec<usize>>>,
    pub(super) warnings: Vec<String>,
}

/// What a `KHR_animation_pointer` channel the importer plays points at.
#[derive(Clone, Copy)]
enum Pointed {
    /// `/nodes/N/<path>`.
    Node(usize),
    /// `/meshes/M/weights`: every node of mesh M without `weights` of its own.
    MeshWeights(usize),
}

/// What becomes of an animation channel that targets no node (`target.node` absent).
enum Fate {
    /// A `KHR_animation_pointer` channel on a node's translation, rotation, scale or morph weights:
    /// rewritten as the plain channel it means, so it plays; one on a mesh's `weights`: rewritten as
    /// one plain `weights` channel per node that shows the mesh's own weights (a node of that mesh
    /// without `weights` of its own, which take precedence).
    Plays {
        pointed: Pointed,
        path: &'static str,
    },
    /// Anything else (another extension's target, a pointer to a material, a camera...): taken out,
    /// with this warning.
    Ignored(String),
}

/// The node properties a `KHR_animation_pointer` channel may animate here, as glTF's own target paths.
const POINTED: [&str; 4] = ["translation", "rotation", "scale", "weights"];

/// What the check found: each channel without a node, with its fate, in document order, and each
/// mesh's nodes that show its own weights.
struct Found {
    fates: Vec<(usize, usize, Fate)>,
    mesh_users: Vec<Vec<usize>>,
}

/// Checks the raw JSON of a glTF document (see the [module docs](crate::gltf::validate)), and the node
/// limit, before anything is read from it. An animation channel without `target.node` has its target
/// defined by an extension:
/// - a `KHR_animation_pointer` channel whose pointer is `/nodes/N/translation`, `rotation`, `scale` or
///   `weights` is rewritten as the channel `{"sampler": S, "target": {"node": N, "path": ...}}`, so it
///   plays as that channel would; one whose pointer is `/meshes/M/weights` as one `weights` channel
///   per node of mesh `M` without `weights` of its own (these count against [`ImportLimits::nodes`],
///   checked as they are found, so a file cannot multiply its channels); a pointer to a node or mesh
///   that does not exist is a [`GltfError::Json`];
/// - every other one (a pointer to any other property, an unknown extension's target) is ignored, as
///   the spec says: taken out of the document before it is read, and each leaves a warning.
///
/// Each animation with such channels is rebuilt in one pass over its channels.
pub(super) fn check_json(bytes: &[u8], limits: &ImportLimits) -> Result<Checked> {
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| GltfError::Parse {
        message: e.to_string(),
    })?;
    if !value.is_object() {
        return Err(error(&[], "the document must be a JSON object"));
    }
    let checker = Checker { root: &value };
    ImportLimits::check("nodes", checker.len("nodes"), limits.nodes)?;
    let Found { fates, mesh_users } = checker.check(limits.nodes)?;
    let animations = checker.len("animations");
    if fates.is_empty() {
        return Ok(Checked {
            value,
            origins: vec![None; animations],
            warnings: Vec::new(),
        });
    }
    let mut warnings = Vec::new();
    let mut origins: Vec<Option<Vec<usize>>> = vec![None; animations];
    let mut fates = fates.into_iter().peekable();
    while let Some(&(animation, _, _)) = fates.peek() {
        // This animation's fates, in channel order.
        let mut here = Vec::new();
        while let Some((_, channel, fate)) = fates.next_if(|f| f.0 == animation) {
            here.push((channel, fate));
        }
        let channels = value
            .get_mut("animations")
            .and_then(|a| a.get_mut(animation))
            .and_then(|a| a.get_mut("channels"))
            .and_then(Value::as_array_mut);
        let Some(channels) = channels else {
            continue;
        };
        let old = std::mem::take(channels);
        let mut origin = Vec::with_capacity(old.len());
        let mut here = here.into_iter().peekable();
        for (k, c) in old.into_iter().enumerate() {
            let Some((_, fate)) = here.next_if(|(channel, _)| *channel == k) else {
                channels.push(c);
                origin.push(k);
                continue;
            };
            match fate {
                Fate::Plays { pointed, path } => {
                    // A plain channel of the same sampler, and nothing else of the original.
                    let sampler = c.get("sampler").cloned().unwrap_or(Value::Null);
                    let one;
                    let users: &[usize] = match pointed {
                        Pointed::Node(n) => {
                            one = [n];
                            &one
                        }
                        Pointed::MeshWeights(m) => mesh_users.get(m).map_or(&[], Vec::as_slice),
                    };
                    for &node in users {
                        let mut target = serde_json::Map::new();
                        target.insert("node".into(), Value::from(node));
                        target.insert("path".into(), Value::from(path));
                        let mut plain = serde_json::Map::new();
                        plain.insert("sampler".into(), sampler.clone());
                        plain.insert("target".into(), Value::Object(target));
                        channels.push(Value::Object(plain));
                        origin.push(k);
                    }
                }
                Fate::Ignored(why) => warnings.push(format!(
                    "animations[{animation}].channels[{k}]: {why}; ignored"
                )),
            }
        }
        if let Some(slot) = origins.get_mut(animation) {
            *slot = Some(origin);
        }
    }
    Ok(Checked {
        value,
        origins,
        warnings,
    })
}

impl<'v> Checker<'v> {
    /// The length of a top-level array (0 when absent).
    fn len(&self, name: &str) -> usize {
        match self.root.get(name) {
            Some(Value::Array(a)) => a.len(),
            _ => 0,
        }
    }

    /// The objects of a top-level array, each with its path; an error when it is not an array of
    /// objects.
    fn objects(&self, name: &'static str) -> Result<Vec<&'v Value>> {
        objects(self.root.get(name), &[Seg::Key(name)])
    }

    /// Checks the document; returns the (animation, channel) pairs whose target names no node, in
    /// document order, each with what becomes of it, and each mesh's nodes that show its own
    /// weights. The channels that pointers at a mesh's weights become are counted as they are found,
    /// against `max_expanded` ([`ImportLimits::nodes`]).
    fn check(&self, max_expanded: usize) -> Result<Found> {
        let mut ignored = Vec::new();
        let mut expanded = 0usize;
        match self.root.get("asset") {
            Some(Value::Object(asset)) => {
                if !matches!(asset.get("version"), Some(Value::String(_))) {
                    return Err(error(
                        &[Seg::Key("asset"), Seg::Key("version")],
                        "a required string is missing",
                    ));
                }
            }
            _ => return Err(error(&[Seg::Key("asset")], "a required object is missing")),
        }
        let count = |name| self.len(name);
        let (accessors, views, buffers, nodes, meshes, skins) = (
            count("accessors"),
            count("bufferViews"),
            count("buffers"),
            count("nodes"),
            count("meshes"),
            count("skins"),
        );
        let (materials, textures, images, samplers, cameras, scenes) = (
            count("materials"),
            count("textures"),
            count("images"),
            count("samplers"),
            count("cameras"),
            count("scenes"),
        );

        for (i, b) in self.objects("buffers")?.into_iter().enumerate() {
            let p = [Seg::Key("buffers"), Seg::Index(i)];
            required_uint(b, &p, "byteLength")?;
            optional_string(b, &p, "uri")?;
        }
        for (i, v) in self.objects("bufferViews")?.into_iter().enumerate() {
            let p = [Seg::Key("bufferViews"), Seg::Index(i)];
            index(v, &p, "buffer", buffers, true)?;
            required_uint(v, &p, "byteLength")?;
            optional_uint(v, &p, "byteOffset")?;
            optional_uint(v, &p, "byteStride")?;
        }
        for (i, a) in self.objects("accessors")?.into_iter().enumerate() {
            let p = [Seg::Key("accessors"), Seg::Index(i)];
            index(a, &p, "bufferView", views, false)?;
            optional_uint(a, &p, "byteOffset")?;
            required_uint(a, &p, "count")?;
            one_of_numbers(
                a,
                &p,
                "componentType",
                &[5120, 5121, 5122, 5123, 5125, 5126],
                true,
            )?;
            one_of_strings(
                a,
                &p,
                "type",
                &["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"],
                true,
            )?;
            if let Some(sparse) = object(a, &p, "sparse", false)? {
                let sp = [p[0], p[1], Seg::Key("sparse")];
                required_uint(sparse, &sp, "count")?;
                let indices = object(sparse, &sp, "indices", true)?.unwrap_or(sparse);
                let ip = [sp[0], sp[1], sp[2], Seg::Key("indices")];
                index(indices, &ip, "bufferView", views, true)?;
                optional_uint(indices, &ip, "byteOffset")?;
                one_of_numbers(indices, &ip, "componentType", &[5121, 5123, 5125], true)?;
                let values = object(sparse, &sp, "values", true)?.unwrap_or(sparse);
                let vp = [sp[0], sp[1], sp[2], Seg::Key("values")];
                index(values, &vp, "bufferView", views, true)?;
                optional_uint(values, &vp, "byteOffset")?;
            }
        }
        for (i, image) in self.objects("images")?.into_iter().enumerate() {
            index(
                image,
                &[Seg::Key("images"), Seg::Index(i)],
                "bufferView",
                views,
                false,
            )?;
        }
        for (i, t) in self.objects("textures")?.into_iter().enumerate() {
            let p = [Seg::Key("textures"), Seg::Index(i)];
            index(t, &p, "sampler", samplers, false)?;
            index(t, &p, "source", images, false)?;
        }
        for (i, m) in self.objects("materials")?.into_iter().enumerate() {
            let p = [Seg::Key("materials"), Seg::Index(i)];
            for name in ["normalTexture", "occlusionTexture", "emissiveTexture"] {
                if let Some(t) = object(m, &p, name, false)? {
                    index(t, &[p[0], p[1], Seg::Key(name)], "index", textures, true)?;
                }
            }
            if let Some(pbr) = object(m, &p, "pbrMetallicRoughness", false)? {
                let pp = [p[0], p[1], Seg::Key("pbrMetallicRoughness")];
                for name in ["baseColorTexture", "metallicRoughnessTexture"] {
                    if let Some(t) = object(pbr, &pp, name, false)? {
                        index(
                            t,
                            &[pp[0], pp[1], pp[2], Seg::Key(name)],
                            "index",
                            textures,
                            true,
                        )?;
                    }
                }
            }
        }
        for (i, m) in self.objects("meshes")?.into_iter().enumerate() {
            let p = [Seg::Key("meshes"), Seg::Index(i)];
            let prims = objects(m.get("primitives"), &[p[0], p[1], Seg::Key("primitives")])?;
            if prims.is_empty() {
                return Err(error(
                    &[p[0], p[1], Seg::Key("primitives")],
                    "a mesh needs at least one primitive",
                ));
            }
            for (k, prim) in prims.into_iter().enumerate() {
                let pp = [p[0], p[1], Seg::Key("primitives"), Seg::Index(k)];
                let Some(attributes) = object(prim, &pp, "attributes", true)? else {
                    continue;
                };
                let ap = [pp[0], pp[1], pp[2], pp[3], Seg::Key("attributes")];
                for name in attributes.as_object().into_iter().flat_map(|m| m.keys()) {
                    index(attributes, &ap, name, accessors, true)?;
                }
                index(prim, &pp, "indices", accessors, false)?;
                index(prim, &pp, "material", materials, false)?;
                one_of_numbers(prim, &pp, "mode", &[0, 1, 2, 3, 4, 5, 6], false)?;
                if let Some(targets) = prim.get("targets") {
                    let tp = [pp[0], pp[1], pp[2], pp[3], Seg::Key("targets")];
                    for (t, target) in objects(Some(targets), &tp)?.into_iter().enumerate() {
                        let tpp = [tp[0], tp[1], tp[2], tp[3], tp[4], Seg::Index(t)];
                        for name in target.as_object().into_iter().flat_map(|m| m.keys()) {
                            index(target, &tpp, name, accessors, true)?;
                        }
                    }
                }
            }
        }
        for (i, s) in self.objects("skins")?.into_iter().enumerate() {
            let p = [Seg::Key("skins"), Seg::Index(i)];
            index(s, &p, "inverseBindMatrices", accessors, false)?;
            index(s, &p, "skeleton", nodes, false)?;
            indices(s, &p, "joints", nodes, true)?;
            // The spec asks for unique joints; it also bounds a skin by the node count.
            let joints = s
                .get("joints")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let mut seen = std::collections::HashSet::with_capacity(joints.len());
            if let Some(k) = joints.iter().position(|j| !seen.insert(j.as_u64())) {
                return Err(error(
                    &[p[0], p[1], Seg::Key("joints"), Seg::Index(k)],
                    "a skin names each joint once",
                ));
            }
        }
        for (i, n) in self.objects("nodes")?.into_iter().enumerate() {
            let p = [Seg::Key("nodes"), Seg::Index(i)];
            indices(n, &p, "children", nodes, false)?;
            index(n, &p, "mesh", meshes, false)?;
            index(n, &p, "skin", skins, false)?;
            index(n, &p, "camera", cameras, false)?;
            for (name, len) in [
                ("translation", 3),
                ("rotation", 4),
                ("scale", 3),
                ("matrix", 16),
            ] {
                numbers(n, &p, name, len)?;
            }
        }
        for (i, s) in self.objects("scenes")?.into_iter().enumerate() {
            indices(
                s,
                &[Seg::Key("scenes"), Seg::Index(i)],
                "nodes",
                nodes,
                false,
            )?;
        }
        index(self.root, &[], "scene", scenes, false)?;
        // Each mesh's nodes that show its own weights (no `weights` of their own), for pointers at
        // a mesh's weights; the nodes were checked above.
        let mut mesh_users = vec![Vec::new(); meshes];
        for (n, node) in self.objects("nodes")?.into_iter().enumerate() {
            let mesh = node.get("mesh").and_then(Value::as_u64);
            let users = mesh.and_then(|m| mesh_users.get_mut(usize::try_from(m).ok()?));
            let own = node.get("weights").filter(|w| !w.is_null());
            if let (Some(users), None) = (users, own) {
                users.push(n);
            }
        }
        for (i, a) in self.objects("animations")?.into_iter().enumerate() {
            let p = [Seg::Key("animations"), Seg::Index(i)];
            let sp = [p[0], p[1], Seg::Key("samplers")];
            let samplers_here = objects(a.get("samplers"), &sp)?;
            for (k, s) in samplers_here.iter().enumerate() {
                let spp = [sp[0], sp[1], sp[2], Seg::Index(k)];
                index(s, &spp, "input", accessors, true)?;
                index(s, &spp, "output", accessors, true)?;
                one_of_strings(
                    s,
                    &spp,
                    "interpolation",
                    &["LINEAR", "STEP", "CUBICSPLINE"],
                    false,
                )?;
            }
            let cp = [p[0], p[1], Seg::Key("channels")];
            for (k, c) in objects(a.get("channels"), &cp)?.into_iter().enumerate() {
                let cpp = [cp[0], cp[1], cp[2], Seg::Index(k)];
                index(c, &cpp, "sampler", samplers_here.len(), true)?;
                let Some(target) = object(c, &cpp, "target", true)? else {
                    continue;
                };
                let tp = [cpp[0], cpp[1], cpp[2], cpp[3], Seg::Key("target")];
                index(target, &tp, "node", nodes, false)?;
                if target.get("node").is_none() {
                    // An extension's target: KHR_animation_pointer's "pointer" path plays where it
                    // points at a node's property; the others are ignored, as the spec says.
                    optional_string(target, &tp, "path")?;
                    let fate = pointer_fate(target, &tp, nodes, &mesh_users)?;
                    if let Fate::Plays {
                        pointed: Pointed::MeshWeights(m),
                        ..
                    } = fate
                    {
                        let users = mesh_users.get(m).map_or(0, Vec::len);
                        expanded = expanded.saturating_add(users);
                        ImportLimits::check("nodes", expanded, max_expanded)?;
                    }
                    ignored.push((i, k, fate));
                    continue;
                }
                one_of_strings(
                    target,
                    &tp,
                    "path",
                    &["translation", "rotation", "scale", "weights"],
                    true,
                )?;
            }
        }
        Ok(Found {
            fates: ignored,
            mesh_users,
        })
    }
}

/// What becomes of a channel target without a node (see [`Fate`]). The pointer is a JSON pointer
/// (RFC 6901): played only in its plain form `/nodes/N/<property>`, `N` written as JSON pointer writes an
/// array index (digits, no leading zero), a node of the document.
fn pointer_fate(
    target: &Value,
    path: &[Seg<'_>],
    nodes: usize,
    mesh_users: &[Vec<usize>],
) -> Result<Fate> {
    let pointer = match target.get("path") {
        Some(Value::String(p)) if p == "pointer" => target
            .get("extensions")
            .and_then(|e| e.get("KHR_animation_pointer"))
            .and_then(|e| e.get("pointer")),
        _ => None,
    };
    let Some(pointer) = pointer else {
        return Ok(Fate::Ignored(
            "no target node (an extension's target this importer does not play)".into(),
        ));
    };
    let pp = || {
        let mut p = with(path, "extensions");
        p.push(Seg::Key("KHR_animation_pointer"));
        p.push(Seg::Key("pointer"));
        p
    };
    let Value::String(pointer) = pointer else {
        return Err(error(&pp(), "a string is expected"));
    };
    let mut parts = pointer.split('/');
    let (empty, kind, index, property, rest) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    );
    match (empty, kind, index, property, rest) {
        (Some(""), Some("nodes"), Some(index), Some(property), None) if plain_decimal(index) => {
            if let Some(&known) = POINTED.iter().find(|&&p| p == property) {
                return match index.parse::<usize>() {
                    Ok(node) if node < nodes => Ok(Fate::Plays {
                        pointed: Pointed::Node(node),
                        path: known,
                    }),
                    _ => Err(error(&pp(), "the pointer names a node that does not exist")),
                };
            }
        }
        (Some(""), Some("meshes"), Some(index), Some("weights"), None) if plain_decimal(index) => {
            let Some((m, users)) = index
                .parse::<usize>()
                .ok()
                .and_then(|m| Some((m, mesh_users.get(m)?)))
            else {
                return Err(error(&pp(), "the pointer names a mesh that does not exist"));
            };
            if users.is_empty() {
                return Ok(Fate::Ignored(format!(
                    "KHR_animation_pointer '/meshes/{index}/weights': no node shows that mesh's own \
                     weights (every node of it has weights of its own, or none draws it)"
                )));
            }
            return Ok(Fate::Plays {
                pointed: Pointed::MeshWeights(m),
                path: "weights",
            });
        }
        _ => {}
    }
    // The pointer is the file's text: shown escaped and at most 64 characters long.
    let shown: String = pointer.chars().take(64).collect();
    let more = if pointer.chars().nth(64).is_some() {
        "..."
    } else {
        ""
    };
    Ok(Fate::Ignored(format!(
        "KHR_animation_pointer '{}{more}' is not a node's translation, rotation, scale or weights, \
         nor a mesh's weights, the properties this importer plays",
        crate::text::Escaped(&shown)
    )))
}

/// Whether `s` is a number written the one plain way: decimal digits, no sign, no leading zero (as a
/// JSON pointer writes an array index, and as a JOINTS_n set number is read here).
pub(super) fn plain_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

fn with<'a>(path: &[Seg<'a>], key: &'a str) -> Vec<Seg<'a>> {
    let mut p = path.to_vec();
    p.push(Seg::Key(key));
    p
}

/// The objects of an optional array.
fn objects<'v>(value: Option<&'v Value>, path: &[Seg<'_>]) -> Result<Vec<&'v Value>> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                o @ Value::Object(_) => Ok(o),
                _ => {
                    let mut p = path.to_vec();
                    p.push(Seg::Index(i));
                    Err(error(&p, "an object is expected"))
                }
            })
            .collect(),
        Some(_) => Err(error(path, "an array is expected")),
    }
}

/// An object-valued field; `None` when absent and not required.
fn object<'v>(
    o: &'v Value,
    path: &[Seg<'_>],
    key: &str,
    required: bool,
) -> Result<Option<&'v Value>> {
    match o.get(key) {
        Some(inner @ Value::Object(_)) => Ok(Some(inner)),
        Some(_) => Err(error(&with(path, key), "an object is expected")),
        None if required => Err(error(&with(path, key), "a required object is missing")),
        None => Ok(None),
    }
}

fn uint(value: &Value) -> Option<u64> {
    value.as_u64()
}

/// An index field that must name one of `len` objects.
fn index(o: &Value, path: &[Seg<'_>], key: &str, len: usize, required: bool) -> Result<()> {
    match o.get(key) {
        Some(v) => match uint(v) {
            Some(i) if (i as u128) < len as u128 => Ok(()),
            Some(_) => Err(error(
                &with(path, key),
                "the index names no object of its kind",
            )),
            None => Err(error(
                &with(path, key),
                "an index must be a non-negative integer",
            )),
        },
        None if required => Err(error(&with(path, key), "a required index is missing")),
        None => Ok(()),
    }
}

/// An array of indices that must each name one of `len` objects.
fn indices(o: &Value, path: &[Seg<'_>], key: &str, len: usize, required: bool) -> Result<()> {
    match o.get(key) {
        Some(Value::Array(items)) => {
            let p = with(path, key);
            for (i, v) in items.iter().enumerate() {
                let mut q = p.clone();
                q.push(Seg::Index(i));
                match uint(v) {
                    Some(x) if (x as u128) < len as u128 => {}
                    Some(_) => return Err(error(&q, "the index names no object of its kind")),
                    None => return Err(error(&q, "an index must be a non-negative integer")),
                }
            }
            Ok(())
        }
        Some(_) => Err(error(&with(path, key), "an array of indices is expected")),
        None if required => Err(error(&with(path, key), "a required array is missing")),
        None => Ok(()),
    }
}

fn required_uint(o: &Value, path: &[Seg<'_>], key: &str) -> Result<()> {
    match o.get(key).map(uint) {
        Some(Some(_)) => Ok(()),
        Some(None) => Err(error(
            &with(path, key),
            "a non-negative integer is expected",
        )),
        None => Err(error(&with(path, key), "a required integer is missing")),
    }
}

fn optional_uint(o: &Value, path: &[Seg<'_>], key: &str) -> Result<()> {
    match o.get(key).map(uint) {
        Some(None) => Err(error(
            &with(path, key),
            "a non-negative integer is expected",
        )),
        _ => Ok(()),
    }
}

fn optional_string(o: &Value, path: &[Seg<'_>], key: &str) -> Result<()> {
    match o.get(key) {
        Some(Value::String(_)) | None => Ok(()),
        Some(_) => Err(error(&with(path, key), "a string is expected")),
    }
}

/// A numeric array of exactly `len` numbers, when present.
fn numbers(o: &Value, path: &[Seg<'_>], key: &str, len: usize) -> Result<()> {
    match o.get(key) {
        None => Ok(()),
        Some(Value::Array(a)) if a.len() == len && a.iter().all(Value::is_number) => Ok(()),
        Some(_) => Err(error(
            &with(path, key),
            "an array of numbers of the spec's length is expected",
        )),
    }
}

fn one_of_numbers(
    o: &Value,
    path: &[Seg<'_>],
    key: &str,
    allowed: &[u64],
    required: bool,
) -> Result<()> {
    match o.get(key) {
        Some(v) if uint(v).is_some_and(|x| allowed.contains(&x)) => Ok(()),
        Some(_) => Err(error(
            &with(path, key),
            "the value is not one the spec allows",
        )),
        None if required => Err(error(&with(path, key), "a required value is missing")),
        None => Ok(()),
    }
}

fn one_of_strings(
    o: &Value,
    path: &[Seg<'_>],
    key: &str,
    allowed: &[&str],
    required: bool,
) -> Result<()> {
    match o.get(key) {
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(error(
            &with(path, key),
            "the value is not one the spec allows",
        )),
        None if required => Err(error(&with(path, key), "a required value is missing")),
        None => Ok(()),
    }
}
