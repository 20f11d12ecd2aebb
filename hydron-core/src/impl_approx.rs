//! approx traits for Gf8 (to be written).
