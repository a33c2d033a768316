"""The distributions of the nonzero weight entries (public in :mod:`rflite.features`).

:class:`Normal` and :class:`Uniform` draw element by element from the
stream, so a longer draw extends a shorter one (prefix stable);
:func:`_check_distribution` accepts them or their names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rflite._core.validation import MAX_ABS, check_real


#: Largest ``Normal(scale)``: normal draws stay below 40 standard deviations
#: (probability below 1e-300 each), so the weights stay below
#: :data:`rflite._core.validation.MAX_ABS`, the bound on every array entry.
MAX_WEIGHT_SCALE = MAX_ABS / 64


@dataclass(frozen=True)
class Normal:
    """Centred normal distribution :math:`N(0, \\mathrm{scale}^2)` for weight entries."""

    scale: float = 1.0

    def __post_init__(self):
        # draws beyond MAX_ABS would be refused later, without naming scale
        check_real(self.scale, "scale", minimum=0.0, strict=True, maximum=MAX_WEIGHT_SCALE)

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Draw entries; consumes the stream element by element (prefix stable)."""
        return rng.normal(0.0, self.scale, size)


@dataclass(frozen=True)
class Uniform:
    """Uniform distribution on ``[low, high]`` for weight entries."""

    low: float = -1.0
    high: float = 1.0

    def __post_init__(self):
        check_real(self.low, "low", minimum=-MAX_ABS, maximum=MAX_ABS)
        if not check_real(self.high, "high", minimum=-MAX_ABS, maximum=MAX_ABS) > self.low:
            raise ValueError(f"high must be > low, got low={self.low}, high={self.high}")

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Draw entries; consumes the stream element by element (prefix stable)."""
        return rng.uniform(self.low, self.high, size)


def _check_distribution(distribution):
    if isinstance(distribution, (Normal, Uniform)):
        return distribution
    if distribution == "normal":
        return Normal()
    if distribution == "uniform":
        return Uniform()
    raise ValueError(
        "distribution must be 'normal', 'uniform', Normal(scale) or Uniform(low, high), "
        f"got {distribution!r}"
    )
