r"""Checks of the theory: coherence, RIP estimates, eigenvalue and risk bounds.

Two kinds of functions live here.

*Measurements on a given matrix* ``A`` (m x N, real or complex, a dense array
or a matrix-free :class:`~rflite.features.FeatureOperator`):

- :func:`coherence` -- mutual coherence
  :math:`\mu(A) = \max_{j \ne k} |\langle a_j, a_k\rangle| / (\|a_j\| \|a_k\|)`,
  blocked over columns with BLAS, :math:`O(\text{block} \cdot N)` extra memory;
- :func:`cumulative_coherence` -- the Babel function :math:`\mu_1(k)`;
- :func:`rip_lower_bound` -- a certified lower bound on the restricted
  isometry constant :math:`\delta_s` (random, greedy or exhaustive supports);
- :func:`rip_upper_bound` -- the Gershgorin / coherence upper bound
  :math:`\delta_s \le (s - 1)\mu` (for unit-norm columns);
- :func:`gram_extreme_eigenvalues` -- extreme eigenvalues of
  :math:`A A^* / N` (or :math:`A^* A / N`), SHRIMP Fig. 6;
- :func:`best_s_term_error` -- :math:`\kappa_{s,p}(c)`;
- :func:`sparsity_check` -- "is this matrix good enough for sparsity s?":
  the coherence condition of SHRIMP Thm 5 and a bracket on
  :math:`\delta_{6s}` against HTP's :math:`1/\sqrt3`;
- :func:`welch_bound` -- the smallest coherence any m x N matrix can have.

*The papers' closed-form quantities*, each a plain function citing its theorem
(universal constants are arguments, default 1): HARFE Thm 3.1 / 3.2 /
Lemma A.3 (Saha, Schaeffer, Tran 2023), SHRIMP Thm 5 / Cor. 6 / Prop. 7 /
Remark 8 / eq. (35) (Xie, Shi, Schaeffer, Ward 2022), and the optimal Metropolis
exponent of Kammonen et al. (2020), Remark 3.2.

Extreme inputs
--------------
Every closed form is evaluated in decimal arithmetic (34 digits, exponent
range about :math:`\pm 10^{18}`, see ``_CONTEXT``) and rounded to a float
once, so no finite input (``gamma = 1e308``, ``delta = 5e-324``, ``d = 2**62``)
raises ``OverflowError``, returns NaN or loops: a result beyond the float
range is ``inf`` and means what its docstring says (a vacuous bound, an
unattainable requirement, no limit); one below it is 0.  Invalid inputs
raise ``ValueError`` naming the parameter.  :func:`harfe_min_samples`
searches at most up to ``2**1100`` and returns ``inf`` beyond.

HARFE Thm 3.2
-------------
:func:`harfe_risk_bound` returns the theorem as printed and what its proof
supports: multiplying out the proof's second-to-last line gives the
:math:`\|f\|_\rho` term :math:`D\sqrt{\lambda/N}(3^{-1/4} +
N^{1/2}(2m\log\tfrac1\delta)^{1/4})`, where the statement lacks the
:math:`N^{1/2}`; and the proof's union bound gives probability
:math:`1 - 4\delta`, not the stated :math:`1 - 2\delta`.

What the numerical checks found
-------------------------------
``python -m rflite run theory-...`` samples the random objects and prints the
empirical value beside each bound (:mod:`rflite.experiments.theory`).  Full
runs, seed 0 (numbers depend on the seed; "violated" means the Monte Carlo
mean is more than 3 standard errors on the wrong side):

- **SHRIMP Prop. 7** (``theory-prop7``; m = 100, N/m in 1..32, q in
  {1, 2, 5, 20}, gamma = 1, sigma = 1 or sigma^2 = 1/q, 20 draws per cell):
  the *printed* lower bound (9) on :math:`\mathbb{E}\lambda_1` is violated
  where the features are nearly orthogonal and N/m >= 8 (q = 20, sigma = 1:
  mean 1.78 / 1.53 / 1.37 against 1.88 / 1.94 / 1.97 at N/m = 8 / 16 / 32;
  :math:`\lambda_1` there behaves like :math:`(1 + \sqrt{m/N})^2`, while (9)
  tends to 2).  The proof's own last step, eq. (32), holds in those cells, so
  the data support (32) over the printed (9).  But (32) is not safe either:
  both (9) and (32) fail at N = m for small q (q = 2, sigma = 1: mean 40.8
  against 44.8 and 45.8; 6 cells for (32), 8 for (9), out of 48), because
  their factor :math:`r^{-q/4}`, :math:`r = 4\gamma^2\sigma^2 + 1`, overstates
  the expectation of the off-diagonal terms, which is
  :math:`\mathbb{E}\,e^{i\langle x_j - x_k, \omega_1 - \omega_\ell\rangle}
  = r^{-q/2}`.  The Rayleigh-quotient bound derived here
  (:attr:`Prop7Bounds.lambda_max_rayleigh`) held in all 48 cells, as did the
  upper bound (10) on :math:`\mathbb{E}\lambda_m` and Remark 8 (at N = m,
  p = 1/2: the bound held in 100 % of draws, 90 % claimed).
- **HARFE Lemma A.3** (``theory-lemma-a3``; d = 5, sigma = gamma = 1,
  N = 10..10^4, delta = 0.1, 20 draws): held in every draw, the
  90 % quantile of the :math:`L^2(d\mu)` error is 3.8-4.1x below
  :math:`\epsilon(N, \delta)`; the median error decays like
  :math:`N^{-0.504}` (predicted :math:`N^{-1/2}`).  The Rahimi-Recht bound
  (SHRIMP eq. (35)) also held but is vacuous (probability bound >= 1 at the
  observed error for every N <= 10^4) and its :math:`\epsilon` at
  delta = 0.1 is ~7x the observed kernel error (0.209 vs 0.029 at N = 10^4).
- **SHRIMP Thm 5's coherence requirement** (``theory-coherence``; m = 200,
  N = 1000, d = 10, complex exponential features): the coherence ranges from
  1.000 (q <= 2, or sigma = 0.25) down to 0.262 (q = 10, sigma = 4); the
  requirement :math:`4/(\sqrt{41}(2s - 1))` (0.625 for s = 1, 0.208 for
  s = 2) is met for s = 1 only (sigma = 4, q >= 5) and for s = 2 never.
  Even a matrix at the Welch bound (0.063) would allow only s <= 5.
- **RIP** (``theory-rip``; m = 100, N = 500, :math:`A/\sqrt m`): certified
  :math:`\delta_2 \ge 0.98` for q <= 2 and :math:`\delta_4 \ge 1.03` for
  q = 10, so HTP's condition :math:`\delta_{6s} < 1/\sqrt3` (HARFE Thm 3.1 /
  A.2) fails already for s = 1 at these sizes; the greedy search beats random
  supports by up to 2x; the coherence bound :math:`(s-1)\mu` exceeds 1 from
  s = 2-3 on, and for q = 1 the certified lower value meets it (both ~s - 1).
- **SHRIMP Fig. 6** (``theory-shrimp-spectrum``, f7, m = 140, N = 10^4):
  with sigma^2 = 1/q the largest eigenvalue falls from 47 to ~8 along the
  magnitude-pruning path and stays ~47-51 under random pruning, as the paper
  describes; test MSE 2.4e-7 (paper 1.19e-5) vs 0.031 (paper 0.023).
"""

from __future__ import annotations

import decimal
import itertools
import math
from decimal import Decimal
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.optimize

from rflite._theory import kernels as _theory_kernels
from rflite._core.validation import check_array, check_choice, check_int, check_real
from rflite._core.random import check_rng
from rflite._reexport import reexport
from rflite._theory.kernels import (  # noqa: F401 - RIPEstimate and BLOCK_ENTRIES re-exported
    BLOCK_ENTRIES,
    _ONE,
    RIPEstimate,
    _best_of_supports,
    _check_nonzero_columns,
    _closed_form,
    _column_norms,
    _D,
    _float,
    _gram_blocks,
    _greedy,
    _is_operator,
    _ln,
    _ln_inv,
    _masked_block_max,
    _matrix,
    _small_blas,
    _sqrt,
)

# setting BLOCK_ENTRIES here sets it where the coherence scan reads it
reexport(__name__, (_theory_kernels,), public=(RIPEstimate,))

__all__ = [
    "EXHAUSTIVE_MAX",
    "BLOCK_ENTRIES",
    "RIPEstimate",
    "GramSpectrum",
    "Conditions",
    "Prop7Bounds",
    "HighProbabilityBound",
    "coherence",
    "cumulative_coherence",
    "welch_bound",
    "rip_lower_bound",
    "rip_upper_bound",
    "gram_extreme_eigenvalues",
    "best_s_term_error",
    "harfe_thm31_conditions",
    "harfe_min_samples",
    "harfe_max_features",
    "harfe_thm31_bound",
    "harfe_risk_epsilon",
    "harfe_risk_bound",
    "HarfeRiskBound",
    "htp_rip_threshold",
    "SparsityCheck",
    "sparsity_check",
    "lemma_a3_min_features",
    "lemma_a3_epsilon",
    "shrimp_prop7_bounds",
    "shrimp_remark8_bound",
    "shrimp_thm5_coherence_requirement",
    "shrimp_thm5_max_sparsity",
    "shrimp_thm5_min_variance",
    "shrimp_thm5_features",
    "shrimp_thm5_conditions",
    "shrimp_thm5_coef_error_bound",
    "shrimp_thm5_bound",
    "shrimp_cor6_conditions",
    "rahimi_recht_tail",
    "rahimi_recht_epsilon",
    "rahimi_recht_min_features",
    "metropolis_optimal_exponent",
    "metropolis_relative_work",
    "metropolis_optimal_density",
]

#: Largest number of supports :func:`rip_lower_bound` enumerates with
#: ``method="exhaustive"``.
EXHAUSTIVE_MAX = 200_000


# ------------------------------------------------------------------ results


class GramSpectrum(NamedTuple):
    """Result of :func:`gram_extreme_eigenvalues`: extremes and which Gram matrix."""

    eig_min: float
    eig_max: float
    side: str  # "AA*" (m <= N) or "A*A" (m > N)


class Conditions(NamedTuple):
    """Sufficient conditions of a theorem, each of the form ``lhs >= rhs``.

    Attributes
    ----------
    names : tuple of str
    lhs, rhs : tuple of float
    holds : tuple of bool
    all_hold : bool
    """

    names: tuple
    lhs: tuple
    rhs: tuple
    holds: tuple
    all_hold: bool

    def report(self) -> str:
        """One line per condition: name, both sides and whether it holds."""
        lines = [
            f"{n:<28} {a:12.4g} >= {b:<12.4g} {'holds' if h else 'FAILS'}"
            for n, a, b, h in zip(self.names, self.lhs, self.rhs, self.holds)
        ]
        return "\n".join(lines)


class Prop7Bounds(NamedTuple):
    r"""The eigenvalue bounds of SHRIMP Prop. 7 (see :func:`shrimp_prop7_bounds`).

    Attributes
    ----------
    lambda_max_printed : float
        Eq. (9)/(33) as printed, a lower bound claimed for
        :math:`\mathbb{E}\lambda_1`.
    lambda_max_eq32 : float
        What the last line of the proof, eq. (32), gives in expectation (with
        the paper's factor :math:`r^{-q/4}`).
    lambda_max_rayleigh : float
        The exact expectation of the Rayleigh quotient at
        :math:`z = a_1/\sqrt{m}`, a valid lower bound (derived here).
    lambda_min : float
        Eq. (10)/(34), an upper bound for :math:`\mathbb{E}\lambda_m`.
    ratio : float
        :math:`c = N/m`.
    """

    lambda_max_printed: float
    lambda_max_eq32: float
    lambda_max_rayleigh: float
    lambda_min: float
    ratio: float


class HighProbabilityBound(NamedTuple):
    """A bound ``value`` that holds with probability at least ``probability``."""

    value: float
    probability: float


# --------------------------------------------------------------- validation
def _pos(value, name):
    return check_real(value, name, minimum=0.0, strict=True)


def _nonneg(value, name):
    return check_real(value, name, minimum=0.0)


def _prob(value, name="delta"):
    value = check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


# ----------------------------------------------------------------- coherence
def coherence(A, *, block_size: int | None = None) -> float:
    r"""Mutual coherence of the columns of ``A``.

    .. math::

        \mu(A) = \max_{j \ne k} \frac{|\langle a_j, a_k \rangle|}
        {\|a_j\|_2 \, \|a_k\|_2}

    The Gram matrix is formed block of columns by block of columns: for
    columns :math:`J = [i_0, i_1)` the piece :math:`A_J^* A_{[i_0, N)}` (one
    BLAS ``gemm``; the other triangle is redundant), then a numba kernel
    scales it by the inverse norms, masks the diagonal and keeps a running
    maximum.  Extra memory is one ``block_size x N`` piece, never the
    ``N x N`` Gram matrix.  For a :class:`~rflite.features.FeatureOperator`
    the piece is :math:`(A^* A_J)^*`, computed matrix-free (one pass over the
    rows of ``A`` per block, so ``N / block_size`` feature evaluations).

    Parameters
    ----------
    A : (m, N) array_like (real or complex) or FeatureOperator
        ``N >= 2``; no column may be zero.
    block_size : int, optional
        Columns per block; default ``max(1, BLOCK_ENTRIES // N)``.

    Returns
    -------
    float
        :math:`\mu(A) \in [0, 1]`.

    Raises
    ------
    ValueError
        For fewer than two columns, a zero column (naming its index), NaN /
        inf, or a bad ``block_size``.

    References
    ----------
    SHRIMP (Xie, Shi, Schaeffer, Ward 2022), Thm 5 proof (coherence condition
    :math:`\mu_A \le 4/(\sqrt{41}(2s-1))`); Foucart and Rauhut, *A
    Mathematical Introduction to Compressive Sensing*, 2013, Def. 5.1.

    Examples
    --------
    >>> coherence(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))  # doctest: +ELLIPSIS
    0.7071...
    """
    A = _matrix(A)
    N = A.shape[1]
    if N < 2:
        raise ValueError(f"A must have at least 2 columns for coherence, got shape {A.shape}")
    best = 0.0
    for i0, i1, j0, G, inv in _gram_blocks(A, block_size, upper=True):
        best = max(best, _masked_block_max(G, inv[i0:i1], inv[j0:], i0 - j0))
    return float(min(1.0, math.sqrt(best)))


def cumulative_coherence(A, k: int, *, block_size: int | None = None) -> float:
    r"""Babel function (cumulative coherence) of the column-normalised ``A``.

    .. math::

        \mu_1(k) = \max_j \max_{|\Lambda| = k,\ j \notin \Lambda}
        \sum_{i \in \Lambda} \frac{|\langle a_j, a_i\rangle|}{\|a_j\|\|a_i\|}

    :math:`\mu_1(1) = \mu(A)` and :math:`\mu_1(k) \le k\,\mu(A)`; Gershgorin
    gives the tighter :math:`\delta_s \le \mu_1(s - 1)` for unit-norm columns
    (Foucart and Rauhut 2013, Def. 5.2 and Thm 5.3).  Blocked like
    :func:`coherence` (but over the full rows of the Gram matrix).

    Parameters
    ----------
    A : (m, N) array_like or FeatureOperator
    k : int, 1 <= k <= N - 1
    block_size : int, optional

    Returns
    -------
    float
    """
    A = _matrix(A)
    N = A.shape[1]
    k = check_int(k, "k", minimum=1, maximum=max(1, N - 1))
    if N < 2:
        raise ValueError(f"A must have at least 2 columns, got shape {A.shape}")
    best = 0.0
    for i0, i1, _, G, inv in _gram_blocks(A, block_size, upper=False):
        M = np.abs(G) * inv[i0:i1, None] * inv[None, :]
        M[np.arange(i1 - i0), np.arange(i0, i1)] = 0.0
        top = np.partition(M, N - k, axis=1)[:, N - k:]
        best = max(best, float(top.sum(axis=1).max()))
    return best


def welch_bound(m: int, N: int) -> float:
    r"""Welch lower bound on the coherence of any m x N matrix (N > m).

    .. math:: \mu(A) \ge \sqrt{\frac{N - m}{m (N - 1)}}

    Holds for every real or complex matrix with nonzero columns (Foucart and
    Rauhut 2013, Thm 5.7); 0 when ``N <= m``.
    """
    m = check_int(m, "m", minimum=1)
    N = check_int(N, "N", minimum=2)
    if N <= m:
        return 0.0
    return math.sqrt((N - m) / (m * (N - 1)))


# ----------------------------------------------------------------------- RIP
def _scaling(A, norms, scale):
    """Column weights w with B = A diag(w), and the diagonal of B^* B."""
    if isinstance(scale, str):
        check_choice(scale, "scale", ("columns",))
        _check_nonzero_columns(norms)
        w = 1.0 / norms
    else:
        sc = float(A.shape[0]) if scale is None else _pos(scale, "scale")
        w = np.full(norms.shape[0], 1.0 / math.sqrt(sc))
    return w, (norms * w) ** 2


def rip_lower_bound(
    A,
    s: int,
    *,
    method: str = "random",
    n_trials: int = 100,
    scale=None,
    rng=None,
) -> RIPEstimate:
    r"""Lower bound on the restricted isometry constant from trial supports.

    With :math:`B = A / \sqrt{\text{scale}}` (or ``A`` with unit-norm columns
    for ``scale="columns"``),

    .. math::

        \delta_s(B) = \max_{|S| = s} \|B_S^* B_S - I\|_{2\to 2}
        \ge \max_{S \in \mathcal{T}} \max(\lambda_{\max}(B_S^* B_S) - 1,\
        1 - \lambda_{\min}(B_S^* B_S))

    for any family :math:`\mathcal{T}` of supports.  The exact value is
    NP-hard; the family is

    - ``"random"``: ``n_trials`` uniformly random supports of size ``s``;
    - ``"greedy"``: ``n_trials`` starting columns (the column whose squared
      norm deviates most from 1, then random ones); from each, two supports
      are grown one column at a time, choosing the column that maximises the
      largest (resp. minimises the smallest) eigenvalue of the 2 x 2
      compression of :math:`B_{S\cup j}^* B_{S \cup j}` onto the current
      extreme eigenvector and :math:`e_j` (a Rayleigh-quotient bound on the
      new extreme eigenvalue, one :math:`A^* r` product per step);
    - ``"exhaustive"``: every support (at most :data:`EXHAUSTIVE_MAX`), giving
      :math:`\delta_s` exactly.

    Parameters
    ----------
    A : (m, N) array_like (real or complex) or FeatureOperator
    s : int, 1 <= s <= N
    method : {"random", "greedy", "exhaustive"}
    n_trials : int >= 1
        Supports (random) or starting columns (greedy); ignored by
        ``"exhaustive"``.
    scale : None, float > 0 or "columns"
        Study :math:`A/\sqrt{\text{scale}}`; ``None`` means ``m`` (the
        :math:`m^{-1/2} A` of HARFE Thm A.1), ``"columns"`` normalises every
        column to unit norm.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    RIPEstimate

    References
    ----------
    HARFE (Saha, Schaeffer, Tran 2023), Sec. 3 (definition) and Thm A.1;
    Foucart and Rauhut 2013, Def. 6.1 and Prop. 6.2.

    Examples
    --------
    >>> A = np.eye(3)
    >>> rip_lower_bound(A, 2, method="exhaustive", scale=1.0).delta
    0.0
    """
    A = _matrix(A)
    m, N = A.shape
    s = check_int(s, "s", minimum=1, maximum=N)
    check_choice(method, "method", ("random", "greedy", "exhaustive"))
    n_trials = check_int(n_trials, "n_trials", minimum=1)
    rng = check_rng(rng)
    norms = _column_norms(A)
    w, diag = _scaling(A, norms, scale)
    if method == "exhaustive":
        total = math.comb(N, s)
        if total > EXHAUSTIVE_MAX:
            raise ValueError(
                f"method='exhaustive' would enumerate C({N}, {s}) = {total} supports "
                f"(> EXHAUSTIVE_MAX = {EXHAUSTIVE_MAX}); use 'random' or 'greedy'"
            )
        supports = itertools.combinations(range(N), s)
    elif method == "random":
        supports = (np.sort(rng.choice(N, s, replace=False)) for _ in range(n_trials))
    with _small_blas():
        if method == "greedy":
            return _greedy(A, w, diag, s, n_trials, rng)
        return _best_of_supports(A, w, supports)


def rip_upper_bound(A, s: int, *, scale=None) -> float:
    r"""Coherence (Gershgorin) upper bound on the restricted isometry constant.

    For :math:`B = A \,\mathrm{diag}(w)` with :math:`d_j = \|b_j\|^2`,
    Gershgorin's theorem on :math:`B_S^* B_S` gives

    .. math::

        \delta_s(B) \le \max_j \Big( |d_j - 1| + (s - 1)\, \mu(A)\,
        \|b_j\| \max_{k \ne j} \|b_k\| \Big),

    which is :math:`(s - 1)\mu(A)` when the columns of :math:`B` have unit
    norm (``scale="columns"``, or complex exponential features with the
    default ``scale = m``).  May exceed 1 (then it says nothing).

    Parameters
    ----------
    A : (m, N) array_like or FeatureOperator
    s : int, 1 <= s <= N
    scale : None, float > 0 or "columns"
        As in :func:`rip_lower_bound`.

    References
    ----------
    Foucart and Rauhut 2013, Prop. 6.2; SHRIMP spec: "the coherence upper
    bound (s - 1) mu for column-normalised A".
    """
    A = _matrix(A)
    N = A.shape[1]
    s = check_int(s, "s", minimum=1, maximum=N)
    norms = _column_norms(A)
    w, diag = _scaling(A, norms, scale)
    bn = np.sqrt(diag)
    if s == 1:
        return float(np.max(np.abs(diag - 1.0)))
    mu = coherence(A)
    order = np.argsort(bn)
    top, second = bn[order[-1]], bn[order[-2]]
    other = np.where(np.arange(N) == order[-1], second, top)
    return float(np.max(np.abs(diag - 1.0) + (s - 1) * mu * bn * other))


def htp_rip_threshold() -> float:
    r"""HTP needs :math:`\delta_{6s} < 1/\sqrt{3}` (HARFE Thm A.2, Foucart-Rauhut Thm 6.20)."""
    return 1.0 / math.sqrt(3.0)


class SparsityCheck(NamedTuple):
    r"""Result of :func:`sparsity_check` (all for :math:`B = A/\sqrt{\text{scale}}`).

    Attributes
    ----------
    s : int
    coherence : float
        :math:`\mu(A)`.
    coherence_requirement : float
        SHRIMP Thm 5's :math:`4/(\sqrt{41}(2s-1))`.
    coherence_ok : bool
        Whether :math:`\mu(A)` meets it.
    order : int
        :math:`\min(6s, N)`, the RIP order HTP needs (HARFE Thm A.2).
    delta_lower, delta_upper : float
        Certified lower estimate (greedy and random supports) and coherence
        upper bound of :math:`\delta_{\text{order}}(B)`.
    htp_certified : bool
        ``delta_upper < 1/sqrt(3)``: HTP's condition provably holds.
    htp_ruled_out : bool
        ``delta_lower >= 1/sqrt(3)``: it provably fails.  Neither flag set
        means undecided.
    """

    s: int
    coherence: float
    coherence_requirement: float
    coherence_ok: bool
    order: int
    delta_lower: float
    delta_upper: float
    htp_certified: bool
    htp_ruled_out: bool


def sparsity_check(A, s: int, *, n_trials: int = 20, scale=None, rng=None) -> SparsityCheck:
    r"""Is this feature matrix good enough for sparsity ``s``?  (Cheap sufficient checks.)

    Evaluates, for the matrix you are about to fit, the two hypotheses the
    papers' recovery guarantees rest on:

    - SHRIMP Thm 5 (proof, eq. (16)): :math:`\mu(A) \le 4/(\sqrt{41}(2s-1))`;
    - HARFE Thm 3.1 via Thm A.2: :math:`\delta_{6s}(B) < 1/\sqrt3`, bracketed
      between :func:`rip_lower_bound` (greedy with ``n_trials`` starts, and
      ``10 n_trials`` random supports) and :func:`rip_upper_bound`.

    Parameters
    ----------
    A : (m, N) array_like or FeatureOperator
    s : int, 1 <= s <= N
    n_trials : int >= 1
    scale : None, float > 0 or "columns"
        As in :func:`rip_lower_bound` (HARFE studies :math:`A/\sqrt m`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    SparsityCheck

    Examples
    --------
    >>> A = np.random.default_rng(0).standard_normal((2000, 50))
    >>> chk = sparsity_check(A, 1, rng=0)   # delta_6 of A / sqrt(m) in [0.18, 0.46]
    >>> chk.order, chk.htp_certified, chk.htp_ruled_out
    (6, True, False)
    """
    A = _matrix(A)
    N = A.shape[1]
    s = check_int(s, "s", minimum=1, maximum=N)
    n_trials = check_int(n_trials, "n_trials", minimum=1)
    rng = check_rng(rng)
    order = min(6 * s, N)
    mu = coherence(A)
    req = shrimp_thm5_coherence_requirement(s)
    lo_g = rip_lower_bound(A, order, method="greedy", n_trials=n_trials, scale=scale, rng=rng)
    lo_r = rip_lower_bound(A, order, method="random", n_trials=10 * n_trials, scale=scale,
                           rng=rng)
    lo = max(lo_g.delta, lo_r.delta)
    up = rip_upper_bound(A, order, scale=scale)
    thr = htp_rip_threshold()
    return SparsityCheck(s, mu, req, bool(mu <= req), order, lo, up, bool(up < thr),
                         bool(lo >= thr))


# --------------------------------------------------------------- spectrum
def gram_extreme_eigenvalues(A, *, scale=None) -> GramSpectrum:
    r"""Extreme eigenvalues of the scaled Gram matrix (SHRIMP Fig. 6, Prop. 7).

    .. math::

        \lambda_{\min}, \lambda_{\max} \text{ of } \frac{1}{\text{scale}} A A^*
        \ (m \le N) \quad\text{or}\quad \frac{1}{\text{scale}} A^* A \ (m > N)

    i.e. of the smaller Gram matrix, whose eigenvalues are the nonzero squared
    singular values of :math:`A / \sqrt{\text{scale}}`.  Computed by a
    symmetric eigensolver on the Gram matrix: absolute error about
    :math:`10^{-16} \lambda_{\max}`, so a tiny :math:`\lambda_{\min}` has few
    correct digits.

    Parameters
    ----------
    A : (m, N) array_like (real or complex) or FeatureOperator
        An operator is materialised.
    scale : float > 0, optional
        Default ``N`` (the number of columns), as in SHRIMP Prop. 7 and Fig. 6.

    Returns
    -------
    GramSpectrum
    """
    A = _matrix(A)
    if _is_operator(A):
        A = np.asarray(A.todense())
    m, N = A.shape
    scale = float(N) if scale is None else _pos(scale, "scale")
    if m <= N:
        G, side = A @ A.conj().T, "AA*"
    else:
        G, side = A.conj().T @ A, "A*A"
    ev = scipy.linalg.eigh(G, eigvals_only=True, check_finite=False)
    return GramSpectrum(float(ev[0] / scale), float(ev[-1] / scale), side)


def best_s_term_error(c, s: int, p: float = 1.0) -> float:
    r"""Error of the best s-term approximation, :math:`\kappa_{s,p}(c)`.

    .. math::

        \kappa_{s,p}(c) = \min\{\|c - z\|_p : z \text{ s-sparse}\}
        = \Big(\sum_{i > s} |c|_{(i)}^p\Big)^{1/p}

    where :math:`|c|_{(1)} \ge |c|_{(2)} \ge \dots` (keep the ``s`` largest
    entries in magnitude).

    Parameters
    ----------
    c : (n,) array_like, real or complex
    s : int, 0 <= s <= n
    p : float > 0 or ``numpy.inf``

    References
    ----------
    HARFE Sec. 3 (:math:`\kappa_{1,s}`); SHRIMP Thm 5 (:math:`\kappa_{s,p}`).

    Examples
    --------
    >>> best_s_term_error([3.0, -1.0, 2.0, 0.5], 2)
    1.5
    """
    c = check_array(c, "c", ndim=1, allow_complex=True, min_rows=0)
    n = c.shape[0]
    s = check_int(s, "s", minimum=0, maximum=n)
    if p != np.inf:
        p = _pos(p, "p")
    if s == n:
        return 0.0
    mags = np.abs(c)
    tail = np.partition(mags, n - s - 1)[: n - s] if s else mags
    if p == np.inf:
        return float(tail.max())
    return float(np.linalg.norm(tail, p) if p >= 1 else np.sum(tail**p) ** (1.0 / p))


# ======================================================== closed forms
# (evaluated in rflite._theory.kernels._CONTEXT through @_closed_form)

#: Largest m :func:`harfe_min_samples` searches (beyond it no float can hold m).
_MAX_SAMPLES = 2**1100


# ============================================================ HARFE (000)
def _harfe_common(lam, delta, s):
    return _nonneg(lam, "lam"), _prob(delta), check_int(s, "s", minimum=1)


@_closed_form
def harfe_thm31_conditions(
    m: int, N: int, s: int, *, lam: float, delta: float, gamma: float, sigma: float,
    d: int, C1: float = 1.0, C2: float = 1.0,
) -> Conditions:
    r"""Sufficient conditions of HARFE Thm 3.1 (convergence of HARFE's iterates).

    .. math::

        m &\ge C_1 (1+\lambda)^{-2} s \log(\delta^{-1}), \\
        \frac{m}{\log(3m)} &\ge C_2 (1+\lambda)^{-1} s \log^2(6s)
            \log\Big(\frac{N}{9\log(2m)} + 3\Big), \\
        \frac{\sqrt{\delta}}{6\sqrt3} (1+\lambda) (4\gamma^2\sigma^2 + 1)^{d/4} &\ge N,

    with universal constants :math:`C_1, C_2` (unknown; the proof's
    :math:`648 C_1` and :math:`288 C_2` are absorbed).  Data
    :math:`x \sim N(0, \gamma^2 I_d)`, weights :math:`\omega \sim N(0,
    \sigma^2 I_d)`, :math:`a_{kj} = e^{i\langle x_k, \omega_j\rangle}`.  Then
    with probability :math:`\ge 1 - 2\delta` :math:`\delta_{6s}(B) < 1/\sqrt3`.

    Returns
    -------
    Conditions
        Names ``"samples"``, ``"samples/log(3m)"``, ``"features <= N_max"``.
        A side beyond the float range is ``inf`` (a requirement no float m
        meets, or no limit on N); ``holds`` is decided on the exact values.
    """
    m = check_int(m, "m", minimum=1)
    N = check_int(N, "N", minimum=1)
    lam, delta, s = _harfe_common(lam, delta, s)
    C1, C2 = _pos(C1, "C1"), _pos(C2, "C2")
    r1, r2 = _harfe_sample_sides(m, N, s, lam, delta, C1, C2)
    l2 = _D(m) / _ln(3 * m)
    nmax = _harfe_max_features(lam, delta, _pos(gamma, "gamma"), _pos(sigma, "sigma"),
                               check_int(d, "d", minimum=1))
    lhs, rhs = (_D(m), l2, nmax), (r1, r2, _D(N))
    holds = tuple(bool(a >= b) for a, b in zip(lhs, rhs))
    return Conditions(("samples", "samples/log(3m)", "features <= N_max"),
                      tuple(map(_float, lhs)), tuple(map(_float, rhs)), holds, all(holds))


def _harfe_sample_sides(m, N, s, lam, delta, C1, C2):
    """Right-hand sides of HARFE Thm 3.1's two sample conditions at m (decimal)."""
    one_lam = _ONE + _D(lam)
    r1 = _D(C1) / one_lam**2 * s * _ln_inv(delta)
    r2 = (_D(C2) / one_lam * s * _ln(6 * s) ** 2
          * (_D(N) / (9 * _ln(2 * m)) + 3).ln())
    return r1, r2


def _harfe_max_features(lam, delta, gamma, sigma, d) -> Decimal:
    r = 4 * _D(gamma) ** 2 * _D(sigma) ** 2 + 1
    return _sqrt(delta) / (6 * _sqrt(3)) * (_ONE + _D(lam)) * r ** (_D(d) / 4)


@_closed_form
def harfe_max_features(*, lam: float, delta: float, gamma: float, sigma: float, d: int) -> float:
    r"""Largest N allowed by HARFE Thm 3.1's third condition.

    .. math:: N \le \frac{\sqrt\delta}{6\sqrt3}(1+\lambda)(4\gamma^2\sigma^2+1)^{d/4}

    ``inf`` when the limit is beyond the float range (no limit in practice).
    """
    lam, delta = _nonneg(lam, "lam"), _prob(delta)
    gamma, sigma = _pos(gamma, "gamma"), _pos(sigma, "sigma")
    d = check_int(d, "d", minimum=1)
    return _float(_harfe_max_features(lam, delta, gamma, sigma, d))


@_closed_form
def harfe_min_samples(N: int, s: int, *, lam: float, delta: float, C1: float = 1.0,
                      C2: float = 1.0) -> int | float:
    r"""Smallest m meeting HARFE Thm 3.1's two sample conditions.

    ``m / log(3m) - C2 (1+lam)^-1 s log^2(6s) log(N / (9 log 2m) + 3)`` is
    increasing in m, so the answer is found by doubling from the first
    condition's closed form :math:`\lceil C_1(1+\lambda)^{-2}s\log(1/\delta)\rceil`
    and bisection, evaluated in decimal arithmetic.  Answers "is my m large
    enough for this s?" up to the unknown constants.

    Returns
    -------
    int or float
        The smallest m; ``inf`` when it exceeds ``2**1100`` (no float can hold
        it: the requirement is unattainable).  At most about 2 x 1100
        evaluations, whatever the inputs: the search never loops unbounded.
    """
    N = check_int(N, "N", minimum=1)
    lam, delta, s = _harfe_common(lam, delta, s)
    C1, C2 = _pos(C1, "C1"), _pos(C2, "C2")

    def ok(m):
        r1, r2 = _harfe_sample_sides(m, N, s, lam, delta, C1, C2)
        return m >= r1 and _D(m) / _ln(3 * m) >= r2

    r1, _ = _harfe_sample_sides(1, N, s, lam, delta, C1, C2)
    if r1 > _MAX_SAMPLES:
        return math.inf
    hi = max(1, int(r1.to_integral_value(rounding=decimal.ROUND_CEILING)))
    while not ok(hi):
        if hi > _MAX_SAMPLES:
            return math.inf
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@_closed_form
def harfe_thm31_bound(
    n: int, *, beta: float, c_norm: float, kappa1: float, residual_norm: float,
    lam: float, m: int, s: int, D1: float = 1.0, D2: float = 1.0,
) -> float:
    r"""HARFE Thm 3.1's bound on :math:`\|c^n - c\|_2` after n iterations.

    .. math::

        2\beta^n\|c\|_2 + \frac{D_1}{\sqrt s}\kappa_{1,s}(c) + D_2\sqrt{
        \frac{m^{-1}\|y - Ac\|_2^2 + \lambda\|c\|_2^2}{1+\lambda}}

    ``beta`` in (0, 1) and ``D1, D2`` depend only on :math:`\delta_{6s}(B)`.
    ``inf`` when the bound exceeds the float range (vacuous).
    """
    n = check_int(n, "n", minimum=0)
    beta = check_real(beta, "beta")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), got {beta}")
    c_norm, kappa1 = _D(_nonneg(c_norm, "c_norm")), _D(_nonneg(kappa1, "kappa1"))
    res, lam = _D(_nonneg(residual_norm, "residual_norm")), _D(_nonneg(lam, "lam"))
    m, s = check_int(m, "m", minimum=1), check_int(s, "s", minimum=1)
    D1, D2 = _D(_pos(D1, "D1")), _D(_pos(D2, "D2"))
    return _float(2 * _D(beta) ** n * c_norm + D1 / _sqrt(s) * kappa1
                  + D2 * ((res**2 / m + lam * c_norm**2) / (1 + lam)).sqrt())


def _risk_epsilon(N, m, gamma, sigma, d, delta) -> Decimal:
    inner = 12 / _D(d) * (_ln(m) - _ln(delta))  # > 0: m >= 1 > delta
    return (1 + 4 * _D(gamma) * _D(sigma) * d * (1 + inner.sqrt()).sqrt()
            + (_ln_inv(delta) / 2).sqrt()) / _sqrt(N)


@_closed_form
def harfe_risk_epsilon(N: int, m: int, *, gamma: float, sigma: float, d: int,
                       delta: float) -> float:
    r"""The approximation accuracy :math:`\epsilon` of HARFE Sec. 3 (after eq. (19)).

    .. math::

        \epsilon = \frac{1}{\sqrt N}\Big(1 + 4\gamma\sigma d \sqrt{1 +
        \sqrt{\tfrac{12}{d}\log\tfrac{m}{\delta}}} +
        \sqrt{\tfrac12\log\tfrac1\delta}\Big)

    (from Hashemi et al. 2021; :math:`\|Ac^* - y\|_\infty \le \epsilon
    \|f\|_\rho`).  Also condition (2) of SHRIMP Thm 5 with N replaced by
    N / 4.  ``inf`` beyond the float range (no useful accuracy).
    """
    N, m = check_int(N, "N", minimum=1), check_int(m, "m", minimum=1)
    gamma, sigma = _pos(gamma, "gamma"), _pos(sigma, "sigma")
    d, delta = check_int(d, "d", minimum=1), _prob(delta)
    return _float(_risk_epsilon(N, m, gamma, sigma, d, delta))


class HarfeRiskBound(NamedTuple):
    r"""HARFE Thm 3.2 as printed and as its proof supports (see :func:`harfe_risk_bound`).

    Attributes
    ----------
    printed : HighProbabilityBound
        The theorem's statement, claimed with probability :math:`1 - 2\delta`.
    proof : HighProbabilityBound
        What the proof's second-to-last line gives once expanded, with the
        probability of its union bound, :math:`1 - 4\delta`.
    """

    printed: HighProbabilityBound
    proof: HighProbabilityBound


@_closed_form
def harfe_risk_bound(
    *, N: int, m: int, s: int, lam: float, delta: float, eps: float,
    f_rho_norm: float, kappa1: float, noise_bound: float, C: float = 1.0, D: float = 1.0,
) -> HarfeRiskBound:
    r"""HARFE Thm 3.2 risk bound, as printed and as its proof supports.

    With :math:`L = \log(1/\delta)`, :math:`t = 3^{-1/4}`, the proof ends
    (second-to-last line) with

    .. math::

        \|f - f^\sharp\| \le \epsilon\|f\|_\rho + \Big(t\,m^{-1/2} +
        N^{1/2}\big(\tfrac{2L}{m}\big)^{1/4}\Big)\Big(\sqrt{m(1+\lambda)}
        \tfrac{C}{\sqrt s}\kappa_{s,1}(c^*) + D\big(E +
        \sqrt{m\lambda/N}\,\|f\|_\rho\big)\Big).

    Multiplied out, its :math:`\|f\|_\rho` term is
    :math:`D\sqrt{\lambda/N}\,(t + N^{1/2}(2mL)^{1/4})\|f\|_\rho`; the
    theorem as printed has :math:`D\sqrt{\lambda/N}\,(t + (2mL)^{1/4})
    \|f\|_\rho`, smaller by a factor :math:`\sqrt N` in its second part.  The
    :math:`\kappa` and E terms agree with the line above:

    .. math::

        R(f^\sharp) \le \|f\|_\rho\Big(\epsilon + D\sqrt{\tfrac{\lambda}{N}}
        \big(t + N^{1/2}(2mL)^{1/4}\big)\Big)
        + C\sqrt{\tfrac{1+\lambda}{s}}\big(t + N^{1/2}(2mL)^{1/4}\big)\kappa_{s,1}(c^*)
        + DE\big(t\,m^{-1/2} + N^{1/2}(\tfrac2m L)^{1/4}\big)

    (``proof``; ``printed`` is the same with :math:`N^{1/2}` dropped from the
    first term).  The statement claims probability :math:`1 - 2\delta`; the
    proof collects :math:`3\delta` (Thm 3.1's :math:`2\delta` and
    McDiarmid's :math:`\delta`) before it adds eq. (15), which fails with
    probability :math:`\delta`, so its union bound gives :math:`1 - 4\delta`.
    Both values are reported.

    Parameters
    ----------
    N, m, s : int
    lam, delta, eps : float
    f_rho_norm, kappa1 : float
        :math:`\|f\|_\rho` and :math:`\kappa_{s,1}(c^*)`.
    noise_bound : float
        E, with :math:`\|e\|_2 \le E`.
    C, D : float
        Constants depending on :math:`\delta_{6s}(B)` (default 1).

    Returns
    -------
    HarfeRiskBound
        ``printed`` and ``proof``, each a :class:`HighProbabilityBound`
        ``(value, probability)``; ``proof.value >= printed.value``.  A value
        beyond the float range is ``inf`` (the bound is vacuous).
    """
    N, m = check_int(N, "N", minimum=1), check_int(m, "m", minimum=1)
    lam, delta, s = _harfe_common(lam, delta, s)
    eps, f = _D(_nonneg(eps, "eps")), _D(_nonneg(f_rho_norm, "f_rho_norm"))
    kappa1, E = _D(_nonneg(kappa1, "kappa1")), _D(_nonneg(noise_bound, "noise_bound"))
    C, D = _D(_pos(C, "C")), _D(_pos(D, "D"))
    lam = _D(lam)
    t = Decimal(3) ** Decimal("-0.25")
    L = _ln_inv(delta)
    root_N = _sqrt(N)
    q = (2 * m * L) ** Decimal("0.25")
    kappa_term = C * ((1 + lam) / s).sqrt() * (t + root_N * q) * kappa1
    noise_term = D * E * (t / _sqrt(m) + root_N * (2 / _D(m) * L) ** Decimal("0.25"))
    f_scale = D * (lam / N).sqrt()
    printed = f * (eps + f_scale * (t + q)) + kappa_term + noise_term
    proof = f * (eps + f_scale * (t + root_N * q)) + kappa_term + noise_term
    delta = _D(delta)
    return HarfeRiskBound(
        HighProbabilityBound(_float(printed), _float(max(1 - 2 * delta, Decimal(0)))),
        HighProbabilityBound(_float(proof), _float(max(1 - 4 * delta, Decimal(0)))),
    )


@_closed_form
def lemma_a3_min_features(eps: float, delta: float) -> float:
    r"""Features needed by HARFE Lemma A.3 (Rahimi-Recht 2008, Lemma 1).

    .. math:: N \ge \epsilon^{-2}\big(1 + \sqrt{2\log(1/\delta)}\big)^2

    gives :math:`\|f - f^*\|_{L^2(d\mu)} \le \epsilon\|f\|_\rho` with
    probability :math:`\ge 1 - \delta` over the weights.  ``inf`` beyond the
    float range (unattainable).

    Examples
    --------
    >>> round(lemma_a3_min_features(0.1, 0.05), 1)
    1188.7
    """
    eps, delta = _pos(eps, "eps"), _prob(delta)
    return _float((1 + (2 * _ln_inv(delta)).sqrt()) ** 2 / _D(eps) ** 2)


@_closed_form
def lemma_a3_epsilon(N: int, delta: float) -> float:
    r"""Accuracy of HARFE Lemma A.3 for a given N: :math:`(1+\sqrt{2\log(1/\delta)})/\sqrt N`."""
    N, delta = check_int(N, "N", minimum=1), _prob(delta)
    return _float((1 + (2 * _ln_inv(delta)).sqrt()) / _sqrt(N))


# =========================================================== SHRIMP (001)
def _shrimp_ratio(gamma, sigma) -> Decimal:
    gamma, sigma = _pos(gamma, "gamma"), _pos(sigma, "sigma")
    return 4 * _D(gamma) ** 2 * _D(sigma) ** 2 + 1


@_closed_form
def shrimp_prop7_bounds(m: int, N: int, *, q: int, gamma: float, sigma: float) -> Prop7Bounds:
    r"""SHRIMP Prop. 7: bounds on the expected extreme eigenvalues of :math:`AA^*/N`.

    For :math:`x \sim N(0, \gamma^2 I_d)`, :math:`\omega \sim N(0, \sigma^2
    I_q)`, :math:`a_{jk} = e^{i\langle x_j, \omega_k\rangle}`, :math:`m \le N`,
    :math:`c = N/m` and :math:`r = 4\gamma^2\sigma^2 + 1`:

    .. math::

        \mathbb{E}\lambda_1 &\ge 2 - \frac{(N-1)m}{N^2} +
            \frac{(N-1)(m^2-m)}{N^2} r^{-q/4} \quad\text{(9), printed}\\
        \mathbb{E}\lambda_1 &\ge 1 + \frac{(N-1)m}{N^2} +
            \frac{(N-1)(m^2-m)}{N^2} r^{-q/4} \quad\text{(32), the proof}\\
        \mathbb{E}\lambda_1 &\ge 1 + \frac{m-1}{N} + \frac{(N-1)(m-1)}{N}
            r^{-q/2} \quad\text{(exact Rayleigh quotient at } a_1/\sqrt m)\\
        \mathbb{E}\lambda_m &\le \frac{c-1}{c} + \frac1m +
            \Big(\frac{c-1}{c}m + 1\Big) r^{-q/4} \quad\text{(10)}

    The third line is derived here: with :math:`z = a_1/\sqrt m`,
    :math:`\frac1N z^*AA^*z = \frac{1}{Nm}\sum_\ell |a_\ell^* a_1|^2`, and
    :math:`\mathbb{E}\,e^{i\langle x_j - x_k, \omega_1 - \omega_\ell\rangle}
    = r^{-q/2}` for :math:`j \ne k`, :math:`\ell \ne 1`.  Always
    :math:`\lambda_1 \ge 1 \ge \lambda_m` (the trace is m).

    Returns
    -------
    Prop7Bounds
        Every field finite for finite inputs (``inf`` only if a value left
        the float range, which these bounded expressions cannot).
    """
    m, N = check_int(m, "m", minimum=1), check_int(N, "N", minimum=1)
    if m > N:
        raise ValueError(f"Prop. 7 needs m <= N, got m={m}, N={N}")
    q = check_int(q, "q", minimum=1)
    r = _shrimp_ratio(gamma, sigma)
    f4, f2 = r ** (-_D(q) / 4), r ** (-_D(q) / 2)
    mD, ND = _D(m), _D(N)
    c = ND / mD
    third = (ND - 1) * (mD * mD - mD) / ND**2 * f4
    printed = 2 - (ND - 1) * mD / ND**2 + third
    eq32 = 1 + (ND - 1) * mD / ND**2 + third
    rayleigh = 1 + (mD - 1) / ND + (ND - 1) * (mD - 1) / ND * f2
    lam_min = (c - 1) / c + 1 / mD + ((c - 1) / c * mD + 1) * f4
    return Prop7Bounds(*map(_float, (printed, eq32, rayleigh, lam_min, c)))


@_closed_form
def shrimp_remark8_bound(N: int, *, q: int, gamma: float, sigma: float,
                         p: float) -> HighProbabilityBound:
    r"""SHRIMP Remark 8 (N = m): :math:`\lambda_m(AA^*/N) \le N^p r^{-q/4} + N^{p-1}`.

    Holds with probability :math:`\ge 1 - N^{-p}` (Markov), :math:`0 < p < 1`,
    :math:`r = 4\gamma^2\sigma^2 + 1`.  ``inf`` beyond the float range
    (vacuous).
    """
    N, q = check_int(N, "N", minimum=1), check_int(q, "q", minimum=1)
    p = _D(_prob(p, "p"))
    r = _shrimp_ratio(gamma, sigma)
    ND = _D(N)
    return HighProbabilityBound(_float(ND**p * r ** (-_D(q) / 4) + ND ** (p - 1)),
                                _float(1 - ND ** (-p)))


@_closed_form
def shrimp_thm5_coherence_requirement(s: int) -> float:
    r"""Coherence SHRIMP Thm 5's proof needs: :math:`\mu_A \le 4/(\sqrt{41}(2s-1))`."""
    s = check_int(s, "s", minimum=1)
    return _float(4 / (_sqrt(41) * (2 * s - 1)))


@_closed_form
def shrimp_thm5_max_sparsity(mu: float) -> int:
    r"""Largest s with :math:`\mu \le 4/(\sqrt{41}(2s-1))` (0 if even s = 1 fails).

    An exact (possibly very large) Python int for every ``mu`` in (0, 1].
    """
    mu = check_real(mu, "mu", minimum=0.0, maximum=1.0)
    if mu == 0.0:
        raise ValueError("mu must be > 0 (every s satisfies the requirement), got 0.0")
    s = int(((4 / (_sqrt(41) * _D(mu)) + 1) / 2 + Decimal("1e-12")).to_integral_value(
        rounding=decimal.ROUND_FLOOR))
    # the tolerance above lets a mu at a boundary count as meeting it; the
    # answer must meet the requirement as shrimp_thm5_coherence_requirement
    # (and shrimp_thm5_conditions) evaluate it, a mu one ulp above does not
    while s >= 1 and _float(4 / (_sqrt(41) * (2 * s - 1))) < mu:
        s -= 1
    return max(0, s)


def _min_variance(s, d) -> Decimal:
    return ((_sqrt(41) * (2 * s - 1) / 2) ** (2 / _D(d)) - 1) / 2


@_closed_form
def shrimp_thm5_min_variance(s: int, d: int) -> float:
    r"""SHRIMP Thm 5 condition (1): the smallest :math:`\gamma^2\sigma^2`.

    .. math:: \gamma^2\sigma^2 \ge \frac12\Big(\Big(\frac{\sqrt{41}(2s-1)}{2}
        \Big)^{2/d} - 1\Big)

    (Cor. 6 uses ``d = q``.)  ``inf`` beyond the float range (unattainable).
    """
    s, d = check_int(s, "s", minimum=1), check_int(d, "d", minimum=1)
    return _float(_min_variance(s, d))


@_closed_form
def shrimp_thm5_features(eps: float, m: int, *, gamma: float, sigma: float, d: int,
                         delta: float) -> float:
    r"""SHRIMP Thm 5 condition (2): the number of features for accuracy eps.

    .. math:: N = \frac{4}{\epsilon^2}\Big(1 + 4\gamma\sigma d\sqrt{1 +
        \sqrt{\tfrac{12}{d}\log\tfrac m\delta}} + \sqrt{\tfrac12\log\tfrac1\delta}\Big)^2

    ``inf`` beyond the float range (unattainable).
    """
    eps = _pos(eps, "eps")
    m = check_int(m, "m", minimum=1)
    gamma, sigma = _pos(gamma, "gamma"), _pos(sigma, "sigma")
    d, delta = check_int(d, "d", minimum=1), _prob(delta)
    e1 = _risk_epsilon(1, m, gamma, sigma, d, delta)
    return _float(4 * e1**2 / _D(eps) ** 2)


@_closed_form
def shrimp_thm5_conditions(m: int, N: int, s: int, *, gamma: float, sigma: float, d: int,
                           delta: float, mu: float | None = None) -> Conditions:
    r"""Sufficient conditions (1), (3) and the coherence condition of SHRIMP Thm 5.

    (1) :math:`\gamma^2\sigma^2 \ge` :func:`shrimp_thm5_min_variance`;
    (3) :math:`m \ge 4(2\gamma^2\sigma^2 + 1)^d \log(N^2/\delta)`;
    coherence (used in the proof, eq. (16)) :math:`4/(\sqrt{41}(2s-1)) \ge
    \mu`, only when ``mu`` is given (e.g. :func:`coherence` of your matrix).
    Condition (2) defines N from epsilon (:func:`shrimp_thm5_features`).
    A side beyond the float range is ``inf``; ``holds`` uses exact values.
    """
    m, N = check_int(m, "m", minimum=1), check_int(N, "N", minimum=1)
    s, d, delta = check_int(s, "s", minimum=1), check_int(d, "d", minimum=1), _prob(delta)
    gs = _D(_pos(gamma, "gamma")) ** 2 * _D(_pos(sigma, "sigma")) ** 2
    names = ["variance", "samples"]
    lhs = [gs, _D(m)]
    rhs = [_min_variance(s, d), 4 * (2 * gs + 1) ** d * (2 * _ln(N) + _ln_inv(delta))]
    if mu is not None:
        names.append("coherence")
        lhs.append(4 / (_sqrt(41) * (2 * s - 1)))
        rhs.append(_D(check_real(mu, "mu", minimum=0.0, maximum=1.0)))
    holds = tuple(bool(a >= b) for a, b in zip(lhs, rhs))
    return Conditions(tuple(names), tuple(map(_float, lhs)), tuple(map(_float, rhs)), holds,
                      all(holds))


@_closed_form
def shrimp_thm5_coef_error_bound(
    *, eps: float, f_rho_norm: float, nu: float, kappa1: float, lam_max: float, m: int,
    kappa2: float | None = None, C: float = 1.0,
) -> float:
    r"""SHRIMP Thm 5: bound on :math:`\|c_s^* - c^\sharp|_{S^\sharp}\|_2`.

    .. math:: C\min\Big\{2\sqrt{\epsilon^2\|f\|_\rho^2 + 2\nu^2 + \kappa_{s,1}^2},\
        \sqrt{2(\epsilon^2\|f\|_\rho^2 + 4\nu^2)} +
        \sqrt{\lambda_{\max}(A^*A)/m}\ \kappa_{s,2}\Big\}

    ``kappa2`` defaults to :math:`\epsilon\|f\|_\rho` (eq. (89) of Hashemi et
    al., as in the statement of Thm 5).  ``inf`` beyond the float range
    (vacuous).
    """
    eps, f = _D(_nonneg(eps, "eps")), _D(_nonneg(f_rho_norm, "f_rho_norm"))
    nu, kappa1 = _D(_nonneg(nu, "nu")), _D(_nonneg(kappa1, "kappa1"))
    lam_max, m = _D(_nonneg(lam_max, "lam_max")), check_int(m, "m", minimum=1)
    kappa2 = eps * f if kappa2 is None else _D(_nonneg(kappa2, "kappa2"))
    C = _D(_pos(C, "C"))
    a = 2 * (eps**2 * f**2 + 2 * nu**2 + kappa1**2).sqrt()
    b = (2 * (eps**2 * f**2 + 4 * nu**2)).sqrt() + (lam_max / m).sqrt() * kappa2
    return _float(C * min(a, b))


@_closed_form
def shrimp_thm5_bound(*, m: int, s: int, delta: float, coef_error: float,
                      kappa1: float) -> float:
    r"""SHRIMP Thm 5, eq. (8): generalisation error of thresholded BP.

    .. math:: \Big(\frac8m\log\frac1\delta\Big)^{1/4}\big(2s\,e^2 +
        \kappa_{s,1}(c^*)^2\big)^{1/2} + 2e + \kappa_{s,1}(c^*),
        \qquad e = \|c_s^* - c^\sharp|_{S^\sharp}\|_2

    (probability :math:`\ge 1 - 5\delta`).  ``inf`` beyond the float range
    (vacuous).
    """
    m, s, delta = check_int(m, "m", minimum=1), check_int(s, "s", minimum=1), _prob(delta)
    e, k = _D(_nonneg(coef_error, "coef_error")), _D(_nonneg(kappa1, "kappa1"))
    return _float((8 / _D(m) * _ln_inv(delta)) ** Decimal("0.25")
                  * (2 * s * e**2 + k**2).sqrt() + 2 * e + k)


@_closed_form
def shrimp_cor6_conditions(m: int, N: int, s: int, *, q: int, d: int, gamma: float,
                           sigma: float, delta: float) -> Conditions:
    r"""Sufficient conditions of SHRIMP Cor. 6 (order-q functions).

    .. math::

        \gamma^2\sigma^2 &\ge \tfrac12\big((\sqrt{41}(2s-1)/2)^{2/q} - 1\big),\\
        m &\ge 4(2\gamma^2\sigma^2+1)^{\max\{2q-d, 0\}}
            (\gamma^2\sigma^2+1)^{\min\{2q, 2d-2q\}}\log\frac{N^2}{\delta}.

    A side beyond the float range is ``inf``; ``holds`` uses exact values.
    """
    m, N, s = (check_int(m, "m", minimum=1), check_int(N, "N", minimum=1),
               check_int(s, "s", minimum=1))
    d = check_int(d, "d", minimum=1)
    q = check_int(q, "q", minimum=1, maximum=d)
    delta = _prob(delta)
    gs = _D(_pos(gamma, "gamma")) ** 2 * _D(_pos(sigma, "sigma")) ** 2
    need_m = (4 * (2 * gs + 1) ** max(2 * q - d, 0) * (gs + 1) ** min(2 * q, 2 * d - 2 * q)
              * (2 * _ln(N) + _ln_inv(delta)))
    lhs, rhs = (gs, _D(m)), (_min_variance(s, q), need_m)
    holds = tuple(bool(a >= b) for a, b in zip(lhs, rhs))
    return Conditions(("variance", "samples"), tuple(map(_float, lhs)),
                      tuple(map(_float, rhs)), holds, all(holds))


def _rr_log_constant(sigma_p, diam) -> Decimal:
    r""":math:`\log(2^8 (\sigma_p\,\mathrm{diam})^2)`, term by term (no overflow)."""
    return 8 * _ln(2) + 2 * (_ln(sigma_p) + _ln(diam))


@_closed_form
def rahimi_recht_tail(eps: float, N: int, *, d: int, sigma_p: float, diam: float) -> float:
    r"""Rahimi-Recht kernel-approximation tail bound (SHRIMP eq. (35)).

    .. math:: \Pr\Big[\sup_{x,y\in\mathcal M}|z(x)'z(y) - k(x,y)| \ge \epsilon\Big]
        \le 2^8\Big(\frac{\sigma_p\,\mathrm{diam}(\mathcal M)}{\epsilon}\Big)^2
        \exp\Big(-\frac{N\epsilon^2}{4(d+2)}\Big)

    :math:`\sigma_p^2 = \mathbb{E}\|\omega\|^2` (:math:`d\sigma^2` for
    :math:`N(0, \sigma^2 I_d)` weights).  Returned capped at 1, evaluated in
    logarithms, so it is always in [0, 1] (never inf).
    """
    eps, N = _pos(eps, "eps"), check_int(N, "N", minimum=1)
    d = check_int(d, "d", minimum=1)
    sigma_p, diam = _pos(sigma_p, "sigma_p"), _pos(diam, "diam")
    log_val = (_rr_log_constant(sigma_p, diam) - 2 * _ln(eps)
               - N * _D(eps) ** 2 / (4 * (_D(d) + 2)))
    return _float(min(log_val, Decimal(0)).exp())


def _lambert_w_of_exp(L: Decimal) -> Decimal:
    r"""The principal :math:`W(e^L)`, i.e. the root :math:`w > 0` of :math:`w + \log w = L`.

    Newton's method on :math:`g(w) = w + \log w - L` (increasing and concave):
    :math:`w \leftarrow w(1 + L - \log w)/(1 + w)`, started at :math:`e^L`
    for :math:`L < 1` and at :math:`L \ge W(e^L)` otherwise; iterates stay
    positive and converge monotonically after the first step.  At most 200
    steps (quadratic convergence needs a few dozen even for :math:`L = 10^{18}`).
    """
    w = L.exp() if L < 1 else L
    if w == 0:  # e^L below the decimal range: W(x) = x + O(x^2) = 0 here
        return w
    for _ in range(200):
        new = w * (1 + L - w.ln()) / (1 + w)
        if abs(new - w) <= abs(new) * Decimal("1e-30"):
            return new
        w = new
    return w


@_closed_form
def rahimi_recht_epsilon(N: int, delta: float, *, d: int, sigma_p: float, diam: float) -> float:
    r"""The eps at which :func:`rahimi_recht_tail` equals ``delta``, in closed form.

    With :math:`u = \log\epsilon^2`, :math:`b = N/(4(d+2))` and
    :math:`a = \log(2^8\sigma_p^2\mathrm{diam}^2/\delta)`, the equation is
    :math:`a - u - b e^u = 0`, whose root is :math:`u = a - W(b e^a)`
    (Lambert W, evaluated by :func:`_lambert_w_of_exp` without forming
    :math:`e^a`).  ``inf`` when the root is beyond the float range.
    """
    N, delta = check_int(N, "N", minimum=1), _prob(delta)
    d = check_int(d, "d", minimum=1)
    sigma_p, diam = _pos(sigma_p, "sigma_p"), _pos(diam, "diam")
    a = _rr_log_constant(sigma_p, diam) + _ln_inv(delta)
    b = _D(N) / (4 * (_D(d) + 2))
    u = a - _lambert_w_of_exp(b.ln() + a)
    return _float((u / 2).exp())


@_closed_form
def rahimi_recht_min_features(eps: float, delta: float, *, d: int, sigma_p: float,
                              diam: float) -> float:
    r"""N making :func:`rahimi_recht_tail` at most ``delta``.

    .. math:: N \ge \frac{4(d+2)}{\epsilon^2}\log\Big(\frac{2^8(\sigma_p
        \mathrm{diam}/\epsilon)^2}{\delta}\Big)

    (0 when the logarithm is negative).  ``inf`` beyond the float range
    (unattainable).
    """
    eps, delta = _pos(eps, "eps"), _prob(delta)
    d = check_int(d, "d", minimum=1)
    sigma_p, diam = _pos(sigma_p, "sigma_p"), _pos(diam, "diam")
    log_term = _rr_log_constant(sigma_p, diam) - 2 * _ln(eps) + _ln_inv(delta)
    return _float(max(Decimal(0), 4 * (_D(d) + 2) / _D(eps) ** 2 * log_term))


# ========================================================= Metropolis (004)
def metropolis_optimal_exponent(d: int) -> int:
    r"""Optimal Metropolis exponent :math:`\gamma^* = 3d - 2` (Kammonen et al., Remark 3.2).

    Minimises the work :math:`\epsilon^{-3}(1 + 2/\gamma)^{3d/2} d\gamma\sigma^{-2}`
    over :math:`\gamma` (see :func:`metropolis_relative_work`).
    """
    return 3 * check_int(d, "d", minimum=1) - 2


@_closed_form
def metropolis_relative_work(gamma: float, d: int) -> float:
    r"""Work of adaptive Metropolis RFF up to :math:`\gamma`-free factors, Remark 3.2.

    .. math:: W(\gamma) = \gamma\,(1 + 2/\gamma)^{3d/2},

    minimal at :math:`\gamma = 3d - 2`.  ``inf`` beyond the float range.
    """
    gamma, d = _pos(gamma, "gamma"), check_int(d, "d", minimum=1)
    g = _D(gamma)
    return _float(g * (1 + 2 / g) ** (Decimal("1.5") * d))


def metropolis_optimal_density(f_hat, *, cell_volume: float = 1.0) -> np.ndarray:
    r"""Optimal frequency density :math:`p_* = |\hat f| / \|\hat f\|_{L^1}` on a grid.

    Kammonen et al., Sec. 2.3 and Remark 3.2; ``f_hat`` holds Fourier
    transform values on a grid of cells of volume ``cell_volume``, so the
    result integrates to 1.
    """
    f_hat = check_array(f_hat, "f_hat", ndim=(1, 2, 3), allow_complex=True)
    vol = _pos(cell_volume, "cell_volume")
    mag = np.abs(f_hat)
    total = mag.sum() * vol
    if total == 0:
        raise ValueError("f_hat must not be identically zero")
    return mag / total


def _warmup():
    """Compile the kernels (two signatures of the coherence kernel, one greedy)."""
    coherence(np.eye(3) + 0.1)
    coherence(np.eye(3) + 0.1j)
    rip_lower_bound(np.eye(3) + 0.1, 2, method="greedy", n_trials=1, scale=1.0, rng=0)


if __name__ == "__main__":  # pragma: no cover
    import doctest

    doctest.testmod()
