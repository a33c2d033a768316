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

import itertools
import math
from decimal import Decimal
from typing import NamedTuple

import numpy as np
import scipy.linalg

from rflite._core.random import check_rng
from rflite._core.validation import check_array, check_choice, check_int
from rflite._core.naming import publish
from rflite._theory.harfe import (  # noqa: F401 - public here; its helpers stay importable
    _MAX_SAMPLES,
    _harfe_common,
    _harfe_max_features,
    _harfe_sample_sides,
    _risk_epsilon,
    harfe_max_features,
    harfe_min_samples,
    harfe_risk_bound,
    harfe_risk_epsilon,
    harfe_thm31_bound,
    harfe_thm31_conditions,
    lemma_a3_epsilon,
    lemma_a3_min_features,
)
from rflite._theory.kernels import (  # noqa: F401 - re-exported, helpers too
    _D,
    _ONE,
    BLOCK_ENTRIES,
    RIPEstimate,
    _best_of_supports,
    _check_nonzero_columns,
    _closed_form,
    _column_norms,
    _float,
    _gram_blocks,
    _greedy,
    _is_operator,
    _ln,
    _ln_inv,
    _masked_block_max,
    _matrix,
    _nonneg,
    _pos,
    _prob,
    _scaling,
    _small_blas,
    _sqrt,
)
from rflite._theory.results import (  # the result types, public here
    Conditions,
    HarfeRiskBound,
    HighProbabilityBound,
    Prop7Bounds,
)
from rflite._theory.shrimp import (  # noqa: F401 - public here; its helpers stay importable
    _lambert_w_of_exp,
    _min_variance,
    _rr_log_constant,
    _shrimp_ratio,
    rahimi_recht_epsilon,
    rahimi_recht_min_features,
    rahimi_recht_tail,
    shrimp_cor6_conditions,
    shrimp_prop7_bounds,
    shrimp_remark8_bound,
    shrimp_thm5_bound,
    shrimp_thm5_coef_error_bound,
    shrimp_thm5_coherence_requirement,
    shrimp_thm5_conditions,
    shrimp_thm5_features,
    shrimp_thm5_max_sparsity,
    shrimp_thm5_min_variance,
)

publish(
    __name__,
    RIPEstimate, Conditions, HarfeRiskBound, HighProbabilityBound, Prop7Bounds,
        harfe_max_features, harfe_min_samples, harfe_risk_bound, harfe_risk_epsilon,
        harfe_thm31_bound, harfe_thm31_conditions, lemma_a3_epsilon, lemma_a3_min_features,
        rahimi_recht_epsilon, rahimi_recht_min_features, rahimi_recht_tail,
        shrimp_cor6_conditions, shrimp_prop7_bounds, shrimp_remark8_bound, shrimp_thm5_bound,
        shrimp_thm5_coef_error_bound, shrimp_thm5_coherence_requirement,
        shrimp_thm5_conditions, shrimp_thm5_features, shrimp_thm5_max_sparsity,
        shrimp_thm5_min_variance,
)

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
# HARFE's are in rflite._theory.harfe, SHRIMP's and Rahimi-Recht's in
# rflite._theory.shrimp; all evaluated in decimal arithmetic (@_closed_form).


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
