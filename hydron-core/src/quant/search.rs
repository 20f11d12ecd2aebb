//! Exact top-k search over lattice codes with float queries
//! ([`LatticeQuantizer::search`]): asymmetric distances, computed without
//! decoding the database into memory.
//!
//! # What is computed
//!
//! Each query is padded with zeros to `d_padded` coordinates and rotated
//! once with the quantizer's [`Rotation`](super::Rotation) (in `f64`, then
//! rounded to `f32`). A database vector is its blocks' codewords times its
//! scale, `y = s · (c_0, …, c_{B−1})`, in that rotated space. Every block's
//! codeword is decoded in registers (at 2 bits, an E8P codeword is a row
//! of a 256-entry pattern table, a row of a 128-entry sign table and the ±¼
//! shift: a dozen instructions; at 4 bits, an E8 shell codeword from the
//! shell decoder) and combined at once with the same 8 coordinates of a
//! group of up to 8 queries, so no decoded vector is ever stored:
//!
//! - [`Metric::L2`]: `Σ (q_i − y_i)²`, the squared Euclidean distance
//!   (smaller is better). When `dim` is a multiple of 8 this is the squared
//!   distance to [`decode`](LatticeQuantizer::decode)'s vector. Otherwise it
//!   is the distance between the zero-padded query and the reconstruction
//!   *before* its padding coordinates are dropped: `decode`'s distance plus
//!   the reconstruction's energy in the padding (part of its quantization
//!   error), which the search cannot drop without unrotating every vector.
//! - [`Metric::InnerProduct`]: `Σ q_i y_i` (larger is better), which is the
//!   inner product with `decode`'s vector for every `dim` (the rotation is
//!   orthogonal and the query's padding is zero).
//!
//! In [`ScaleMode::Direction`] the database vector is the *normalized*
//! reconstruction `ĉ / ‖ĉ‖`, where `ĉ = (c_0, …, c_{B−1})` is the blocks'
//! codewords in the padded, rotated space (the scale cancels). Each block
//! is decoded in registers as above, and the kernels accumulate `q·ĉ` for
//! each query of the group and `‖ĉ‖²` once per vector, in `f32` lanes in
//! the same way; then one scalar function, the same on every backend,
//! gives the distance in `f64`, rounded once to `f32`:
//!
//! - [`Metric::InnerProduct`]: `q·ĉ / ‖ĉ‖`;
//! - [`Metric::L2`]: `‖q‖² + 1 − 2 q·ĉ / ‖ĉ‖`, the squared distance to
//!   the unit vector `ĉ / ‖ĉ‖` (`‖q‖²` summed in `f64` over the rotated,
//!   padded query).
//!
//! When `dim` is a multiple of 8, `ĉ / ‖ĉ‖` is (rotated)
//! [`decode`](LatticeQuantizer::decode)'s vector, so these are the inner
//! product with, and the squared distance to, the decoded vector.
//! Otherwise `‖ĉ‖` includes the reconstruction's energy in the padding
//! coordinates, which `decode` drops before it normalizes: the search's
//! `q·ĉ / ‖ĉ‖` is `decode`'s inner product times `ρ = ‖ĉ_dim‖ / ‖ĉ‖ ≤ 1`
//! (`ĉ_dim` the reconstruction without its padding coordinates, `ρ` close
//! to 1 and different for each vector), and the squared distance is
//! `‖q‖² + 1 − 2ρ · (q · decoded)`. A reconstruction of norm 0 would count
//! as the zero vector (inner product 0, squared distance `‖q‖²`), but no
//! code gives one: every E8P codeword and E8 shell point is nonzero.
//!
//! The sums are in `f32`: each of the 8 lanes accumulates its coordinate
//! over the blocks (separate multiplies and adds, no FMA), and the lanes
//! are added in a fixed order. So the scalar and the AVX2 kernels give
//! bit-identical distances, and so does any split across threads. Against
//! the same quantity in `f64` (decode, then compute), the distance is
//! within `1e-5 · (‖q‖² + ‖y‖²)` for L2 and `1e-5 · ‖q‖ ‖y‖` for the inner
//! product (`hydron-core/tests/quant_search.rs` checks it); in direction
//! mode within `1e-5 · (‖q‖² + 1)` and `1e-5 · ‖q‖`
//! (`hydron-core/tests/quant_direction.rs`).
//!
//! # Top-k
//!
//! The result holds, per query, the `min(k, N)` best vectors, best first:
//! exactly the first `min(k, N)` in the order "better distance, then
//! smaller id". So ties are decided by the smaller id, and the answer does
//! not depend on the backend or on the number of threads. There is no
//! padding (no `-1` ids as FAISS gives when `k > N`): each query has
//! [`SearchResult::k`] results. `k = 0` is an error
//! ([`QuantError::ZeroK`]). A NaN distance (only an inner product of
//! vectors near `f32::MAX` can give one) ranks last.
//!
//! # Threads
//!
//! With the `parallel` feature, a search of at least
//! `SEARCH_PARALLEL_MIN_WORK` block-query pairs splits the database into
//! pieces across rayon's pool (through `hydron_core::parallel::run`, so it
//! works in a forked child); each piece keeps its own top-k per query, and
//! the pieces' lists are merged in the order above. The result is the same
//! as on one thread.
//!
//! # Adding a rate
//!
//! The kernels are generic over a block decoder (the crate-private trait
//! `BlockDecoder`): how many bytes a block's code takes and how to turn
//! them into the block's codeword (before the vector's scale).
//! [`LatticeQuantizer::search_codes_with`] picks the decoder from [`bits_per_dim`](LatticeQuantizer::bits_per_dim)
//! in one `match`: another rate is one more arm there and one more
//! `impl BlockDecoder`.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use super::e8p::TABLES;
use super::{LatticeQuantizer, QuantCodes, QuantError, ScaleMode};
use crate::batch::Backend;

/// With the `parallel` feature, a search splits across threads when the
/// database vectors times the queries times the blocks per vector is at
/// least this; each piece gets at least half of it. On one core of the
/// 2-core test host (AVX2, 2 bits) a block-query took about 0.5 ns in
/// batches of 8 or more queries and 1.5 ns for a single query (the ignored
/// `timing` test of `tests/quant_search.rs`, CPU time on a busy machine),
/// so this is 0.13 to 0.4 ms of work, in line with the batch kernels'
/// thresholds (the `parallel` module); not tuned by a crossover benchmark.
///
/// ```
/// assert!(hydron_core::quant::SEARCH_PARALLEL_MIN_WORK >= 1 << 16);
/// ```
#[cfg(feature = "parallel")]
pub const SEARCH_PARALLEL_MIN_WORK: usize = 1 << 18;

/// Database vectors per tile: the kernels run every query group over a
/// tile before the next, so the tile's codes stay in the L1 cache.
pub(crate) const TILE_VECTORS: usize = 64;

/// Queries per group: each group's accumulators stay in registers.
pub(crate) const GROUP: usize = 8;

/// How distances are measured, and which are better.
///
/// ```
/// use hydron_core::quant::{LatticeQuantizer, Metric};
///
/// let q = LatticeQuantizer::new(8, 2, 0)?;
/// let v = [0.3f32, -0.2, 0.1, 0.4, -0.1, 0.2, 0.0, 0.3];
/// let x = [v, v.map(|a| 3.0 * a)].concat(); // v and 3v
/// let codes = q.encode(&x)?;
/// // v is nearest to itself; 3v has the larger inner product with it.
/// assert_eq!(q.search(&codes, &v, 1, Metric::L2)?.ids, [0]);
/// assert_eq!(q.search(&codes, &v, 1, Metric::InnerProduct)?.ids, [1]);
/// # Ok::<(), hydron_core::quant::QuantError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Metric {
    /// Squared Euclidean distance: smaller is better.
    #[default]
    L2,
    /// Inner product: larger is better.
    InnerProduct,
}

/// The result of [`LatticeQuantizer::search`]: `k` results per query, best
/// first, query after query.
///
/// ```
/// use hydron_core::quant::{LatticeQuantizer, Metric};
///
/// let q = LatticeQuantizer::new(16, 2, 3)?;
/// let data: Vec<f32> = (0..16 * 5).map(|i| (i as f32 * 0.37).sin()).collect();
/// let codes = q.encode(&data)?;
/// let found = q.search(&codes, &data[16..32], 10, Metric::L2)?; // vector 1 as query
/// assert_eq!(found.k, 5); // k > N gives N results
/// assert_eq!(found.ids[0], 1);
/// assert_eq!(found.row(0).1.len(), 5);
/// # Ok::<(), hydron_core::quant::QuantError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    /// Results per query: `min(k, N)`.
    pub k: usize,
    /// `queries · k` distances (squared L2, or inner products), best first
    /// within each query.
    pub distances: Vec<f32>,
    /// `queries · k` ids: the vectors' indices in the codes.
    pub ids: Vec<usize>,
}

impl SearchResult {
    /// Query `query`'s distances and ids.
    ///
    /// # Panics
    /// When there is no such query.
    ///
    /// ```
    /// use hydron_core::quant::{LatticeQuantizer, Metric};
    ///
    /// let q = LatticeQuantizer::new(4, 2, 0)?;
    /// let x = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    /// let found = q.search(&q.encode(&x)?, &x[4..], 2, Metric::L2)?;
    /// let (distances, ids) = found.row(1);
    /// assert_eq!(ids[0], 2);
    /// assert!(distances[0] <= distances[1]);
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    #[must_use]
    pub fn row(&self, query: usize) -> (&[f32], &[usize]) {
        let range = query * self.k..(query + 1) * self.k;
        (&self.distances[range.clone()], &self.ids[range])
    }
}

/// One rate's block codes: the arm of the search kernels for that rate.
///
/// The kernels take a block's codeword as `(bits ^ signs) + shift`, lane by
/// lane (`bits` and `signs` are `f32` bit patterns): the AVX2 kernel loads
/// `bits` and `signs` as whole vectors, one `xor` and one `add` away from
/// the codeword. An arm whose codewords have no such form returns the
/// codeword's bits, no signs and a zero shift (adding `+0` changes no value
/// but a `-0`, the same on every backend).
pub(crate) trait BlockDecoder: Copy + Send + Sync {
    /// Bytes per block code.
    const CODE_BYTES: usize;
    /// The codeword of the code in `code` (`CODE_BYTES` bytes), before the
    /// vector's scale, in the form above.
    fn parts(self, code: &[u8]) -> BlockParts;

    /// The codeword itself: lane `i` is `f32::from_bits(bits[i] ^ signs[i]) + shift`.
    #[inline(always)]
    fn decode(self, code: &[u8]) -> [f32; 8] {
        let p = self.parts(code);
        core::array::from_fn(|i| f32::from_bits(p.bits[i] ^ p.signs[i]) + p.shift)
    }
}

/// A block's codeword as the kernels take it ([`BlockDecoder`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockParts {
    /// `f32` bits of the magnitudes, some of them possibly negated already
    /// (or of the whole codeword).
    pub(crate) bits: [u32; 8],
    /// Sign bits to flip (`0x8000_0000` per negative lane; all 0 for an
    /// arm that gives the whole codeword in `bits`).
    pub(crate) signs: [u32; 8],
    /// Added to every lane: the E8P shift, or 0.
    pub(crate) shift: f32,
}

/// The 2-bit arm: 16-bit E8P codes ([`e8p`](super::e8p)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct E8pBlocks;

/// `f32` bits of each pattern's coordinates (`a_i`, positive), with
/// coordinate 7 negated when the pattern's parity (`Σ a_i mod 2`) is odd.
///
/// With [`SIGN_BITS`] this is [`e8p`](super::e8p)'s sign rule without a
/// population count or a parity lookup per block: coordinate 7 is negative
/// when the set sign bits and the parity add up to an odd number, that is
/// when exactly one of the two tables flips it.
static PATTERN_BITS: [[u32; 8]; 256] = {
    let mut out = [[0u32; 8]; 256];
    let mut p = 0;
    while p < 256 {
        let mut i = 0;
        while i < 8 {
            out[p][i] = (TABLES.doubled[p][i] as f32 * 0.5).to_bits();
            i += 1;
        }
        if TABLES.parity[p] == 1 {
            out[p][7] ^= 0x8000_0000;
        }
        p += 1;
    }
    out
};

/// The sign bits to flip for a code's 7 sign bits (bits 0–6): coordinate
/// `i < 7` when sign bit `i` is set, and coordinate 7 when an odd number
/// of them are (see [`PATTERN_BITS`]).
static SIGN_BITS: [[u32; 8]; 128] = {
    let mut out = [[0u32; 8]; 128];
    let mut m = 0;
    while m < 128 {
        let mut i = 0;
        while i < 7 {
            if m >> i & 1 == 1 {
                out[m][i] = 0x8000_0000;
            }
            i += 1;
        }
        if (m as u32).count_ones() % 2 == 1 {
            out[m][7] = 0x8000_0000;
        }
        m += 1;
    }
    out
};

impl BlockDecoder for E8pBlocks {
    const CODE_BYTES: usize = 2;

    /// [`e8p::decode`](super::e8p::decode) from tables: the same values bit
    /// for bit (every step is exact).
    #[inline(always)]
    fn parts(self, code: &[u8]) -> BlockParts {
        // One 16-bit load (indexing the two bytes apart compiled to two
        // byte loads and a merge in every block).
        let code = match code.first_chunk::<2>() {
            Some(b) => u16::from_le_bytes(*b),
            None => 0,
        };
        let index = usize::from((code >> 7) & 0xFF);
        let signs = usize::from(code & 0x7F);
        BlockParts {
            bits: PATTERN_BITS[index],
            signs: SIGN_BITS[signs],
            // ±¼ from the shift bit without a branch (it is random data):
            // the bits of 0.25 with the sign bit of the code's bit 15.
            shift: f32::from_bits(0x3E80_0000 | (u32::from(code & 0x8000) << 16)),
        }
    }
}

/// The 4-bit arm: 32-bit E8 shell codes ([`shell`](super::shell)), checked
/// beforehand ([`LatticeQuantizer::check_shell_codes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShellBlocks;

impl BlockDecoder for ShellBlocks {
    const CODE_BYTES: usize = 4;

    /// [`shell::decode`](super::shell::decode), the whole codeword in `bits`.
    #[inline(always)]
    fn parts(self, code: &[u8]) -> BlockParts {
        let c = super::shell::decode(u32::from_le_bytes([code[0], code[1], code[2], code[3]]));
        BlockParts {
            bits: c.map(f32::to_bits),
            signs: [0; 8],
            shift: 0.0,
        }
    }
}

/// What every piece of one search shares.
pub(crate) struct Job<'a> {
    /// Blocks per vector.
    pub(crate) blocks: usize,
    /// Code bytes per vector.
    pub(crate) code_size: usize,
    /// The rotated, padded queries, `queries · 8 · blocks` numbers.
    pub(crate) queries: &'a [f32],
    /// The number of queries.
    pub(crate) count: usize,
    /// The scale of every vector in unit mode, 1 in direction mode (else
    /// `None`: per vector).
    pub(crate) unit_scale: Option<f32>,
    /// In direction mode ([`ScaleMode::Direction`]), each query's `‖q‖²`
    /// (the kernels then measure the normalized reconstruction); else
    /// empty.
    pub(crate) query_norms: &'a [f64],
    /// Results per query.
    pub(crate) k: usize,
    /// The metric.
    pub(crate) metric: Metric,
}

impl Job<'_> {
    /// The scale of vector `v` of a piece whose scales are `scales`.
    #[inline(always)]
    pub(crate) fn scale(&self, scales: &[f32], v: usize) -> f32 {
        self.unit_scale.unwrap_or_else(|| scales[v])
    }

    /// Query `q`, rotated and padded.
    #[inline(always)]
    pub(crate) fn query(&self, q: usize) -> &[f32] {
        let padded = 8 * self.blocks;
        &self.queries[q * padded..(q + 1) * padded]
    }

    /// Whether the search measures the normalized reconstruction
    /// ([`ScaleMode::Direction`]).
    #[inline(always)]
    pub(crate) fn direction(&self) -> bool {
        !self.query_norms.is_empty()
    }

    /// Query `q`'s distance in direction mode from the kernel's sums
    /// `dot = q·ĉ` and `norm2 = ‖ĉ‖²`: the one scalar step after the
    /// accumulation, shared by every backend.
    #[inline(always)]
    pub(crate) fn direction_distance(&self, q: usize, dot: f32, norm2: f32) -> f32 {
        super::direction::distance(self.metric == Metric::L2, dot, norm2, self.query_norms[q])
    }
}

/// The sum of 8 lanes, in the fixed order both backends use.
#[inline(always)]
pub(crate) fn lane_sum(a: [f32; 8]) -> f32 {
    ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

/// A candidate: its ranking key (smaller is better: the L2 distance, or
/// minus the inner product; NaN made +∞, −0 made +0), its id, its distance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    key: f32,
    id: usize,
    distance: f32,
}

impl Entry {
    #[inline(always)]
    fn new(metric: Metric, distance: f32, id: usize) -> Entry {
        let key = match metric {
            Metric::L2 => distance,
            Metric::InnerProduct => -distance,
        };
        let key = if key.is_nan() {
            f32::INFINITY
        } else {
            key + 0.0
        };
        Entry { key, id, distance }
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Worse is greater: larger key, then larger id.
    fn cmp(&self, other: &Entry) -> Ordering {
        self.key.total_cmp(&other.key).then(self.id.cmp(&other.id))
    }
}

/// The best `k` candidates seen so far for one query (a max-heap whose
/// top is the worst kept).
#[derive(Clone, Debug)]
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
    /// The worst kept key once `k` are kept (else +∞, so all are taken).
    bar: f32,
}

impl TopK {
    fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(1 << 16) + 1),
            bar: f32::INFINITY,
        }
    }

    /// Offers vector `id`, which is larger than every id offered before.
    #[inline(always)]
    pub(crate) fn offer(&mut self, metric: Metric, distance: f32, id: usize) {
        let e = Entry::new(metric, distance, id);
        // A key equal to the worst kept loses on its larger id.
        if self.heap.len() == self.k && e.key >= self.bar {
            return;
        }
        self.push(e);
    }

    /// Adds `e` (any id) if it is among the best `k`.
    fn push(&mut self, e: Entry) {
        if self.heap.len() < self.k {
            self.heap.push(e);
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if e < *worst {
                *worst = e;
            }
        }
        if self.heap.len() == self.k {
            self.bar = self.heap.peek().map_or(f32::INFINITY, |w| w.key);
        }
    }

    /// The kept candidates, best first.
    fn into_sorted(self) -> Vec<Entry> {
        self.heap.into_sorted_vec()
    }
}

/// The scalar kernel: every vector of a piece (`codes`, `scales`; ids from
/// `first`) against every query, into `tops`.
fn scan_scalar<D: BlockDecoder>(
    decoder: D,
    job: &Job<'_>,
    codes: &[u8],
    scales: &[f32],
    first: usize,
    tops: &mut [TopK],
) {
    let n = codes.len() / job.code_size;
    for tile in (0..n).step_by(TILE_VECTORS) {
        let end = (tile + TILE_VECTORS).min(n);
        let mut q = 0;
        while q < job.count {
            let g = (job.count - q).min(GROUP);
            for v in tile..end {
                let code = &codes[v * job.code_size..(v + 1) * job.code_size];
                let scale = job.scale(scales, v);
                let mut d = [0.0f32; GROUP];
                match (job.direction(), job.metric) {
                    (true, _) => {
                        group_scalar::<D, false, true>(decoder, job, code, scale, q, g, &mut d);
                    }
                    (false, Metric::L2) => {
                        group_scalar::<D, true, false>(decoder, job, code, scale, q, g, &mut d);
                    }
                    (false, Metric::InnerProduct) => {
                        group_scalar::<D, false, false>(decoder, job, code, scale, q, g, &mut d);
                    }
                }
                for (j, &dist) in d[..g].iter().enumerate() {
                    tops[q + j].offer(job.metric, dist, first + v);
                }
            }
            q += g;
        }
    }
}

/// One vector against queries `q0..q0 + g` (`g ≤ GROUP`), on the scalar
/// path: `L2` squared distances, or inner products; with `DIR` (direction
/// mode, `L2` false) the inner products and the vector's `‖ĉ‖²`, made
/// distances by [`Job::direction_distance`].
#[inline(always)]
fn group_scalar<D: BlockDecoder, const L2: bool, const DIR: bool>(
    decoder: D,
    job: &Job<'_>,
    code: &[u8],
    scale: f32,
    q0: usize,
    g: usize,
    out: &mut [f32; GROUP],
) {
    let mut acc = [[0.0f32; 8]; GROUP];
    let mut norm = [0.0f32; 8];
    for (b, bytes) in code.chunks_exact(D::CODE_BYTES).enumerate() {
        let c = decoder.decode(bytes);
        let y: [f32; 8] = core::array::from_fn(|i| c[i] * scale);
        if DIR {
            for i in 0..8 {
                norm[i] += c[i] * c[i];
            }
        }
        for (j, acc) in acc[..g].iter_mut().enumerate() {
            let q = &job.query(q0 + j)[8 * b..8 * b + 8];
            for i in 0..8 {
                if L2 {
                    let d = q[i] - y[i];
                    acc[i] += d * d;
                } else {
                    acc[i] += q[i] * y[i];
                }
            }
        }
    }
    if DIR {
        let norm2 = lane_sum(norm);
        for j in 0..g {
            out[j] = job.direction_distance(q0 + j, lane_sum(acc[j]), norm2);
        }
        return;
    }
    for j in 0..g {
        out[j] = lane_sum(acc[j]);
    }
}

/// Which kernel a [`Backend`] resolves to for the search, in this build on
/// this CPU.
#[derive(Clone, Copy)]
enum Kernel {
    Scalar,
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    Avx2(super::e8p_avx2::Avx2),
}

impl Kernel {
    fn of(backend: Backend) -> Kernel {
        match backend {
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Backend::Avx2Fma => {
                super::e8p_avx2::Avx2::detect().map_or(Kernel::Scalar, Kernel::Avx2)
            }
            _ => Kernel::Scalar,
        }
    }

    fn scan<D: BlockDecoder>(
        self,
        decoder: D,
        job: &Job<'_>,
        codes: &[u8],
        scales: &[f32],
        first: usize,
        tops: &mut [TopK],
    ) {
        match self {
            Kernel::Scalar => scan_scalar(decoder, job, codes, scales, first, tops),
            #[cfg(all(feature = "simd", target_arch = "x86_64"))]
            Kernel::Avx2(token) => {
                super::search_avx2::scan(token, decoder, job, codes, scales, first, tops);
            }
        }
    }
}

impl LatticeQuantizer {
    /// The `k` nearest vectors of `codes` to each query (`queries · dim`
    /// numbers, row after row), by `metric`, with asymmetric distances
    /// (float queries against the codes), on the best backend and, with
    /// the `parallel` feature, on all cores. See the
    /// [module docs](crate::quant::search) for what is computed, the
    /// order of ties, and `k > N`.
    ///
    /// # Errors
    /// [`QuantError::ZeroK`] for `k = 0`; [`QuantError::InputLength`] when
    /// the queries are not whole vectors; [`QuantError::QueryNotANumber`]
    /// or [`QuantError::QueryInfinite`] naming the first bad query and
    /// coordinate; as [`decode`](Self::decode) for codes and scales that
    /// disagree with this quantizer.
    ///
    /// ```
    /// use hydron_core::quant::{LatticeQuantizer, Metric};
    ///
    /// let q = LatticeQuantizer::new(32, 2, 11)?;
    /// let data: Vec<f32> = (0..32 * 100).map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0).collect();
    /// let codes = q.encode(&data)?;
    /// let queries = &data[32 * 42..32 * 44]; // vectors 42 and 43
    /// let found = q.search(&codes, queries, 3, Metric::L2)?;
    /// assert_eq!((found.ids[0], found.ids[3]), (42, 43));
    /// assert!(found.distances[0] <= found.distances[1]);
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    pub fn search(
        &self,
        codes: &QuantCodes,
        queries: &[f32],
        k: usize,
        metric: Metric,
    ) -> Result<SearchResult, QuantError> {
        self.search_codes(&codes.codes, &codes.scales, queries, k, metric)
    }

    /// [`search`](Self::search) on codes and scales given apart (as
    /// [`decode_into`](Self::decode_into) takes them).
    ///
    /// # Errors
    /// As [`search`](Self::search).
    ///
    /// ```
    /// use hydron_core::quant::{LatticeQuantizer, Metric};
    ///
    /// let q = LatticeQuantizer::new(8, 2, 0)?;
    /// let codes = q.encode(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
    /// let found = q.search_codes(&codes.codes, &codes.scales, &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1, Metric::InnerProduct)?;
    /// assert_eq!(found.ids, [1]);
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    pub fn search_codes(
        &self,
        codes: &[u8],
        scales: &[f32],
        queries: &[f32],
        k: usize,
        metric: Metric,
    ) -> Result<SearchResult, QuantError> {
        self.search_codes_with(Backend::Avx2Fma, codes, scales, queries, k, metric)
    }

    /// [`search_codes`](Self::search_codes) on a given backend:
    /// [`Backend::Avx2Fma`] runs the AVX2 kernel when this build (feature
    /// `simd`, x86-64) and CPU have AVX2, every other backend (or an
    /// unavailable one) the scalar kernel. Every backend gives the same
    /// result, bit for bit.
    ///
    /// # Errors
    /// As [`search`](Self::search).
    ///
    /// ```
    /// use hydron_core::batch::Backend;
    /// use hydron_core::quant::{LatticeQuantizer, Metric};
    ///
    /// let q = LatticeQuantizer::new(24, 2, 5)?;
    /// let data: Vec<f32> = (0..24 * 50).map(|i| (i as f32 * 0.61).cos()).collect();
    /// let codes = q.encode(&data)?;
    /// let scalar = q.search_codes_with(Backend::Scalar, &codes.codes, &codes.scales, &data[..48], 7, Metric::L2)?;
    /// let best = q.search_codes_with(Backend::Avx2Fma, &codes.codes, &codes.scales, &data[..48], 7, Metric::L2)?;
    /// assert_eq!(scalar, best);
    /// # Ok::<(), hydron_core::quant::QuantError>(())
    /// ```
    pub fn search_codes_with(
        &self,
        backend: Backend,
        codes: &[u8],
        scales: &[f32],
        queries: &[f32],
        k: usize,
        metric: Metric,
    ) -> Result<SearchResult, QuantError> {
        if k == 0 {
            return Err(QuantError::ZeroK);
        }
        let n = self.checked_codes(codes, scales)?;
        let rotated = self.rotated_queries(queries)?;
        let direction = self.scale_mode() == ScaleMode::Direction;
        let query_norms: Vec<f64> = if direction {
            rotated
                .chunks_exact(self.padded_dim())
                .map(|x| x.iter().map(|&v| f64::from(v) * f64::from(v)).sum())
                .collect()
        } else {
            Vec::new()
        };
        let job = Job {
            blocks: self.blocks(),
            code_size: self.code_size(),
            queries: &rotated,
            count: rotated.len() / self.padded_dim(),
            unit_scale: match self.scale_mode() {
                ScaleMode::Unit => Some(self.unit_scale() as f32),
                // The codewords as they are: the distance normalizes.
                ScaleMode::Direction => Some(1.0),
                _ => None,
            },
            query_norms: &query_norms,
            k: k.min(n),
            metric,
        };
        let kernel = Kernel::of(backend);
        // The arm of each rate: its block decoder.
        let tops = match self.bits_per_dim() {
            2 => run(kernel, E8pBlocks, &job, codes, scales),
            4 => {
                self.check_shell_codes(codes)?;
                run(kernel, ShellBlocks, &job, codes, scales)
            }
            bits => return Err(QuantError::UnsupportedBits { bits }),
        };
        let mut out = SearchResult {
            k: job.k,
            distances: Vec::with_capacity(job.count * job.k),
            ids: Vec::with_capacity(job.count * job.k),
        };
        for top in tops {
            for e in top {
                out.distances.push(e.distance);
                out.ids.push(e.id);
            }
        }
        Ok(out)
    }

    /// The number of vectors in `codes`, checked against `scales` as
    /// [`decode_into`](Self::decode_into) checks them.
    fn checked_codes(&self, codes: &[u8], scales: &[f32]) -> Result<usize, QuantError> {
        let code_size = self.code_size();
        if !codes.len().is_multiple_of(code_size) {
            return Err(QuantError::CodesLength {
                len: codes.len(),
                code_size,
            });
        }
        let n = codes.len() / code_size;
        let expected = if self.scale_mode() == ScaleMode::PerVector {
            n
        } else {
            0
        };
        if scales.len() != expected {
            return Err(QuantError::ScaleCount {
                scales: scales.len(),
                vectors: n,
                expected,
            });
        }
        if let Some((vector, &value)) = scales
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
        {
            return Err(QuantError::InvalidScale { vector, value });
        }
        Ok(n)
    }

    /// The queries checked, padded and rotated: `8 · blocks` numbers each.
    fn rotated_queries(&self, queries: &[f32]) -> Result<Vec<f32>, QuantError> {
        let dim = self.dim();
        if !queries.len().is_multiple_of(dim) {
            return Err(QuantError::InputLength {
                len: queries.len(),
                dim,
            });
        }
        for (query, x) in queries.chunks_exact(dim).enumerate() {
            for (coordinate, &value) in x.iter().enumerate() {
                if value.is_nan() {
                    return Err(QuantError::QueryNotANumber { query, coordinate });
                }
                if value.is_infinite() {
                    return Err(QuantError::QueryInfinite {
                        query,
                        coordinate,
                        value,
                    });
                }
            }
        }
        let padded = self.padded_dim();
        let count = queries.len() / dim;
        let mut out = vec![0.0f32; count * padded];
        let mut work = vec![0.0f64; padded];
        for (x, row) in queries.chunks_exact(dim).zip(out.chunks_exact_mut(padded)) {
            for (w, &v) in work.iter_mut().zip(x) {
                *w = f64::from(v);
            }
            work[dim..].fill(0.0);
            if let Some(r) = self.rotation() {
                r.rotate(&mut work);
            }
            for (o, &w) in row.iter_mut().zip(&work) {
                // Saturated: a rotated coordinate can exceed f32::MAX by √d.
                *o = w.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32;
            }
        }
        Ok(out)
    }
}

/// Runs the search of `job` over `codes` (checked) with `decoder`: the
/// top-k lists of every query, best first.
fn run<D: BlockDecoder>(
    kernel: Kernel,
    decoder: D,
    job: &Job<'_>,
    codes: &[u8],
    scales: &[f32],
) -> Vec<Vec<Entry>> {
    if job.k == 0 || job.count == 0 {
        return vec![Vec::new(); job.count];
    }
    #[cfg(feature = "parallel")]
    {
        let n = codes.len() / job.code_size;
        let work = n.saturating_mul(job.count).saturating_mul(job.blocks);
        if work >= SEARCH_PARALLEL_MIN_WORK {
            let threads = rayon::current_num_threads();
            if threads > 1 {
                let per_vector = job.count * job.blocks;
                let min_piece = (SEARCH_PARALLEL_MIN_WORK / 2).div_ceil(per_vector);
                let piece = n.div_ceil(4 * threads).max(min_piece).max(1);
                return run_split(kernel, decoder, job, codes, scales, piece);
            }
        }
    }
    let mut tops = vec![TopK::new(job.k); job.count];
    kernel.scan(decoder, job, codes, scales, 0, &mut tops);
    tops.into_iter().map(TopK::into_sorted).collect()
}

/// [`run`] in pieces of `piece` vectors across rayon's pool, merged.
#[cfg(feature = "parallel")]
fn run_split<D: BlockDecoder>(
    kernel: Kernel,
    decoder: D,
    job: &Job<'_>,
    codes: &[u8],
    scales: &[f32],
    piece: usize,
) -> Vec<Vec<Entry>> {
    use rayon::prelude::*;
    let parts: Vec<Vec<TopK>> = crate::parallel::run(|| {
        codes
            .par_chunks(piece * job.code_size)
            .enumerate()
            .map(|(i, c)| {
                let first = i * piece;
                let s = if scales.is_empty() {
                    scales
                } else {
                    &scales[first..first + c.len() / job.code_size]
                };
                let mut tops = vec![TopK::new(job.k); job.count];
                kernel.scan(decoder, job, c, s, first, &mut tops);
                tops
            })
            .collect()
    });
    let mut merged = vec![TopK::new(job.k); job.count];
    for part in parts {
        for (m, top) in merged.iter_mut().zip(part) {
            for e in top.heap {
                m.push(e);
            }
        }
    }
    merged.into_iter().map(TopK::into_sorted).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_decoder_is_e8p_decode() {
        for code in 0..=u16::MAX {
            let fast = E8pBlocks.decode(&code.to_le_bytes());
            let slow = super::super::e8p::decode(code);
            assert_eq!(
                fast.map(f32::to_bits),
                slow.map(f32::to_bits),
                "{code:#06x}"
            );
        }
    }

    #[test]
    fn top_k_keeps_the_best_and_breaks_ties_by_id() {
        let mut top = TopK::new(3);
        for (id, d) in [5.0, 1.0, 3.0, 1.0, 2.0, 1.0, 0.5].into_iter().enumerate() {
            top.offer(Metric::L2, d, id);
        }
        let kept: Vec<_> = top.into_sorted().iter().map(|e| e.id).collect();
        assert_eq!(kept, [6, 1, 3]);
        let mut top = TopK::new(2);
        for (id, d) in [f32::NAN, -0.0, 0.0, 4.0].into_iter().enumerate() {
            top.offer(Metric::InnerProduct, d, id);
        }
        let kept: Vec<_> = top.into_sorted().iter().map(|e| e.id).collect();
        assert_eq!(kept, [3, 1]);
    }
}
