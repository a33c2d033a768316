r"""The closed-form quantities of SHRIMP (Xie, Shi, Schaeffer, Ward 2022).

Thm 5, Cor. 6, Prop. 7, Remark 8, and the Rahimi-Recht tail bound of its
eq. (35), evaluated in the decimal arithmetic of
:mod:`rflite._theory.kernels` (``@_closed_form``); :mod:`rflite.theory`
re-exports the public functions.
"""

from __future__ import annotations

import decimal
from decimal import Decimal

from rflite._core.validation import check_int, check_real
from rflite._theory.harfe import _risk_epsilon
from rflite._theory.kernels import (
    _D,
    _closed_form,
    _float,
    _ln,
    _ln_inv,
    _nonneg,
    _pos,
    _prob,
    _sqrt,
)
from rflite._theory.results import Conditions, HighProbabilityBound, Prop7Bounds


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
