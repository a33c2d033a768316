"""The warnings of :mod:`rflite.bp` and the tests that issue them.

A BPDN result that cannot meet ``sigma``, stopped infeasible, or stopped
feasible without its duality gap checked says so in its ``stop_reason``;
the functions and estimators of :mod:`rflite.bp` also warn, through
:func:`_warn_unreachable` and :func:`_warn_uncertified` (public classes
re-exported there).
"""

from __future__ import annotations

import math

import numpy as np
from rflite._core.exceptions import warn


class SigmaUnreachableWarning(RuntimeWarning):
    """BPDN's constraint ``‖A c - y‖ <= sigma`` cannot be met by any ``c``.

    Issued by :func:`bpdn`, :func:`basis_pursuit`, :func:`srfe` and
    :class:`SRFERegressor` when the least-squares residual of ``A`` is above
    ``sigma``; the result (``stop_reason="sigma_unreachable"``) then holds the
    least-squares fit, which is generally dense.
    """


class InfeasibleResultWarning(RuntimeWarning):
    """A BPDN solve returned a point that misses ``‖A c - y‖ <= sigma``.

    Uncertified: e.g. ``max_iter`` on a wide matrix-free operator, where the
    least-squares test that would say ``"sigma_unreachable"`` is not run
    (it is run for dense matrices and for tall operators with a Gram, such
    as the Dask operator): sigma may be unreachable, or the solver may need
    more iterations.  Certified: sigma is below the absolute slack
    ``BP_TOL ‖y‖`` a residual is computed to (sigma under about
    ``1e-8 ‖y‖``), and the point meets the constraint only with that slack
    (``L1Result.constraint_excess`` says by how much it misses).
    """


class UncertifiedResultWarning(RuntimeWarning):
    """An estimator's BPDN solve stopped at a feasible point it could not certify.

    Issued by :class:`SRFERegressor` and :class:`SRFECV` (in memory and on
    Dask) when the final solve ends with one of :data:`UNCERTIFIED_STOPS`:
    the coefficients meet ``‖A c - y‖ <= sigma`` but their relative duality
    gap (``result_.bpdn.duality_gap``) is above ``tol``, so they may be far
    from l1-optimal.  Seen on numerically rank-deficient dictionaries with a
    small ``eta`` (200 rows of 300 centred sin features, condition 1e14, at
    ``eta`` = 0.01: l1 norm 3e7, gap 0.69).  The functions (:func:`bpdn`,
    :func:`srfe`) do not warn: their result's ``stop_reason`` and
    :attr:`L1Result.certified` say it.
    """


#: Stop reasons of a solver that ran out of iterations or stopped on a
#: heuristic test (``"path"``, the Dask search's exact homotopy point whose
#: gap is not computed, and ``"sigma_unreachable"`` have warnings of their own
#: or none).
UNCERTIFIED_STOPS = frozenset({"max_iter", "line_search", "lp_inexact", "root_found",
                               "bp_solution"})


def _warn_uncertified(est, res, sigma):
    """:class:`UncertifiedResultWarning` for an estimator's feasible, uncertified BPDN result."""
    if res.stop_reason in UNCERTIFIED_STOPS and res.residual_norm <= sigma * (1.0 + 1e-3):
        warn(
            f"{type(est).__name__}: BPDN stopped ({res.stop_reason!r}) at a feasible point "
            f"with relative duality gap {res.duality_gap:.3g} above tol = {est.tol:g}: the "
            "coefficients meet the constraint but are not certified l1-optimal "
            "(result_.bpdn); a larger eta, fewer features or a larger max_iter may help",
            UncertifiedResultWarning)


def _warn_unreachable(res, sigma, m):
    """Issue :class:`SigmaUnreachableWarning` for a ``"sigma_unreachable"`` result,
    :class:`InfeasibleResultWarning` for an uncertified point clearly above sigma."""
    if (res.stop_reason != "sigma_unreachable" and not res.certified and sigma > 0
            and res.residual_norm > sigma * (1.0 + 1e-3)):
        warn(
            f"BPDN stopped ({res.stop_reason!r}, not certified) at residual "
            f"{res.residual_norm:.6g} above sigma = {sigma:.6g}: the coefficients do not "
            "meet the constraint; sigma may be below the least-squares residual "
            "(not tested on a wide operator) or the solve needs a larger max_iter",
            InfeasibleResultWarning)
    if res.certified and sigma > 0 and res.residual_norm > sigma * (1.0 + 1e-6):
        warn(
            f"BPDN certified a point whose residual {res.residual_norm:.6g} exceeds "
            f"sigma = {sigma:.6g} by {100 * (res.residual_norm / sigma - 1):.3g} %: below "
            "about 1e-8 ||y||, sigma is smaller than the absolute slack BP_TOL ||y|| the "
            "residual is computed to, so the l1 bound holds for the constraint with that "
            "slack (result.constraint_excess, result.feasible)",
            InfeasibleResultWarning)
    if res.stop_reason == "sigma_unreachable":
        warn(
            f"sigma = {sigma:.6g} is below the least-squares residual "
            f"{res.residual_norm:.6g} of A: no coefficient vector meets the constraint, "
            f"so the least-squares fit ({int(np.count_nonzero(res.coef))} nonzero "
            f"coefficients) was returned; use sigma >= {res.residual_norm:.6g} "
            f"(eta >= {res.residual_norm / math.sqrt(m):.6g}) for a sparse solution",
            SigmaUnreachableWarning)
