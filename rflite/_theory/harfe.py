r"""The closed-form quantities of HARFE (Saha, Schaeffer, Tran 2023): Thm 3.1, 3.2, Lemma A.3.

Evaluated in the decimal arithmetic of :mod:`rflite._theory.kernels`
(``@_closed_form``); :mod:`rflite.theory` re-exports the public functions,
where the module docstring states what the checks of these bounds found.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal

from rflite._core.validation import check_int, check_real
from rflite._theory.kernels import (
    _D,
    _ONE,
    _closed_form,
    _float,
    _ln,
    _ln_inv,
    _nonneg,
    _pos,
    _prob,
    _sqrt,
)
from rflite._theory.results import Conditions, HarfeRiskBound, HighProbabilityBound

#: Largest m :func:`harfe_min_samples` searches (beyond it no float can hold m).
_MAX_SAMPLES = 2**1100


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
