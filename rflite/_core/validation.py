"""Input validation: arrays, scalars, choices, sample weights and targets.

scikit-learn's conventions without importing scikit-learn: every check names
the parameter and the value it refused, before any computation.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse
from rflite._core.exceptions import warn


#: Largest entry magnitude :func:`check_array` accepts (with ``allow_nonfinite``
#: off): squares and sums of squares of larger values overflow float64
#: (``sqrt(finfo.max) ~ 1.3e154``), which would turn norms, Gram matrices and
#: standardisations into inf / NaN silently.
MAX_ABS = 1e150

# -------------------------------------------------------------------- validation
def refuse_plain_operator(A, name: str, needs: str) -> None:
    """``TypeError`` for a matrix-free operator (``matvec`` but no ``columns``).

    rflite's solvers take NumPy arrays or a :class:`rflite.features.FeatureOperator`;
    a SciPy ``LinearOperator`` gives products only, and without this check it
    failed as "A must be numeric: float() argument ... not 'MatrixLinearOperator'".
    """
    if not isinstance(A, np.ndarray) and hasattr(A, "matvec") and not hasattr(A, "columns"):
        raise TypeError(f"{name} is a {type(A).__name__} without columns(S), which {needs} "
                        f"needs; pass a NumPy array or an rflite FeatureOperator")


class DataConversionWarning(UserWarning):
    """An input was converted to the expected layout (e.g. a column-vector ``y``)."""


def check_array(
    a,
    name: str,
    *,
    ndim: int | tuple[int, ...] = 2,
    allow_complex: bool = False,
    allow_nonfinite: bool = False,
    min_rows: int = 1,
    dtype=None,
) -> np.ndarray:
    """Convert ``a`` to a float64 (or complex128) array and validate it.

    No copy is made when ``a`` already has the target dtype; a read-only input
    stays read-only (kernels never write to their inputs).  Integer, boolean,
    float32 and numeric object arrays are converted (a copy of the small
    input, never of a feature matrix).

    Raises
    ------
    ValueError
        Naming ``name``, for sparse or non-numeric input, a wrong number of
        dimensions, too few rows, complex values where real ones are required,
        NaN / inf entries, or entries above :data:`MAX_ABS` in magnitude.  The
        wording follows scikit-learn's where it has
        one, so that its estimator checks recognise the errors.
    """
    if a is None:
        raise ValueError(
            f"{name} is None: Expected array-like (array or non-string sequence), got None"
        )
    if scipy.sparse.issparse(a):
        raise ValueError(f"{name}: sparse input is not supported; pass a dense array")
    try:
        arr = np.asarray(a)
        if arr.dtype == object:
            arr = np.asarray(a, dtype=np.complex128 if allow_complex else np.float64)
    except TypeError as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    is_complex = np.iscomplexobj(arr)
    if is_complex and not allow_complex:
        raise ValueError(f"{name} must be real (Complex data not supported), got dtype {arr.dtype}")
    if dtype is None:
        dtype = np.complex128 if is_complex else np.float64
    arr = np.asarray(arr, dtype=dtype)
    ndims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if arr.ndim not in ndims:
        hint = ""
        if arr.ndim < 2 and 2 in ndims:
            hint = (
                "; Reshape your data either using array.reshape(-1, 1) if it has a single "
                "feature or array.reshape(1, -1) if it contains a single sample"
            )
        raise ValueError(
            f"{name} must have {' or '.join(map(str, ndims))} dimension(s), "
            f"got shape {arr.shape}{hint}"
        )
    if arr.ndim >= 1 and arr.shape[0] < min_rows:
        raise ValueError(
            f"{name} has {arr.shape[0]} sample(s) (shape={arr.shape}) while a minimum of "
            f"{min_rows} is required."
        )
    if arr.ndim == 2 and arr.shape[1] < 1:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if not allow_nonfinite and arr.size:
        amax = max_abs(arr)
        if not np.isfinite(amax):
            raise ValueError(f"{name} contains NaN or infinite values")
        if amax > MAX_ABS:
            raise ValueError(
                f"{name} has entries of magnitude up to {amax:.3g} > MAX_ABS = {MAX_ABS:g}, "
                f"whose squares overflow float64 in norms and Gram matrices; rescale {name}"
            )
    return arr


#: Entries per chunk of :func:`max_abs` (2 MiB of float64: cache sized, and
#: the only temporary it makes).
MAX_ABS_CHUNK = 1 << 18


def max_abs(a: np.ndarray) -> float:
    """``max |a|`` (NaN if ``a`` has a NaN) without a full-size temporary.

    ``np.max(np.abs(a))`` makes an ``a``-sized temporary: on a feature matrix
    built a moment earlier that doubled the peak memory of a fit.  Here
    ``np.abs`` runs on chunks of :data:`MAX_ABS_CHUNK` entries along the first
    axis (about as fast: the chunk stays in cache).
    """
    if a.size == 0:
        return 0.0
    if a.ndim == 0:
        return float(np.abs(a))
    row = a.size // a.shape[0]
    step = max(1, MAX_ABS_CHUNK // max(1, row))
    best = 0.0
    for i in range(0, a.shape[0], step):
        v = float(np.max(np.abs(a[i:i + step])))
        if not v <= best:  # a larger value, or NaN: keep NaN once seen
            best = v
            if math.isnan(v):
                break
    return best


def check_X_y(X, y, *, allow_complex_y: bool = False, estimator: str = "this estimator"):
    """Validate a design matrix ``X`` (m x d) and target ``y`` (m,) together.

    A column vector ``y`` of shape (m, 1) is flattened with a
    :class:`DataConversionWarning`.
    """
    if y is None:
        raise ValueError(f"{estimator} requires y to be passed, but the target y is None")
    X = check_array(X, "X", ndim=2)
    y = check_array(y, "y", ndim=(1, 2), allow_complex=allow_complex_y)
    if y.ndim == 2:
        if y.shape[1] != 1:
            raise ValueError(f"y must have 1 dimension(s), got shape {y.shape}")
        warn(
            "A column-vector y was passed when a 1d array was expected; flattened to "
            f"shape ({y.shape[0]},)",
            DataConversionWarning)
        y = y[:, 0]
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X and y must have the same number of rows, got X {X.shape} and y {y.shape}"
        )
    return X, y


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer parameter, naming it in the error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_real(
    value, name: str, *, minimum: float | None = None, strict: bool = False,
    maximum: float | None = None,
) -> float:
    """Validate a finite real scalar; ``strict`` makes ``minimum`` exclusive."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int or Fraction beyond the float64 range, e.g. 10**400
        raise ValueError(
            f"{name} must be finite, got a value too large for float64 ({_short(value)})"
        ) from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _short(value) -> str:
    """``repr(value)`` shortened for error messages (10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def check_bool(value, name: str) -> bool:
    """Validate a boolean parameter: only ``True``/``False`` (or ``numpy.bool_``).

    Strings, numbers and ``None`` are refused rather than taken by their truth
    value (``normalize="no"`` would otherwise mean ``True``).

    Raises
    ------
    ValueError
        Naming ``name`` and the value.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be a bool (True or False), got {type(value).__name__} "
                     f"{_short(value)}")


def check_choice(value, name: str, options) -> str:
    """Validate that ``value`` is one of ``options``."""
    try:  # an array compares elementwise (ambiguous, or a 1-element array "equal")
        known = not isinstance(value, np.ndarray) and value in options
    except (TypeError, ValueError):
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {sorted(map(repr, options))}, got {value!r}")
    return value


# =========================================================================
# estimator input conventions (shared by every rflite estimator)
# =========================================================================
def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Validate ``sample_weight`` like scikit-learn's ``_check_sample_weight``.

    ``None`` stays ``None`` (every row weight 1); a scalar is broadcast to all
    ``n_samples`` rows; an array must be 1-d of length ``n_samples``, finite,
    non-negative and not all zero.  Errors name ``sample_weight``.

    Returns
    -------
    (n_samples,) float64 ndarray or None
        A fresh array (the caller's weights are never written to).
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        w = np.full(n_samples, check_real(sample_weight, "sample_weight", minimum=0.0))
    else:
        w = check_array(sample_weight, "sample_weight", ndim=1, allow_nonfinite=True).copy()
        if w.shape != (n_samples,):
            raise ValueError(
                f"sample_weight.shape == {w.shape}, expected {(n_samples,)}!"
            )
        if not np.all(np.isfinite(w)):
            raise ValueError("sample_weight contains NaN or infinite values")
        if np.any(w < 0):
            raise ValueError(
                f"Negative values in data passed to sample_weight (min {w.min():g})"
            )
    if not w.sum() > 0:
        raise ValueError("sample_weight must have a positive sum, got all zero weights")
    return w


#: Significant bits the fits keep of each relative weight (:func:`relative_weights`).
WEIGHT_BITS = 30


def relative_weights(w, lo=None):
    r"""``w`` divided by its smallest positive entry, rounded to :data:`WEIGHT_BITS` bits.

    The weights every fit uses, so that a model depends on the relative
    weights only: ``c * w`` gives the same bits as ``w`` for every
    :math:`c > 0` (the quotients :math:`c w_i / c w_{\min}` and
    :math:`w_i / w_{\min}` differ by at most an ulp or two, which the
    rounding removes unless a quotient lies that close to a rounding
    midpoint: about :math:`2^{-21}` per weight).  Without the rounding, fits
    whose choices turn on near-ties (SHRIMP's pruning path, GFC's descent)
    moved with the last bit of the weights.  Zeros stay zero, integer
    weights that include a 1 are unchanged, and a relative precision of
    :math:`2^{-30} \approx 10^{-9}` is far below any weight's meaning.
    ``lo``: the smallest positive weight when ``w`` is one chunk of many.
    """
    w = np.asarray(w, dtype=np.float64)
    if lo is None:
        pos = w[w > 0]
        lo = float(pos.min()) if pos.size else 1.0
    mant, expo = np.frexp(w / lo)
    return np.ldexp(np.round(mant * 2.0**WEIGHT_BITS) / 2.0**WEIGHT_BITS, expo)


#: Largest denominator :func:`repetition_counts` tries when the weights are
#: not integer multiples of their smallest one.
MAX_WEIGHT_DENOMINATOR = 10**6


def repetition_counts(w, *, estimator: str = "this estimator") -> np.ndarray:
    r"""The smallest integers in the proportions of the positive weights ``w``.

    Methods that realise ``sample_weight`` by repeating rows use these counts,
    so that the fit depends on the *relative* weights only: ``c * w`` gives
    the counts of ``w`` for every :math:`c > 0`, and integer weights whose
    greatest common divisor is 1 (any weight equal to 1, or coprime weights)
    are their own counts, so such weights equal repeated rows.  Weights that
    are integers, or integer multiples of the smallest weight, are divided by
    the greatest common divisor; otherwise each ratio :math:`w_i / \max w` is
    written as a fraction with a denominator up to
    :data:`MAX_WEIGHT_DENOMINATOR` (the distinct values only) and the counts
    are the numerators over the least common denominator.

    Raises
    ------
    ValueError
        Naming ``sample_weight`` when a ratio is not such a fraction to 1e-14
        (weights in no integer proportion, such as 1 and :math:`\sqrt 2`).
    MemoryError
        Naming ``sample_weight`` when a count reaches :math:`2^{53}`.
    """
    from fractions import Fraction

    w = np.asarray(w, dtype=np.float64)
    for base in (1.0, float(w.min())):
        k = np.rint(w / base)
        if np.allclose(k * base, w, rtol=1e-12, atol=0.0):
            if k.max() >= 2.0**53:  # past exact integers: no machine holds the copies
                raise MemoryError(
                    f"{estimator} repeats rows in proportion to sample_weight; a ratio of "
                    f"{k.max():.4g} between weights would need that many copies of a row")
            k = k.astype(np.int64)
            return k // np.gcd.reduce(k)
    values, inverse = np.unique(w / w.max(), return_inverse=True)
    fractions = [Fraction(float(v)).limit_denominator(MAX_WEIGHT_DENOMINATOR) for v in values]
    bad = [v for v, f in zip(values, fractions) if abs(float(f) - v) > 1e-14 * v]
    if bad:
        raise ValueError(
            f"{estimator} realises sample_weight by repeating rows, so the weights must be in "
            f"integer proportion (ratios p / q with q <= {MAX_WEIGHT_DENOMINATOR}); the ratio "
            f"{float(bad[0])!r} of a weight to the largest is not")
    lcd = math.lcm(*[f.denominator for f in fractions])
    numer = np.array([f.numerator * (lcd // f.denominator) for f in fractions], dtype=object)
    numer = numer // math.gcd(*numer.tolist())
    if max(numer) >= 2**53:
        raise MemoryError(f"{estimator} repeats rows in proportion to sample_weight; these "
                          f"proportions need {float(max(numer)):.4g} copies of a row")
    return numer.astype(np.int64)[inverse.ravel()]


def check_targets(X, y, *, estimator: str = "this estimator"):
    """Validate ``X`` (m x d) and a 1-d or 2-d real target together.

    Unlike :func:`check_X_y`, a 2-d ``y`` (including a column vector) is kept
    2-d, as scikit-learn's multi-output regressors do.

    Returns
    -------
    X : (m, d) ndarray
    Y : (m, n_targets) ndarray
    one_d : bool
        Whether ``y`` was 1-d (``predict`` then returns (n,)).
    """
    if y is None:
        raise ValueError(f"{estimator} requires y to be passed, but the target y is None")
    X = check_array(X, "X", ndim=2)
    y = check_array(y, "y", ndim=(1, 2))
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X and y must have the same number of rows, got X {X.shape} and y {y.shape}"
        )
    if y.ndim == 2 and y.shape[1] < 1:
        raise ValueError(f"y has 0 targets (shape={y.shape}); at least 1 is required")
    one_d = y.ndim == 1
    return X, (y[:, None] if one_d else y), one_d
