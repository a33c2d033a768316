"""Result types of the closed-form bounds of :mod:`rflite.theory`.

Defined here, below the modules that build them (:mod:`rflite._theory.harfe`,
:mod:`rflite._theory.shrimp`); :mod:`rflite.theory` re-exports them as its own.
"""

from __future__ import annotations

from typing import NamedTuple


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
