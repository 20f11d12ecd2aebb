//! The decoder's table of arrangements for the [`shell`](super::shell)
//! code: for every way the 415 leaders repeat their values (109
//! multiplicity patterns), every distinct arrangement in rank order,
//! packed. Built once, on the first decode (about 2 MB, 502,566 entries):
//! a shape index then costs one table read instead of up to 64 steps.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::shell_tables::{DOUBLED_LEADERS, LEADER_COUNT};

/// The arrangements of every multiplicity pattern, and where each
/// leader's pattern starts.
pub(crate) struct Arrangements {
    /// Entry `base[k] + rank`: the arrangement of rank `rank` of leader
    /// `k`, 3 bits per coordinate (bits `3i … 3i+2` for coordinate `i`),
    /// each the index of the coordinate's value among the leader's
    /// distinct values in ascending order.
    pub(crate) packed: Vec<u32>,
    /// The first entry of each leader's pattern.
    pub(crate) base: [u32; LEADER_COUNT],
}

/// The table, built on first use.
#[inline]
pub(crate) fn arrangements() -> &'static Arrangements {
    static TABLE: OnceLock<Arrangements> = OnceLock::new();
    TABLE.get_or_init(build)
}

/// Every pattern's arrangements in lexicographic order (smaller value
/// indices first), which is the rank order of `shell`.
fn build() -> Arrangements {
    let mut packed = Vec::with_capacity(502_566);
    let mut base = [0u32; LEADER_COUNT];
    let mut seen: HashMap<[u8; 8], u32> = HashMap::new();
    for (k, leader) in DOUBLED_LEADERS.iter().enumerate() {
        // The value index of each coordinate of the leader sorted
        // ascending: the first arrangement.
        let mut first = [0u8; 8];
        let mut d = 0u8;
        for i in 1..8 {
            if leader[7 - i] != leader[8 - i] {
                d += 1;
            }
            first[i] = d;
        }
        base[k] = *seen.entry(first).or_insert_with(|| {
            let start = packed.len() as u32;
            let mut a = first;
            loop {
                packed.push(
                    a.iter()
                        .enumerate()
                        .fold(0u32, |acc, (i, &v)| acc | u32::from(v) << (3 * i)),
                );
                if !next_permutation(&mut a) {
                    break;
                }
            }
            start
        });
    }
    Arrangements { packed, base }
}

/// The next arrangement of `a` in lexicographic order, or `false` (and `a`
/// unchanged) after the last.
fn next_permutation(a: &mut [u8; 8]) -> bool {
    let Some(i) = (0..7).rev().find(|&i| a[i] < a[i + 1]) else {
        return false;
    };
    let j = (i + 1..8)
        .rev()
        .find(|&j| a[j] > a[i])
        .expect("a[i + 1] > a[i]");
    a.swap(i, j);
    a[i + 1..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_pattern_once() {
        let t = arrangements();
        assert_eq!(t.packed.len(), 502_566);
        let mut bases = t.base.to_vec();
        bases.sort_unstable();
        bases.dedup();
        assert_eq!(bases.len(), 109);
    }

    #[test]
    fn next_permutation_walks_a_multiset_in_order() {
        let mut a = [0, 0, 0, 0, 0, 0, 1, 1];
        let mut all = vec![a];
        while next_permutation(&mut a) {
            all.push(a);
        }
        assert_eq!(all.len(), 28);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, [1, 1, 0, 0, 0, 0, 0, 0]);
    }
}
