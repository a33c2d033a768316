"""Problem validation, solver options and the dispatch between the BPDN solvers."""

from __future__ import annotations


import numpy as np
from scipy.sparse.linalg import LinearOperator

from rflite._bp import homotopy as _homotopy, lp as _lp, spg as _spg
from rflite._bp.homotopy import _columns, _Products
from rflite._bp.lp import _bp_colgen
from rflite._bp.spgl1 import BP_TOL, MAX_ITER_FACTOR, L1Result, _solve_path
from rflite._core.validation import check_array, check_bool, check_choice, check_int, check_real


# =========================================================================
# internals: validation and products
# =========================================================================
def _check_problem(A, y):
    """Validate ``A`` (array or LinearOperator) and ``y``; return (op, y, is_complex)."""
    if isinstance(A, LinearOperator):
        op = A
        if len(op.shape) != 2:
            raise ValueError(f"A must be 2-dimensional, got shape {op.shape}")
        a_cplx = np.issubdtype(np.dtype(op.dtype), np.complexfloating)
    else:
        op = check_array(A, "A", ndim=2, allow_complex=True)
        a_cplx = np.iscomplexobj(op)
    y = check_array(y, "y", ndim=1, allow_complex=True)
    if y.shape[0] != op.shape[0]:
        raise ValueError(
            f"A and y must have the same number of rows, got A {op.shape} and y {y.shape}"
        )
    cplx = bool(a_cplx or np.iscomplexobj(y))
    y = np.ascontiguousarray(y, dtype=np.complex128 if cplx else np.float64)
    return op, y, cplx


def _options(op, tol, max_iter, x0, polish, method="auto"):
    check_choice(method, "method", ("auto", "homotopy", "spgl1"))
    tol = check_real(tol, "tol", minimum=0.0, strict=True, maximum=1.0)
    if max_iter is None:
        max_iter = max(1000, MAX_ITER_FACTOR * op.shape[0])
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    if x0 is not None:
        x0 = check_array(x0, "x0", ndim=1, allow_complex=True)
        if x0.shape[0] != op.shape[1]:
            raise ValueError(f"x0 must have length {op.shape[1]}, got {x0.shape[0]}")
    return {"tol": tol, "max_iter": max_iter, "x0": x0, "polish": check_bool(polish, "polish"),
            "method": method}


# =========================================================================
# internals: the SPGL1 loop
# =========================================================================
def _solve(op, y, cplx, *, sigma, tau, tol, max_iter, x0, polish, method,
           resume=None) -> L1Result:
    """Dispatch: column-generation LPs for large real basis pursuit, else :func:`_solve_path`.

    Real basis pursuit on dictionaries above ``LP_MAX_ENTRIES`` (with more
    columns than rows, dense or with ``columns``) goes first to
    :func:`rflite._bp.lp._bp_colgen`.  Its point is returned when certified
    (``"linprog"``), and also, uncertified (``"lp_inexact"``, finite gap),
    when the dictionary is numerically rank-deficient: there the homotopy's
    support solves lose their accuracy before lambda reaches 0 (on the
    140 x 20,000 SHRIMP q = 1 problem the path and its SPGL1 fallback took
    87 s to stop at ``max_iter`` with a residual of 1e-3 ``‖y‖``; the
    preconditioned rounds certify it).
    Otherwise the path runs and the LP point is kept if the path's end is
    not certified and the LP point is feasible with no larger l1 norm.
    """
    m, n = op.shape
    ynorm = float(np.linalg.norm(y))
    if (tau is None and sigma == 0.0 and not cplx and method == "auto" and x0 is None
            and ynorm > 0.0 and n > m and m * n > _lp.LP_MAX_ENTRIES
            and (isinstance(op, np.ndarray)
                 or (hasattr(op, "columns") and hasattr(op, "column_norms")))):
        P = _Products(op, False)
        feas = BP_TOL * ynorm
        norms = (np.sqrt(np.einsum("ij,ij->j", op, op)) if isinstance(op, np.ndarray)
                 else np.asarray(op.column_norms()))
        best, deficient = _bp_colgen(P, op, y, feas=feas, tol=tol, columns=_columns,
                                     colnorm=float(norms.max()))
        lp_res = None
        if best is not None:
            c_lp, rn_lp, l1_lp, gap_lp, rounds = best
            lp_res = L1Result(c_lp, rn_lp, l1_lp, gap_lp, rounds, P.count, l1_lp,
                              "linprog" if gap_lp <= tol else "lp_inexact")
            if gap_lp <= tol or deficient:
                return lp_res
        res = _solve_path(op, y, cplx, sigma=sigma, tau=tau, tol=tol, max_iter=max_iter,
                          x0=x0, polish=polish, method=method)
        res = res._replace(n_products=res.n_products + P.count)
        if lp_res is not None and not res.certified and (
                res.residual_norm > feas or lp_res.l1_norm <= res.l1_norm):
            return lp_res._replace(n_products=res.n_products)
        return res
    return _solve_path(op, y, cplx, sigma=sigma, tau=tau, tol=tol, max_iter=max_iter, x0=x0,
                       polish=polish, method=method, resume=resume)


def _warmup():
    """Compile the solvers' kernels (homotopy, exact LP dot products, l1 projection)."""
    for module in (_homotopy, _lp, _spg):
        module._warmup()
