//! Nearest point of the full E8 lattice (placeholder until implemented).

/// A point of the E8 lattice, stored exactly as doubled coordinates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct E8Point {
    doubled: [i32; 8],
}
