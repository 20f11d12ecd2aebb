//! What `inspect` and `validate` find in the data: invalid vectors, and a
//! summary (norm range, zero vectors, the most frequent E8 roots).

use hydron_core::{batch, BatchError, E8Root, Gf8, Gf8Error, E8_ROOT_COUNT};
use serde::Serialize;

/// Every vector of `chunk` that breaks the `Gf8` invariant, with why, in
/// order. The common all-valid case is one SIMD pass.
#[must_use]
pub fn invalid_vectors(chunk: &[Gf8]) -> Vec<(usize, Gf8Error)> {
    let arrays = Gf8::slice_as_arrays(chunk);
    let mut found = Vec::new();
    let mut start = 0;
    while let Err(BatchError { index, error }) = batch::validate(&arrays[start..]) {
        found.push((start + index, error));
        start += index + 1;
    }
    found
}

/// A running summary of the vectors of a file.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Vectors seen.
    pub vectors: u64,
    /// Vectors that break the invariant.
    pub invalid: u64,
    /// Vectors that are exactly zero.
    pub zero: u64,
    /// Smallest norm of a finite non-zero vector.
    pub norm_min: Option<f32>,
    /// Largest norm of a finite non-zero vector.
    pub norm_max: Option<f32>,
    /// How many valid non-zero vectors have each root as nearest.
    roots: Box<[u64; E8_ROOT_COUNT]>,
}

impl Default for Summary {
    fn default() -> Summary {
        Summary {
            vectors: 0,
            invalid: 0,
            zero: 0,
            norm_min: None,
            norm_max: None,
            roots: Box::new([0; E8_ROOT_COUNT]),
        }
    }
}

/// One entry of [`Summary::top_roots`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RootCount {
    /// The root's code, 0..240.
    pub code: u8,
    /// The root, e.g. `(+1, 0, -1, 0, 0, 0, 0, 0)/√2`.
    pub root: String,
    /// How many vectors have it as nearest root.
    pub count: u64,
    /// That count as a percentage of the valid non-zero vectors.
    pub percent: f64,
}

impl Summary {
    /// Adds a chunk; `invalid` holds the indices of its invalid vectors,
    /// in order (from [`invalid_vectors`]).
    pub fn add(&mut self, chunk: &[Gf8], invalid: &[usize]) {
        self.vectors += chunk.len() as u64;
        self.invalid += invalid.len() as u64;
        for v in chunk {
            if v.is_zero() {
                self.zero += 1;
                continue;
            }
            let n = v.norm();
            if n.is_finite() {
                self.norm_min = Some(self.norm_min.map_or(n, |m| m.min(n)));
                self.norm_max = Some(self.norm_max.map_or(n, |m| m.max(n)));
            }
        }
        if invalid.is_empty() {
            for (v, r) in chunk.iter().zip(batch::nearest_roots(chunk)) {
                if !v.is_zero() {
                    self.roots[usize::from(r.code())] += 1;
                }
            }
        } else {
            let mut bad = invalid.iter().peekable();
            for (i, v) in chunk.iter().enumerate() {
                if bad.next_if_eq(&&i).is_some() || v.is_zero() {
                    continue;
                }
                self.roots[usize::from(v.nearest_root().code())] += 1;
            }
        }
    }

    /// The `n` most frequent nearest roots (ties: lower code first), with
    /// a count above zero.
    #[must_use]
    pub fn top_roots(&self, n: usize) -> Vec<RootCount> {
        let total: u64 = self.roots.iter().sum();
        let mut order: Vec<usize> = (0..E8_ROOT_COUNT).filter(|&c| self.roots[c] > 0).collect();
        order.sort_by(|&a, &b| self.roots[b].cmp(&self.roots[a]).then(a.cmp(&b)));
        order
            .into_iter()
            .take(n)
            .filter_map(|c| {
                let root = E8Root::new(u8::try_from(c).ok()?).ok()?;
                Some(RootCount {
                    code: root.code(),
                    root: describe_root(root),
                    count: self.roots[c],
                    percent: 100.0 * self.roots[c] as f64 / total as f64,
                })
            })
            .collect()
    }
}

/// A root in exact form: `(+1, 0, -1, 0, 0, 0, 0, 0)/√2` or
/// `(+1, -1, +1, +1, -1, +1, +1, +1)/√8`.
#[must_use]
pub fn describe_root(root: E8Root) -> String {
    let v = root.to_gf8();
    let signs: Vec<&str> = v
        .as_array()
        .iter()
        .map(|&x| {
            if x > 0.0 {
                "+1"
            } else if x < 0.0 {
                "-1"
            } else {
                "0"
            }
        })
        .collect();
    let scale = if v.as_array().contains(&0.0) {
        "√2"
    } else {
        "√8"
    };
    format!("({})/{scale}", signs.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_vectors_are_all_found_in_order() {
        let one = Gf8::from_scalar(1.0).unwrap();
        let mut chunk = vec![one; 40];
        chunk[3] = Gf8::new_unchecked([f32::NAN; 8]);
        chunk[4] = Gf8::new_unchecked([2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        chunk[39] = Gf8::new_unchecked([0.0, 0.0, 0.0, 0.0, 0.0, f32::INFINITY, 0.0, 0.0]);
        let found = invalid_vectors(&chunk);
        let idx: Vec<usize> = found.iter().map(|f| f.0).collect();
        assert_eq!(idx, [3, 4, 39]);
        assert_eq!(found[0].1, Gf8Error::NotANumber { coordinate: 0 });
        assert!(matches!(
            found[2].1,
            Gf8Error::Infinite { coordinate: 5, .. }
        ));
        assert!(invalid_vectors(&[one, Gf8::ZERO]).is_empty());
    }

    #[test]
    fn summary_counts_roots_zeros_and_norms() {
        let r0 = E8Root::new(0).unwrap().to_gf8();
        let r200 = E8Root::new(200).unwrap().to_gf8();
        let mut s = Summary::default();
        s.add(&[r0, r200, r200, Gf8::ZERO], &[]);
        let bad = Gf8::new_unchecked([3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        s.add(&[bad, r200], &[0]);
        assert_eq!((s.vectors, s.invalid, s.zero), (6, 1, 1));
        assert_eq!(s.norm_max, Some(3.0));
        assert!((s.norm_min.unwrap() - 1.0).abs() < 1e-6);
        let top = s.top_roots(5);
        assert_eq!(top.len(), 2);
        assert_eq!((top[0].code, top[0].count), (200, 3));
        assert_eq!((top[1].code, top[1].count), (0, 1));
        assert_eq!(top[0].percent, 75.0);
        assert_eq!(top[1].root, "(+1, +1, 0, 0, 0, 0, 0, 0)/√2");
    }

    #[test]
    fn half_integer_roots_are_shown_with_their_signs() {
        let s = describe_root(E8Root::new(112).unwrap());
        assert!(s.ends_with(")/√8"), "{s}");
        assert!(!s.contains(" 0"), "{s}");
    }
}
