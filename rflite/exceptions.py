"""Every warning and error rflite raises, in one place.

Each is also importable from the module that raises it; this module gathers
them for ``warnings.filterwarnings`` and ``except`` clauses, as
:mod:`sklearn.exceptions` does.  The runtime warnings (``RuntimeWarning``
subclasses) say that a numerical result is less than asked for; the user
warnings (``UserWarning``) that an input was adjusted.
"""

from rflite._arff.kernels import ParallelFallbackWarning
from rflite._core.cache import NumbaCacheWarning
from rflite._core.estimator import FeatureNamesWarning
from rflite._core.exceptions import (
    EffectiveFeaturesWarning, MagnitudeWarning, NotFittedError, QClippedWarning,
)
from rflite._core.linalg import IllConditionedWarning
from rflite._core.metrics import UndefinedMetricWarning
from rflite._core.validation import DataConversionWarning
from rflite.bp import InfeasibleResultWarning, SigmaUnreachableWarning, UncertifiedResultWarning

__all__ = [
    "DataConversionWarning",
    "EffectiveFeaturesWarning",
    "FeatureNamesWarning",
    "IllConditionedWarning",
    "InfeasibleResultWarning",
    "MagnitudeWarning",
    "NotFittedError",
    "NumbaCacheWarning",
    "ParallelFallbackWarning",
    "QClippedWarning",
    "SigmaUnreachableWarning",
    "UncertifiedResultWarning",
    "UndefinedMetricWarning",
]
