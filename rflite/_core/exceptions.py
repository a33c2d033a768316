"""Warnings and errors of the estimators (public through the modules that raise them)."""

from __future__ import annotations

import os
import sys
import warnings


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


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit``."""


def _not_fitted_error_class():
    """:class:`NotFittedError`, also an instance of scikit-learn's when that is loaded.

    scikit-learn tools (``check_is_fitted``, the estimator checks) test for
    their own class; subclassing it only when scikit-learn is already imported
    keeps it out of rflite's runtime dependencies.
    """
    sk = sys.modules.get("sklearn.exceptions")
    if sk is None:
        return NotFittedError
    global _SK_NOT_FITTED
    if _SK_NOT_FITTED is None:
        _SK_NOT_FITTED = type("NotFittedError", (NotFittedError, sk.NotFittedError), {})
    return _SK_NOT_FITTED


_SK_NOT_FITTED = None


#: The package's folder; frames in it (but for the experiments, which call the
#: library as a user's script does) are skipped when a warning is attributed.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CALLER_DIRS = (os.path.join(_PACKAGE_DIR, "experiments") + os.sep,)


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first caller outside rflite.

    A fixed ``stacklevel`` points into the library as soon as the call that
    warns moves one function deeper (or runs through the Dask backend); the
    user's line is what a warning should show, and what ``-W error`` and
    warning filters by module act on.
    """
    frame, level = sys._getframe(1), 2
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(_PACKAGE_DIR) or name.startswith(_CALLER_DIRS):
            break
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
