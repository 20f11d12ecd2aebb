//! serde for Gf8 (to be written).
