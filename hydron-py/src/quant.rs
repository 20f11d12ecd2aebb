//! The lattice quantizer (`hydron_core::quant`) on numpy arrays:
//! `LatticeQuantizer` (encode, decode, search) and `LatticeCodes` (the
//! codes, the scales and the parameters that read them).
//!
//! Every call releases the GIL around the Rust work, whatever the size of
//! its input: encoding one 384-dim vector takes microseconds, far more than
//! the release (see `gil`).

use hydron_core::quant::{LatticeQuantizer as Quantizer, Metric, ScaleMode};
use numpy::ndarray::Array2;
use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::arrays::{refuse_masked, rows, shape_text};
use crate::errors::quant_error;

/// The quantizer of `dim`, `bits`, `seed`, `rotate` (None: on when
/// `dim > 8`) and scale mode, or the error.
fn build(
    py: Python<'_>,
    dim: usize,
    bits: u32,
    seed: u64,
    rotate: Option<bool>,
    mode: ScaleMode,
) -> PyResult<Quantizer> {
    let q = Quantizer::new(dim, bits, seed).map_err(|e| quant_error(py, e))?;
    let q = match rotate {
        Some(r) => q.with_rotation(r),
        None => q,
    };
    Ok(q.with_scale(mode))
}

/// A scale mode's Python name (`"vector"`, `"unit"`, `"direction"`) as
/// the mode.
fn parse_scale(scale: &str) -> PyResult<ScaleMode> {
    match scale {
        "vector" => Ok(ScaleMode::PerVector),
        "unit" => Ok(ScaleMode::Unit),
        "direction" => Ok(ScaleMode::Direction),
        other => Err(PyValueError::new_err(format!(
            "scale: expected \"vector\" (one float32 scale per vector), \"unit\" (none: unit \
             vectors) or \"direction\" (none: unit vectors, decoded to norm 1), got {other:?}"
        ))),
    }
}

/// The name of a scale mode in Python.
fn scale_name(q: &Quantizer) -> &'static str {
    match q.scale_mode() {
        ScaleMode::Unit => "unit",
        ScaleMode::Direction => "direction",
        _ => "vector",
    }
}

/// The parameters in `repr` form.
fn params(q: &Quantizer) -> String {
    format!(
        "dim={}, bits={}, seed={}, rotate={}, scale={:?}",
        q.dim(),
        q.bits_per_dim(),
        q.seed(),
        if q.rotation().is_some() {
            "True"
        } else {
            "False"
        },
        scale_name(q)
    )
}

/// A lattice quantizer: float vectors of any dimension to compact codes,
/// with no training.
///
/// Each vector is padded with zeros to a multiple of 8 coordinates, rotated
/// (random signs and a fast Walsh–Hadamard transform drawn from ``seed``;
/// ``rotate=None`` turns it on when ``dim > 8``), divided by its scale,
/// and each 8-dim block is given a code: at ``bits=2`` bits per
/// coordinate, the 16-bit code of its nearest point of the E8P codebook
/// (2^16 points of the E8 lattice + 1/4, exact); at ``bits=4``, a 32-bit
/// code of a point of an E8 shell and a gain. ``code_size`` is the bytes
/// per vector. With ``scale="vector"`` (the default) each vector's scale
/// is one float32 stored beside its codes, so vectors of any norm work;
/// ``scale="unit"`` stores none and takes every vector to have norm 1;
/// ``scale="direction"`` encodes as ``"unit"`` (the same codes) but
/// ``decode`` divides each vector by its norm (norm 1; a zero vector
/// stays 0) and ``search`` measures those unit vectors: for data known to
/// be unit, or whose direction is all that matters (better recall; NMSE
/// on unit data a little different). Other rates raise ``HydronError``.
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> q = hydron.LatticeQuantizer(384)
/// >>> q.code_size, q.rotate
/// (96, True)
/// >>> x = np.random.default_rng(0).standard_normal((1000, 384), dtype=np.float32)
/// >>> codes = q.encode(x)
/// >>> codes.codes.shape, codes.scales.shape
/// ((1000, 96), (1000,))
/// >>> y = q.decode(codes)
/// >>> bool(((x - y) ** 2).sum() / (x ** 2).sum() < 0.1)
/// True
/// >>> distances, ids = q.search(codes, x[:5], k=3)
/// >>> ids[:, 0].tolist()
/// [0, 1, 2, 3, 4]
#[pyclass(module = "hydron._hydron", name = "LatticeQuantizer", frozen)]
pub struct LatticeQuantizer {
    inner: Quantizer,
}

#[pymethods]
impl LatticeQuantizer {
    #[new]
    #[pyo3(signature = (dim, bits = 2, seed = 0, rotate = None, *, scale = "vector"))]
    fn new(
        py: Python<'_>,
        dim: usize,
        bits: u32,
        seed: u64,
        rotate: Option<bool>,
        scale: &str,
    ) -> PyResult<LatticeQuantizer> {
        let mode = parse_scale(scale)?;
        Ok(LatticeQuantizer {
            inner: build(py, dim, bits, seed, rotate, mode)?,
        })
    }

    /// The dimension of the vectors.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// Bits per coordinate (of the vector padded to a multiple of 8).
    #[getter]
    fn bits(&self) -> u32 {
        self.inner.bits_per_dim()
    }

    /// The seed of the rotation.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// Whether the vectors are rotated before they are quantized.
    #[getter]
    fn rotate(&self) -> bool {
        self.inner.rotation().is_some()
    }

    /// ``"vector"`` (one float32 scale per vector), ``"unit"`` (none) or
    /// ``"direction"`` (none; decoded vectors of norm 1).
    #[getter]
    fn scale(&self) -> &'static str {
        scale_name(&self.inner)
    }

    /// Code bytes per vector (the scale is apart).
    #[getter]
    fn code_size(&self) -> usize {
        self.inner.code_size()
    }

    fn __repr__(&self) -> String {
        format!("hydron.LatticeQuantizer({})", params(&self.inner))
    }

    /// Encode vectors: ``x`` is ``(N, dim)``, or one ``(dim,)`` vector (one
    /// row of codes), of any real numbers (converted as
    /// ``np.asarray(x, dtype=np.float32)``). Returns a
    /// :class:`LatticeCodes`. A NaN or infinite coordinate raises
    /// ``InvalidVectorError`` (``.index``, ``.coordinate``).
    fn encode<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<LatticeCodes> {
        let (x, _) = rows(x, self.inner.dim(), "x")?;
        let flat = x.as_slice()?;
        let q = &self.inner;
        let out = py
            .detach(|| q.encode(flat))
            .map_err(|e| quant_error(py, e))?;
        let n = flat.len() / q.dim();
        let codes = Array2::from_shape_vec((n, q.code_size()), out.codes)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let scales = (q.scale_mode() == ScaleMode::PerVector)
            .then(|| PyArray1::from_vec(py, out.scales).unbind());
        Ok(LatticeCodes {
            codes: PyArray2::from_owned_array(py, codes).unbind(),
            scales,
            quantizer: q.clone(),
        })
    }

    /// Decode codes made by a quantizer of the same parameters: a new
    /// ``(N, dim)`` float32 array.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        codes: &LatticeCodes,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        self.check(codes)?;
        let c = codes.codes.bind(py).try_readonly()?;
        let s = codes
            .scales
            .as_ref()
            .map(|s| s.bind(py).try_readonly())
            .transpose()?;
        let (c, s) = (
            c.as_slice()?,
            s.as_ref().map_or(Ok(&[][..]), |s| s.as_slice())?,
        );
        let q = &self.inner;
        let n = c.len() / q.code_size();
        // Fresh pages, advised for huge pages: 4 KiB faults cost more than
        // the decoding.
        let mut out: Vec<f32> = hydron_core::huge::zeroed_vec(n * q.dim());
        py.detach(|| q.decode_into(c, s, &mut out))
            .map_err(|e| quant_error(py, e))?;
        let array = Array2::from_shape_vec((n, q.dim()), out)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyArray2::from_owned_array(py, array))
    }

    /// The ``k`` nearest of ``codes`` to each query: ``(distances, ids)``,
    /// float32 and int64 arrays of shape ``(Q, min(k, N))`` for ``(Q, dim)``
    /// queries (``(min(k, N),)`` for one ``(dim,)`` query), best first.
    /// ``metric="l2"``: squared Euclidean distances, smallest first;
    /// ``"ip"``: inner products, largest first. Equal distances rank by the
    /// smaller id. Distances are asymmetric: the float queries against each
    /// code, decoded in registers (never the whole database), in float32.
    /// For ``dim`` a multiple of 8, L2 is the distance to ``decode``'s
    /// vector; otherwise it also counts the reconstruction's part in the
    /// padding coordinates. With ``scale="direction"`` each vector is its
    /// reconstruction divided by its norm (padding coordinates included):
    /// ``ip`` is ``q·ĉ/‖ĉ‖`` and ``l2`` is ``‖q‖² + 1 − 2 q·ĉ/‖ĉ‖``, which
    /// for ``dim`` a multiple of 8 are those of ``decode``'s vector.
    /// ``k`` must be at least 1.
    #[pyo3(signature = (codes, queries, k, metric = "l2"))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        codes: &LatticeCodes,
        queries: &Bound<'py, PyAny>,
        k: usize,
        metric: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let metric = match metric {
            "l2" => Metric::L2,
            "ip" => Metric::InnerProduct,
            other => {
                return Err(PyValueError::new_err(format!(
                    "metric: expected \"l2\" or \"ip\", got {other:?}"
                )))
            }
        };
        self.check(codes)?;
        let (queries, single) = rows(queries, self.inner.dim(), "queries")?;
        let c = codes.codes.bind(py).try_readonly()?;
        let s = codes
            .scales
            .as_ref()
            .map(|s| s.bind(py).try_readonly())
            .transpose()?;
        let (c, s) = (
            c.as_slice()?,
            s.as_ref().map_or(Ok(&[][..]), |s| s.as_slice())?,
        );
        let flat = queries.as_slice()?;
        let q = &self.inner;
        let found = py
            .detach(|| q.search_codes(c, s, flat, k, metric))
            .map_err(|e| quant_error(py, e))?;
        let count = flat.len() / q.dim();
        let ids: Vec<i64> = found
            .ids
            .iter()
            .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
            .collect();
        let distances = Array2::from_shape_vec((count, found.k), found.distances)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let ids = Array2::from_shape_vec((count, found.k), ids)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let distances = PyArray2::from_owned_array(py, distances).into_any();
        let ids = PyArray2::from_owned_array(py, ids).into_any();
        if single {
            Ok((distances.get_item(0)?, ids.get_item(0)?))
        } else {
            Ok((distances, ids))
        }
    }
}

impl LatticeQuantizer {
    /// A `ValueError` unless `codes` were made with this quantizer's
    /// parameters.
    fn check(&self, codes: &LatticeCodes) -> PyResult<()> {
        if codes.quantizer == self.inner {
            return Ok(());
        }
        Err(PyValueError::new_err(format!(
            "the codes were made by a quantizer of other parameters ({}) than this one ({})",
            params(&codes.quantizer),
            params(&self.inner)
        )))
    }
}

/// Codes of a :class:`LatticeQuantizer`: ``codes``, a ``(N, code_size)``
/// uint8 array; ``scales``, a ``(N,)`` float32 array (``None`` when
/// ``scale`` is ``"unit"`` or ``"direction"``); and the parameters of the
/// quantizer that reads them (``dim``, ``bits``, ``seed``, ``rotate``,
/// ``scale``; ``quantizer`` builds it).
///
/// ``LatticeCodes(codes, scales, *, dim, bits=2, seed=0, rotate=None,
/// scale=None)`` makes them from arrays (saved ones, say): ``codes`` must
/// be a uint8 array of shape ``(N, code_size)``, ``scales`` ``None`` (unit
/// or direction mode) or ``N`` finite non-negative numbers (converted to
/// float32). ``scale=None`` is ``"vector"`` with scales and ``"unit"``
/// without; ``"direction"`` needs ``scales=None``. C-contiguous arrays of
/// the right dtype are kept as they are, not copied.
///
/// Examples
/// --------
/// >>> import numpy as np, hydron
/// >>> q = hydron.LatticeQuantizer(12, seed=7)
/// >>> c = q.encode(np.ones((2, 12)))
/// >>> len(c), c.codes.dtype, c.scales.dtype
/// (2, dtype('uint8'), dtype('float32'))
/// >>> again = hydron.LatticeCodes(c.codes, c.scales, dim=12, seed=7)
/// >>> bool((q.decode(again) == q.decode(c)).all())
/// True
#[pyclass(module = "hydron._hydron", name = "LatticeCodes", frozen)]
pub struct LatticeCodes {
    codes: Py<PyArray2<u8>>,
    scales: Option<Py<PyArray1<f32>>>,
    quantizer: Quantizer,
}

#[pymethods]
impl LatticeCodes {
    #[new]
    #[pyo3(signature = (codes, scales, *, dim, bits = 2, seed = 0, rotate = None, scale = None))]
    #[allow(clippy::too_many_arguments)] // the Python signature
    fn new(
        py: Python<'_>,
        codes: &Bound<'_, PyAny>,
        scales: Option<&Bound<'_, PyAny>>,
        dim: usize,
        bits: u32,
        seed: u64,
        rotate: Option<bool>,
        scale: Option<&str>,
    ) -> PyResult<LatticeCodes> {
        let mode = match scale {
            None if scales.is_some() => ScaleMode::PerVector,
            None => ScaleMode::Unit,
            Some(name) => parse_scale(name)?,
        };
        match (mode == ScaleMode::PerVector, scales.is_some()) {
            (true, false) => {
                return Err(PyValueError::new_err(
                    "scales: scale=\"vector\" needs one scale per vector, got None",
                ))
            }
            (false, true) => {
                return Err(PyValueError::new_err(format!(
                    "scales: scale={:?} stores no scales; pass scales=None",
                    scale.unwrap_or("unit")
                )))
            }
            _ => {}
        }
        let q = build(py, dim, bits, seed, rotate, mode)?;
        refuse_masked(codes, "codes")?;
        let np = py.import("numpy")?;
        let arr = np.getattr("asarray")?.call1((codes,))?;
        let arr = arr
            .cast_into::<PyUntypedArray>()
            .map_err(|e| PyTypeError::new_err(format!("codes: expected a uint8 array, got {e}")))?;
        if !arr.dtype().is_equiv_to(&numpy::dtype::<u8>(py)) {
            return Err(PyTypeError::new_err(format!(
                "codes: expected dtype uint8, got {}",
                arr.dtype()
            )));
        }
        match arr.shape() {
            [_, w] if *w == q.code_size() => {}
            shape => {
                return Err(PyValueError::new_err(format!(
                    "codes: expected shape (N, {}) for dim={dim}, bits={bits}, got {}",
                    q.code_size(),
                    shape_text(shape)
                )))
            }
        }
        let n = arr.shape()[0];
        let arr = np
            .getattr("ascontiguousarray")?
            .call1((arr,))?
            .cast_into::<PyArray2<u8>>()?;
        let scales = match scales {
            None => None,
            Some(s) => {
                refuse_masked(s, "scales")?;
                let s = np.getattr("asarray")?.call1((s,))?;
                let kind = s.cast::<PyUntypedArray>()?.dtype().kind();
                if !matches!(kind, b'f' | b'i' | b'u') {
                    return Err(PyTypeError::new_err(format!(
                        "scales: expected real numbers, got dtype {}",
                        s.cast::<PyUntypedArray>()?.dtype()
                    )));
                }
                let f32_dtype = numpy::dtype::<f32>(py);
                let s = np
                    .getattr("ascontiguousarray")?
                    .call1((s, f32_dtype))?
                    .cast_into::<PyArray1<f32>>()
                    .map_err(|_| PyValueError::new_err(format!("scales: expected shape ({n},)")))?;
                if s.len() != n {
                    return Err(PyValueError::new_err(format!(
                        "scales: expected shape ({n},) for {n} vectors, got ({},)",
                        s.len()
                    )));
                }
                if let Some((i, v)) = s
                    .to_vec()?
                    .into_iter()
                    .enumerate()
                    .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
                {
                    return Err(quant_error(
                        py,
                        hydron_core::quant::QuantError::InvalidScale {
                            vector: i,
                            value: v,
                        },
                    ));
                }
                Some(s.unbind())
            }
        };
        Ok(LatticeCodes {
            codes: arr.unbind(),
            scales,
            quantizer: q,
        })
    }

    /// The codes: a ``(N, code_size)`` uint8 array.
    #[getter]
    fn codes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u8>> {
        self.codes.bind(py).clone()
    }

    /// One float32 scale per vector, or ``None`` (``scale="unit"`` or
    /// ``"direction"``).
    #[getter]
    fn scales<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f32>>> {
        self.scales.as_ref().map(|s| s.bind(py).clone())
    }

    /// The dimension of the vectors.
    #[getter]
    fn dim(&self) -> usize {
        self.quantizer.dim()
    }

    /// Bits per coordinate.
    #[getter]
    fn bits(&self) -> u32 {
        self.quantizer.bits_per_dim()
    }

    /// The seed of the rotation.
    #[getter]
    fn seed(&self) -> u64 {
        self.quantizer.seed()
    }

    /// Whether the vectors were rotated.
    #[getter]
    fn rotate(&self) -> bool {
        self.quantizer.rotation().is_some()
    }

    /// ``"vector"`` (with scales), ``"unit"`` or ``"direction"`` (none).
    #[getter]
    fn scale(&self) -> &'static str {
        scale_name(&self.quantizer)
    }

    /// Code bytes per vector.
    #[getter]
    fn code_size(&self) -> usize {
        self.quantizer.code_size()
    }

    /// The quantizer that reads these codes (a new one, of the same
    /// parameters).
    #[getter]
    fn quantizer(&self) -> LatticeQuantizer {
        LatticeQuantizer {
            inner: self.quantizer.clone(),
        }
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.codes.bind(py).shape()[0]
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "hydron.LatticeCodes(<{} vectors>, {})",
            self.__len__(py),
            params(&self.quantizer)
        )
    }
}
