r"""The numba kernels of the feature maps (private, for :mod:`rflite.features`).

The sparse pre-activation :math:`X W^T + b` by gathers (:func:`_preactivation`),
its fused form with the vectorisable sincos (:func:`_trig_rows`), the in-place
sincos of a BLAS product tile (:func:`_trig_inplace`), the selected-column and
store helpers, and the partial Fisher-Yates draw of q-subsets.  Split out of
:mod:`rflite.features` (which imports them, and whose module notes say which
path each transform takes) so that the public module stays readable.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from rflite._core.sincos import SINCOS_MAX_ABS, absmax, cos_only, sin_only, sincos


@njit(cache=True, nogil=True)
def _preactivation(X, r0, r1, supports, values, bias, out):  # pragma: no cover - jitted
    r"""Rows ``r0:r1`` of :math:`X W^T + b` for compactly stored sparse ``W``.

    ``out[i - r0, j] = bias[j] + sum_k X[i, supports[j, k]] * values[j, k]``:
    :math:`O((r_1 - r_0) N q)` work, the support tables stay in cache across rows.
    """
    n, q = supports.shape
    for i in range(r0, r1):
        x = X[i]
        o = out[i - r0]
        for j in range(n):
            acc = bias[j]
            for k in range(q):
                acc += x[supports[j, k]] * values[j, k]
            o[j] = acc


@njit(cache=True, nogil=True)
def _trig_rows(X, r0, r1, supports_t, values_t, bias, out, kind, amp, in_range):  # pragma: no cover - jitted
    r"""Rows ``r0:r1`` of :math:`\sin` / :math:`\cos` / :math:`[\cos|\sin]` of
    :math:`X W^T + b` for sparse ``W`` given by its transposed tables
    (``supports_t[k, j]``, ``values_t[k, j]``: term k of feature j), the
    pre-activation of a row computed into a buffer (same order of the sum as
    :func:`_preactivation`) and then stored through :func:`_trig_store`
    (``kind`` as :data:`TRIG_KINDS`).  ``in_range`` True (the caller has
    bounded every phase within :data:`rflite._core.sincos.SINCOS_MAX_ABS`,
    :func:`rflite._features.fill._phases_in_range`) skips the per-row range
    check; the values are the same either way.
    """
    q, n = supports_t.shape
    z = np.empty(n)
    for i in range(r0, r1):
        x = X[i]
        for j in range(n):
            z[j] = bias[j]
        for k in range(q):
            s = supports_t[k]
            v = values_t[k]
            for j in range(n):
                z[j] += x[s[j]] * v[j]
        _trig_store(z, out[i - r0], kind, amp, in_range)


@njit(cache=True, nogil=True)
def _trig_pick(Z, out, is_sin):  # pragma: no cover - jitted
    """``out[:, j] = sin(Z[:, j])`` where ``is_sin[j]`` else ``cos``: selected fourier columns."""
    for i in range(Z.shape[0]):
        z = Z[i]
        o = out[i]
        fast = absmax(z) <= SINCOS_MAX_ABS
        for j in range(z.size):
            if fast:
                sn, cs = sincos(z[j])
            else:
                sn, cs = math.sin(z[j]), math.cos(z[j])
            o[j] = sn if is_sin[j] else cs


@njit(cache=True, nogil=True)
def _trig_inplace(Z, bias, kind, amp, j0, j1, in_range):  # pragma: no cover - jitted
    r"""Columns ``j0:j1`` of ``Z[:, :n]`` become ``amp sin(Z + bias)`` (kind 0),
    ``amp cos(...)`` (1), or for fourier (2, ``Z`` with 2n columns) the cos, with
    the sin in columns ``n + j0 : n + j1``; ``n = bias.size``.

    In place on purpose, and through one array per loop: a loop writing an
    array that aliases its input through a *second* argument does not
    vectorise (LLVM's overlap check fails and the scalar loop runs, 12 ns an
    entry against 2.7).  The column range is an argument, not a view, so that
    the rows stay contiguous slices of a C-ordered ``Z`` and the loop
    vectorises (on a strided 2-d view it ran 5x slower).  Rows whose phases
    may exceed :data:`rflite._core.sincos.SINCOS_MAX_ABS` go through libm, as in
    :func:`_trig_store`; ``in_range`` True (the caller has bounded every phase)
    skips that per-row check, a fifth of the pass.
    """
    n = bias.size
    b = bias[j0:j1]
    bmax = absmax(b)
    for i in range(Z.shape[0]):
        row = Z[i]
        z = row[j0:j1]
        s = row[n + j0:n + j1] if kind == 2 else z
        if not in_range and z.size and absmax(z) + bmax > SINCOS_MAX_ABS:
            for j in range(z.size):
                v = z[j] + b[j]
                if kind == 0:
                    z[j] = amp * math.sin(v)
                elif kind == 1:
                    z[j] = amp * math.cos(v)
                else:
                    z[j] = amp * math.cos(v)
                    s[j] = amp * math.sin(v)
        elif kind == 0:
            for j in range(z.size):
                z[j] = amp * sin_only(z[j] + b[j])
        elif kind == 1:
            for j in range(z.size):
                z[j] = amp * cos_only(z[j] + b[j])
        else:
            for j in range(z.size):
                sn, cs = sincos(z[j] + b[j])
                z[j] = amp * cs
                s[j] = amp * sn


@njit(cache=True, nogil=True)
def _trig_store(z, o, kind, amp, in_range=False):  # pragma: no cover - jitted
    """``o = sin(z)``, ``cos(z)`` or ``[cos(z) | sin(z)]`` by the vectorisable
    :func:`rflite._core.sincos.sincos`; libm for rows with phases beyond its range
    (not checked when ``in_range``: the caller has bounded them)."""
    n = z.size
    if n == 0:
        return
    if not in_range and absmax(z) > SINCOS_MAX_ABS:
        for j in range(n):
            if kind == 0:
                o[j] = amp * math.sin(z[j])
            elif kind == 1:
                o[j] = amp * math.cos(z[j])
            else:
                c = math.cos(z[j])
                o[n + j] = amp * math.sin(z[j])
                o[j] = amp * c
        return
    if kind == 0:
        for j in range(n):
            o[j] = amp * sin_only(z[j])
    elif kind == 1:
        for j in range(n):
            o[j] = amp * cos_only(z[j])
    else:
        for j in range(n):
            sn, cs = sincos(z[j])
            o[n + j] = amp * sn
            o[j] = amp * cs


@njit(cache=True)
def _partial_fisher_yates(u, d, out):  # pragma: no cover - jitted
    """Row ``j`` of ``out``: a uniform random q-subset of ``range(d)``, sorted.

    Uses the ``q`` uniforms ``u[j]`` for ``q`` swap steps of a Fisher-Yates
    shuffle of a running permutation; any starting permutation gives a uniform
    subset, so the permutation is not reset between rows.
    """
    n, q = u.shape
    perm = np.arange(d)
    for j in range(n):
        for k in range(q):
            r = k + int(u[j, k] * (d - k))
            if r >= d:  # u rounds to 1.0 only in theory; stay in range
                r = d - 1
            tmp = perm[k]
            perm[k] = perm[r]
            perm[r] = tmp
            out[j, k] = perm[k]
        out[j].sort()
