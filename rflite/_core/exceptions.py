"""Warnings raised by the estimators (public through the modules that raise them)."""

from __future__ import annotations




class EffectiveFeaturesWarning(UserWarning):
    """The feature map has a different number of features than ``n_features`` asked for.

    SHRIMP's ``subsets="all"`` draws ``n_features // C(d, q)`` weights on each
    of the ``C(d, q)`` q-subsets, so it keeps fewer (recorded in
    ``n_features_``).
    """


class MagnitudeWarning(RuntimeWarning):
    r"""A fitted model's coefficients or predictions are out of proportion to the targets.

    Raised (as a warning) when the worst-case size of the fitted function,
    :math:`\|c\|_1 \sup|\phi|`, or a prediction :math:`|\hat f(x) - c_0|`
    exceeds a stated multiple of the training targets' largest deviation from
    their mean: typically a minimum-norm fit of a numerically singular
    feature matrix (coefficients of 1e12 that cancel on the training rows),
    evaluated on inputs outside the training range.  A ``RuntimeWarning``, so
    ``warnings.simplefilter("error", MagnitudeWarning)`` turns it into an error.
    """


class QClippedWarning(UserWarning):
    """``q`` (nonzeros per weight vector) exceeded the number of inputs and was clipped."""
