//! How vertex attribute elements are stored in the input buffers.

/// How one attribute element is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Three little-endian f32 (positions, normals).
    F32x3,
    /// Four little-endian f32 (tangents, float weights).
    F32x4,
    /// Four u8 (joint indices).
    U8x4,
    /// Four little-endian u16 (joint indices).
    U16x4,
    /// Four u8 read as value / 255 (weights).
    Unorm8x4,
    /// Four little-endian u16 read as value / 65535 (weights).
    Unorm16x4,
}

impl Format {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Format::F32x3 => 12,
            Format::F32x4 => 16,
            Format::U8x4 | Format::Unorm8x4 => 4,
            Format::U16x4 | Format::Unorm16x4 => 8,
        }
    }
}
