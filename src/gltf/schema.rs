//! The parts of a glTF document this importer reads, as plain typed structs built from the JSON tree
//! that [`validate`](super::validate) has already checked (every index in range, every enum one of the
//! spec's values, every required field present). Building them checks the types of the few fields the
//! check does not (names, `weights`, `normalized`), each a [`GltfError::Json`] with its path; nothing
//! here panics on any tree.
//!
//! This replaces the gltf crate's document model: its serde derives cost an application about 60% of
//! its compile time (docs/RESULTS.md, "What the gltf feature costs to build"), and the importer's own
//! check already did the validation it relied on.

use super::error::GltfError;
use crate::Error;
use serde_json::Value;

type Result<T> = std::result::Result<T, GltfError<Error>>;

/// An accessor's component type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DataType {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl DataType {
    fn from_code(code: u64) -> Option<DataType> {
        Some(match code {
            5120 => DataType::I8,
            5121 => DataType::U8,
            5122 => DataType::I16,
            5123 => DataType::U16,
            5125 => DataType::U32,
            5126 => DataType::F32,
            _ => return None,
        })
    }

    /// Bytes per component.
    pub(super) fn size(self) -> usize {
        match self {
            DataType::I8 | DataType::U8 => 1,
            DataType::I16 | DataType::U16 => 2,
            DataType::U32 | DataType::F32 => 4,
        }
    }
}

/// An accessor's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dimensions {
    Scalar,
    Vec2,
    Vec3,
    Vec4,
    Mat2,
    Mat3,
    Mat4,
}

impl Dimensions {
    const ALL: [Dimensions; 7] = [
        Dimensions::Scalar,
        Dimensions::Vec2,
        Dimensions::Vec3,
        Dimensions::Vec4,
        Dimensions::Mat2,
        Dimensions::Mat3,
        Dimensions::Mat4,
    ];

    /// The element type the spec's `name` names.
    fn from_name(name: &str) -> Option<Dimensions> {
        Dimensions::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Components per element.
    pub(super) fn multiplicity(self) -> usize {
        match self {
            Dimensions::Scalar => 1,
            Dimensions::Vec2 => 2,
            Dimensions::Vec3 => 3,
            Dimensions::Vec4 | Dimensions::Mat2 => 4,
            Dimensions::Mat3 => 9,
            Dimensions::Mat4 => 16,
        }
    }

    /// The spec's name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Dimensions::Scalar => "SCALAR",
            Dimensions::Vec2 => "VEC2",
            Dimensions::Vec3 => "VEC3",
            Dimensions::Vec4 => "VEC4",
            Dimensions::Mat2 => "MAT2",
            Dimensions::Mat3 => "MAT3",
            Dimensions::Mat4 => "MAT4",
        }
    }
}

/// A primitive's topology (the ones this importer makes triangles of; the others draw nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Triangles,
    TriangleStrip,
    TriangleFan,
    /// Points and lines.
    Other,
}

/// What an animation channel targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Path {
    Translation,
    Rotation,
    Scale,
    Weights,
}

/// A sampler's interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Interpolation {
    Linear,
    Step,
    CubicSpline,
}

/// A node's local transform as the file gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Transform {
    /// Column-major, the 16 numbers of `matrix` in order.
    Matrix([f32; 16]),
    /// `translation`, `rotation` (x, y, z, w), `scale`, each its default when absent.
    Decomposed([f32; 3], [f32; 4], [f32; 3]),
}

/// The sparse substitutions of an accessor.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Sparse {
    pub(super) count: usize,
    pub(super) indices_view: usize,
    pub(super) indices_offset: usize,
    pub(super) index_type: DataType,
    pub(super) values_view: usize,
    pub(super) values_offset: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Accessor {
    pub(super) index: usize,
    pub(super) view: Option<usize>,
    pub(super) offset: usize,
    pub(super) count: usize,
    pub(super) data_type: DataType,
    pub(super) dimensions: Dimensions,
    pub(super) normalized: bool,
    pub(super) sparse: Option<Sparse>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct View {
    pub(super) index: usize,
    pub(super) buffer: usize,
    pub(super) offset: usize,
    pub(super) length: usize,
    pub(super) stride: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Buffer {
    pub(super) length: usize,
    /// `None`: the GLB `BIN` chunk.
    pub(super) uri: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Node {
    pub(super) name: Option<String>,
    pub(super) children: Vec<usize>,
    pub(super) mesh: Option<usize>,
    pub(super) skin: Option<usize>,
    pub(super) transform: Transform,
    pub(super) weights: Option<Vec<f32>>,
}

/// A primitive's attributes or one morph target's: (semantic, accessor), sorted by semantic (the JSON
/// tree's object keys are sorted).
pub(super) type Attributes = Vec<(String, usize)>;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Primitive {
    pub(super) index: usize,
    pub(super) attributes: Attributes,
    pub(super) indices: Option<usize>,
    pub(super) mode: Mode,
    pub(super) targets: Vec<Attributes>,
}

impl Primitive {
    /// The accessor of attribute `semantic`.
    pub(super) fn get(&self, semantic: &str) -> Option<usize> {
        find(&self.attributes, semantic)
    }
}

/// The accessor of `semantic` in a primitive's or morph target's attributes.
pub(super) fn find(attributes: &Attributes, semantic: &str) -> Option<usize> {
    attributes
        .iter()
        .find(|(s, _)| s == semantic)
        .map(|&(_, a)| a)
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Mesh {
    pub(super) primitives: Vec<Primitive>,
    pub(super) weights: Option<Vec<f32>>,
    /// `extras.targetNames` when it is an array of strings.
    pub(super) target_names: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Skin {
    pub(super) name: Option<String>,
    pub(super) joints: Vec<usize>,
    pub(super) inverse_bind_matrices: Option<usize>,
    pub(super) skeleton: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Channel {
    /// The channel's index in the file (a `KHR_animation_pointer` channel at a mesh's weights
    /// becomes several channels, each with its index; ignored channels are gone).
    pub(super) index: usize,
    pub(super) sampler: usize,
    pub(super) node: usize,
    pub(super) path: Path,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Sampler {
    pub(super) input: usize,
    pub(super) output: usize,
    pub(super) interpolation: Interpolation,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Animation {
    pub(super) index: usize,
    pub(super) name: Option<String>,
    pub(super) channels: Vec<Channel>,
    pub(super) samplers: Vec<Sampler>,
}

/// The document: what the importer reads of it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Document {
    pub(super) accessors: Vec<Accessor>,
    pub(super) views: Vec<View>,
    pub(super) buffers: Vec<Buffer>,
    pub(super) nodes: Vec<Node>,
    pub(super) meshes: Vec<Mesh>,
    pub(super) skins: Vec<Skin>,
    /// Each scene's root nodes.
    pub(super) scenes: Vec<Vec<usize>>,
    pub(super) scene: Option<usize>,
    pub(super) animations: Vec<Animation>,
}

/// One JSON object and its path in the document (for errors). An optional name, `weights` or
/// `normalized` set to `null` counts as absent, as the gltf crate's model read it.
#[derive(Clone, Copy)]
struct Obj<'v, 'p> {
    value: &'v Value,
    path: &'p dyn Fn() -> String,
}

fn json(path: String, reason: &'static str) -> GltfError<Error> {
    GltfError::Json { path, reason }
}

/// A JSON count or offset as usize (saturating on a 32-bit target: a bounds check refuses it later).
fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// A JSON number as f32, as serde reads an `f32` field: integers converted directly, others through
/// f64.
fn to_f32(v: &Value) -> Option<f32> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .map(|u| u as f32)
            .or_else(|| n.as_i64().map(|i| i as f32))
            .or_else(|| n.as_f64().map(|f| f as f32)),
        _ => None,
    }
}

impl<'v> Obj<'v, '_> {
    fn at(&self, key: &str) -> String {
        let base = (self.path)();
        if base.is_empty() {
            key.to_string()
        } else {
            format!("{base}.{key}")
        }
    }

    fn uint(&self, key: &str) -> Result<Option<usize>> {
        match self.value.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(|x| Some(to_usize(x)))
                .ok_or_else(|| json(self.at(key), "a non-negative integer is expected")),
        }
    }

    fn required_uint(&self, key: &str) -> Result<usize> {
        self.uint(key)?
            .ok_or_else(|| json(self.at(key), "a required integer is missing"))
    }

    fn string(&self, key: &str) -> Result<Option<String>> {
        match self.value.get(key).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(json(self.at(key), "a string is expected")),
        }
    }

    fn boolean(&self, key: &str) -> Result<bool> {
        match self.value.get(key).filter(|v| !v.is_null()) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(json(self.at(key), "a boolean is expected")),
        }
    }

    /// An array of numbers as f32; `len`, when given, is the count the spec requires.
    fn floats(&self, key: &str, len: Option<usize>) -> Result<Option<Vec<f32>>> {
        match self.value.get(key).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(Value::Array(items)) if len.is_none_or(|l| l == items.len()) => items
                .iter()
                .map(to_f32)
                .collect::<Option<Vec<f32>>>()
                .map(Some)
                .ok_or_else(|| json(self.at(key), "an array of numbers is expected")),
            Some(_) => Err(json(self.at(key), "an array of numbers is expected")),
        }
    }

    fn uints(&self, key: &str) -> Result<Vec<usize>> {
        match self.value.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_u64().map(to_usize))
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| json(self.at(key), "an array of indices is expected")),
            Some(_) => Err(json(self.at(key), "an array of indices is expected")),
        }
    }

    /// The objects of an array field (none when absent).
    fn each<T>(
        &self,
        key: &str,
        mut f: impl FnMut(usize, Obj<'v, '_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        match self.value.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    if !item.is_object() {
                        return Err(json(
                            format!("{}[{i}]", self.at(key)),
                            "an object is expected",
                        ));
                    }
                    let path = || format!("{}[{i}]", self.at(key));
                    out.push(f(
                        i,
                        Obj {
                            value: item,
                            path: &path,
                        },
                    )?);
                }
                Ok(out)
            }
            Some(_) => Err(json(self.at(key), "an array is expected")),
        }
    }

    /// An object field, `None` when absent.
    fn object<T>(&self, key: &str, f: impl FnOnce(Obj<'v, '_>) -> Result<T>) -> Result<Option<T>> {
        match self.value.get(key) {
            None => Ok(None),
            Some(inner @ Value::Object(_)) => {
                let path = || self.at(key);
                f(Obj {
                    value: inner,
                    path: &path,
                })
                .map(Some)
            }
            Some(_) => Err(json(self.at(key), "an object is expected")),
        }
    }

    /// The (name, index) pairs of an object of indices (a primitive's or morph target's attributes).
    fn attributes(&self) -> Result<Attributes> {
        let Some(map) = self.value.as_object() else {
            return Err(json((self.path)(), "an object is expected"));
        };
        map.iter()
            .map(|(name, v)| {
                v.as_u64()
                    .map(|a| (name.clone(), to_usize(a)))
                    .ok_or_else(|| json(self.at(name), "an index must be a non-negative integer"))
            })
            .collect()
    }
}

impl Document {
    /// Accessor `i` (the check has already bounded every index the importer follows; this keeps a
    /// broken invariant an error, not a panic).
    pub(super) fn accessor(&self, i: usize) -> Result<&Accessor> {
        self.accessors.get(i).ok_or_else(|| GltfError::Parse {
            message: format!("accessor {i} does not exist"),
        })
    }

    /// The typed document of a checked JSON tree; `origins[a]`, when given, is the file's index of
    /// each channel of animation `a` (see [`validate::Checked`](super::validate::Checked)).
    pub(super) fn from_json(root: &Value, origins: &[Option<Vec<usize>>]) -> Result<Document> {
        let top = || String::new();
        let r = Obj {
            value: root,
            path: &top,
        };
        let accessors = r.each("accessors", |index, a| {
            let code = a.required_uint("componentType")? as u64;
            let data_type = DataType::from_code(code).ok_or_else(|| {
                json(
                    a.at("componentType"),
                    "the value is not one the spec allows",
                )
            })?;
            let dimensions = a
                .string("type")?
                .as_deref()
                .and_then(Dimensions::from_name)
                .ok_or_else(|| json(a.at("type"), "the value is not one the spec allows"))?;
            let sparse = a.object("sparse", |s| {
                let indices = s
                    .object("indices", |i| {
                        let code = i.required_uint("componentType")? as u64;
                        Ok((
                            i.required_uint("bufferView")?,
                            i.uint("byteOffset")?.unwrap_or(0),
                            DataType::from_code(code).ok_or_else(|| {
                                json(
                                    i.at("componentType"),
                                    "the value is not one the spec allows",
                                )
                            })?,
                        ))
                    })?
                    .ok_or_else(|| json(s.at("indices"), "a required object is missing"))?;
                let values = s
                    .object("values", |v| {
                        Ok((
                            v.required_uint("bufferView")?,
                            v.uint("byteOffset")?.unwrap_or(0),
                        ))
                    })?
                    .ok_or_else(|| json(s.at("values"), "a required object is missing"))?;
                Ok(Sparse {
                    count: s.required_uint("count")?,
                    indices_view: indices.0,
                    indices_offset: indices.1,
                    index_type: indices.2,
                    values_view: values.0,
                    values_offset: values.1,
                })
            })?;
            Ok(Accessor {
                index,
                view: a.uint("bufferView")?,
                offset: a.uint("byteOffset")?.unwrap_or(0),
                count: a.required_uint("count")?,
                data_type,
                dimensions,
                normalized: a.boolean("normalized")?,
                sparse,
            })
        })?;
        let views = r.each("bufferViews", |index, v| {
            Ok(View {
                index,
                buffer: v.required_uint("buffer")?,
                offset: v.uint("byteOffset")?.unwrap_or(0),
                length: v.required_uint("byteLength")?,
                stride: v.uint("byteStride")?,
            })
        })?;
        let buffers = r.each("buffers", |_, b| {
            Ok(Buffer {
                length: b.required_uint("byteLength")?,
                uri: b.string("uri")?,
            })
        })?;
        let nodes = r.each("nodes", |_, n| {
            let transform = match n.floats("matrix", Some(16))? {
                Some(m) => {
                    let mut matrix = [0.0; 16];
                    matrix.copy_from_slice(&m);
                    Transform::Matrix(matrix)
                }
                None => {
                    let t = n.floats("translation", Some(3))?.unwrap_or(vec![0.0; 3]);
                    let q = n
                        .floats("rotation", Some(4))?
                        .unwrap_or(vec![0.0, 0.0, 0.0, 1.0]);
                    let s = n.floats("scale", Some(3))?.unwrap_or(vec![1.0; 3]);
                    Transform::Decomposed(
                        [t[0], t[1], t[2]],
                        [q[0], q[1], q[2], q[3]],
                        [s[0], s[1], s[2]],
                    )
                }
            };
            Ok(Node {
                name: n.string("name")?,
                children: n.uints("children")?,
                mesh: n.uint("mesh")?,
                skin: n.uint("skin")?,
                transform,
                weights: n.floats("weights", None)?,
            })
        })?;
        let meshes = r.each("meshes", |_, m| {
            let primitives = m.each("primitives", |index, p| {
                let attributes = p
                    .object("attributes", |a| a.attributes())?
                    .ok_or_else(|| json(p.at("attributes"), "a required object is missing"))?;
                let mode = match p.uint("mode")?.unwrap_or(4) {
                    4 => Mode::Triangles,
                    5 => Mode::TriangleStrip,
                    6 => Mode::TriangleFan,
                    _ => Mode::Other,
                };
                Ok(Primitive {
                    index,
                    attributes,
                    indices: p.uint("indices")?,
                    mode,
                    targets: p.each("targets", |_, t| t.attributes())?,
                })
            })?;
            // Free-form application data: names only when they are an array of strings.
            let target_names = m
                .value
                .get("extras")
                .and_then(|e| e.get("targetNames"))
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|n| n.as_str().map(str::to_string)).collect());
            Ok(Mesh {
                primitives,
                weights: m.floats("weights", None)?,
                target_names,
            })
        })?;
        let skins = r.each("skins", |_, s| {
            Ok(Skin {
                name: s.string("name")?,
                joints: s.uints("joints")?,
                inverse_bind_matrices: s.uint("inverseBindMatrices")?,
                skeleton: s.uint("skeleton")?,
            })
        })?;
        let scenes = r.each("scenes", |_, s| s.uints("nodes"))?;
        let animations = r.each("animations", |index, a| {
            let samplers = a.each("samplers", |_, s| {
                let interpolation = match s.string("interpolation")?.as_deref() {
                    None | Some("LINEAR") => Interpolation::Linear,
                    Some("STEP") => Interpolation::Step,
                    Some("CUBICSPLINE") => Interpolation::CubicSpline,
                    Some(_) => {
                        return Err(json(
                            s.at("interpolation"),
                            "the value is not one the spec allows",
                        ))
                    }
                };
                Ok(Sampler {
                    input: s.required_uint("input")?,
                    output: s.required_uint("output")?,
                    interpolation,
                })
            })?;
            let origin = origins.get(index).and_then(Option::as_deref);
            let channels = a.each("channels", |k, c| {
                let (node, path) = c
                    .object("target", |t| {
                        let path = match t.string("path")?.as_deref() {
                            Some("translation") => Path::Translation,
                            Some("rotation") => Path::Rotation,
                            Some("scale") => Path::Scale,
                            Some("weights") => Path::Weights,
                            _ => {
                                return Err(json(
                                    t.at("path"),
                                    "the value is not one the spec allows",
                                ))
                            }
                        };
                        Ok((t.required_uint("node")?, path))
                    })?
                    .ok_or_else(|| json(c.at("target"), "a required object is missing"))?;
                Ok(Channel {
                    index: origin.and_then(|o| o.get(k).copied()).unwrap_or(k),
                    sampler: c.required_uint("sampler")?,
                    node,
                    path,
                })
            })?;
            Ok(Animation {
                index,
                name: a.string("name")?,
                channels,
                samplers,
            })
        })?;
        Ok(Document {
            accessors,
            views,
            buffers,
            nodes,
            meshes,
            skins,
            scenes,
            scene: r.uint("scene")?,
            animations,
        })
    }
}
