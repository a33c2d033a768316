"""scikit-learn's estimator conventions, shared by the models and the transformer.

Parameter handling (``get_params`` / ``set_params``, a ``repr`` with the
non-default parameters only) and the feature-name checks of
``sklearn.base.BaseEstimator``, re-implemented without importing scikit-learn:
:class:`rflite._base.RandomFeatureModel` and
:class:`rflite.features.RandomFeatures` both inherit them from
:class:`EstimatorMixin` (this module imports neither, so neither import is
circular).
"""

from __future__ import annotations

import inspect

import numpy as np
from rflite._core.exceptions import warn

__all__ = ["EstimatorMixin", "FeatureNamesWarning", "feature_names"]


class FeatureNamesWarning(UserWarning):
    """``X`` at predict time has (or lacks) column names unlike the ``X`` of ``fit``.

    A ``UserWarning``, as scikit-learn's own message is, so that its filters
    and ``warnings.simplefilter("error", UserWarning)`` catch it.
    """


def feature_names(X):
    """String column names of a data frame ``X`` (duck-typed ``.columns``), else None.

    scikit-learn's rule (``sklearn.utils.validation._get_feature_names``):
    names are kept only when every column name is a ``str``; a mix of ``str``
    and other types is a ``TypeError``; non-string names are ignored.
    pandas is never imported: any 2-d object with ``columns`` and ``shape``
    qualifies.
    """
    cols = getattr(X, "columns", None)
    if cols is None or len(getattr(X, "shape", ())) != 2 or isinstance(X, np.ndarray):
        return None
    names = np.asarray(list(cols), dtype=object)
    if names.size == 0:
        return None
    types = sorted({type(v).__qualname__ for v in names})
    if len(types) > 1 and "str" in types:
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but your input has {types} as feature name / column name types. Convert "
            "them all to strings (X.columns = X.columns.astype(str)) or remove them."
        )
    return names if types == ["str"] else None


def _same_default(value, default) -> bool:
    """Whether a parameter still has its default (for ``repr``; arrays compared by identity)."""
    if value is default:
        return True
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    try:
        same = value == default
        if isinstance(same, (bool, np.bool_)):
            # 1 == 1.0 == True: also require the same type, as scikit-learn does
            return bool(same) and (type(value) is type(default) or (
                isinstance(value, float) and isinstance(default, float)))
    except Exception:  # noqa: BLE001 - any comparison failure means "changed"
        pass
    return False


class EstimatorMixin:
    """``get_params``, ``set_params``, ``repr`` and the predict-time name check."""

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters as a dict (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = set(self._get_param_names())
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        """Constructor call with the non-default parameters only, in constructor order.

        scikit-learn's ``print_changed_only`` style: ``HARFERegressor(s=50)``.
        """
        sig = inspect.signature(type(self).__init__)
        args = []
        for p in sig.parameters.values():
            if p.name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            value = getattr(self, p.name, p.default)
            if not _same_default(value, p.default):
                args.append(f"{p.name}={value!r}")
        return f"{type(self).__name__}({', '.join(args)})"

    def _check_feature_names(self, X):
        """scikit-learn's predict-time name check (``_check_feature_names(reset=False)``).

        Names that differ from ``feature_names_in_`` (missing, unseen or
        reordered) raise ``ValueError`` with scikit-learn's message; names on
        one side only warn (:class:`FeatureNamesWarning`, a ``UserWarning``).
        """
        fitted = getattr(self, "feature_names_in_", None)
        names = feature_names(X)
        name = type(self).__name__
        if fitted is None and names is None:
            return
        if fitted is None:
            warn(f"X has feature names, but {name} was fitted without feature names",
                          FeatureNamesWarning)
            return
        if names is None:
            warn(f"X does not have valid feature names, but {name} was fitted with "
                          "feature names", FeatureNamesWarning)
            return
        if len(fitted) != len(names) or np.any(fitted != names):
            msg = "The feature names should match those that were passed during fit.\n"
            unexpected = sorted(set(names) - set(fitted))
            missing = sorted(set(fitted) - set(names))
            if unexpected:
                msg += "Feature names unseen at fit time:\n" + "".join(
                    f"- {n}\n" for n in unexpected[:5]) + ("- ...\n" if len(unexpected) > 5
                                                          else "")
            if missing:
                msg += "Feature names seen at fit time, yet now missing:\n" + "".join(
                    f"- {n}\n" for n in missing[:5]) + ("- ...\n" if len(missing) > 5 else "")
            if not missing and not unexpected:
                msg += "Feature names must be in the same order as they were in fit.\n"
            raise ValueError(msg)
