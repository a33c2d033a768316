"""Random state: one normalisation of every accepted seed type, and independent streams."""

from __future__ import annotations

import numbers

import numpy as np


# --------------------------------------------------------------------------- rng
def check_rng(rng=None, name: str = "rng") -> np.random.Generator:
    """Normalise a random state to a :class:`numpy.random.Generator`.

    Accepts every form scikit-learn users pass as ``random_state``; functions
    call it with ``name="rng"``, estimators with ``name="random_state"`` so
    that errors name the parameter the user wrote.  The global ``np.random``
    state is never touched.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator, numpy.random.RandomState, \
numpy.random.SeedSequence or numpy.random.BitGenerator
        - ``None``: fresh OS entropy;
        - a non-negative int (any size, ``>= 2**63`` included; NumPy
          integers too): seeds a new PCG64 generator through
          :class:`numpy.random.SeedSequence`, so ``check_rng(5)`` is
          ``np.random.default_rng(5)``;
        - a seed sequence: ``np.random.default_rng(rng)``;
        - a generator: returned unchanged (shared, not copied);
        - a bit generator: wrapped in a generator (shared state);
        - a legacy :class:`numpy.random.RandomState`: four 32-bit words
          ``rng.randint(0, 2**32, size=4, dtype=np.uint32)`` are drawn from it
          (one call, so it advances, as scikit-learn's ``check_random_state``
          users expect when a seed is drawn from a shared state) and seed a
          new PCG64 generator through a seed sequence.  The same
          ``RandomState(seed)`` hence always gives the same generator.
    name : str, default "rng"
        Parameter name used in error messages.

    Raises
    ------
    ValueError
        Naming ``name``: a negative seed, a bool, or any other type.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        entropy = rng.randint(0, 2**32, size=4, dtype=np.uint32)
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy.tolist())))
    if isinstance(rng, np.random.BitGenerator):
        return np.random.Generator(rng)
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative int seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(
        f"{name} must be None, a non-negative int, a numpy.random.Generator, RandomState, "
        f"SeedSequence or BitGenerator, got {type(rng).__name__} {rng!r}"
    )


def spawn_streams(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators derived from ``rng``.

    One draw is taken from ``rng`` whatever ``n`` is, so the parent advances the
    same way however many streams are spawned.
    """
    seed = int(rng.integers(0, 2**63 - 1))
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]
