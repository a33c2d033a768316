"""Folds and hold-outs: scikit-learn's ``KFold`` and ``cv`` conventions, and folds over distinct rows."""

from __future__ import annotations

import numbers

import numpy as np

from rflite._core.random import check_rng
from rflite._core.validation import check_int


class KFold:
    """K consecutive folds, optionally after a shuffle: scikit-learn's ``KFold``.

    The first ``n % n_splits`` folds have one row more; with ``shuffle=True`` the
    rows are permuted by ``np.random.RandomState(random_state).shuffle`` (an int
    or None seed) exactly as scikit-learn does, so the same arguments give the
    same folds in both libraries.  A ``numpy.random.Generator`` is also
    accepted (then the permutation is the generator's).
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state=None):
        if not isinstance(n_splits, numbers.Integral) or isinstance(n_splits, bool) \
                or n_splits < 2:
            raise ValueError(f"n_splits must be an int >= 2, got {n_splits!r}")
        if not shuffle and random_state is not None:
            raise ValueError(
                f"random_state={random_state!r} has no effect with shuffle=False (KFold's "
                "folds are then consecutive rows): leave random_state=None or set "
                "shuffle=True")
        self.n_splits = int(n_splits)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def __repr__(self):
        return (f"KFold(n_splits={self.n_splits}, random_state={self.random_state!r}, "
                f"shuffle={self.shuffle})")

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_splits

    def fold_sizes(self, n: int) -> np.ndarray:
        """Test rows of each fold for ``n`` rows (the first ``n % n_splits`` get one more)."""
        if self.n_splits > n:
            raise ValueError(
                f"cannot have n_splits={self.n_splits} greater than the number of samples "
                f"n_samples={n}"
            )
        sizes = np.full(self.n_splits, n // self.n_splits)
        sizes[: n % self.n_splits] += 1
        return sizes

    def split(self, X, y=None, groups=None):
        n = len(X)
        sizes = self.fold_sizes(n)
        idx = np.arange(n)
        if self.shuffle:
            rs = self.random_state
            if isinstance(rs, np.random.Generator):
                rs.shuffle(idx)
            else:
                rs = rs if isinstance(rs, np.random.RandomState) else np.random.RandomState(rs)
                rs.shuffle(idx)
        start = 0
        for size in sizes:
            # scikit-learn returns both parts in increasing row order
            mask = np.zeros(n, dtype=bool)
            mask[idx[start:start + size]] = True
            yield np.flatnonzero(~mask), np.flatnonzero(mask)
            start += size


class SplitList:
    """An iterable of ``(train, test)`` pairs as a splitter (scikit-learn accepts these,
    and its estimator checks pass them)."""

    def __init__(self, splits):
        self.splits = [(np.asarray(a), np.asarray(b)) for a, b in splits]

    def split(self, X, y=None, groups=None):
        yield from self.splits

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self.splits)


def check_cv(cv, *, name: str = "cv"):
    """``cv`` as an object with ``split``: int K -> :class:`KFold` (K), None -> 5 folds,
    an iterable of ``(train, test)`` pairs -> :class:`SplitList`."""
    if cv is None:
        return KFold(5)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"{name} must be an int >= 2 or a splitter, got {cv}")
        return KFold(int(cv))
    if callable(getattr(cv, "split", None)) and not isinstance(cv, (str, bytes)):
        return cv
    if hasattr(cv, "__iter__") and not isinstance(cv, (str, bytes)):
        try:
            return SplitList(cv)
        except (TypeError, ValueError):
            pass
    raise ValueError(
        f"{name} must be None, an int >= 2 or an object with a split(X, y) method "
        f"(e.g. sklearn.model_selection.KFold), got {cv!r}"
    )


def cv_splits(cv, X, y=None, *, name: str = "cv") -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(train, test)`` index pairs of ``cv`` on ``X``, validated.

    Raises ``ValueError`` naming ``cv`` when a fold is empty, repeats rows or
    indexes outside ``X``, or when fewer than one fold is produced.
    """
    n = len(X)
    splits = []
    for k, (train, test) in enumerate(check_cv(cv, name=name).split(X, y)):
        train = _row_indices(train, n, name, k, "training")
        test = _row_indices(test, n, name, k, "test")
        for part, idx in (("training", train), ("test", test)):
            if idx.size == 0:
                raise ValueError(f"{name}: fold {k} has an empty {part} part")
            if idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"{name}: fold {k} indexes rows outside 0..{n - 1}")
        splits.append((train, test))
    if not splits:
        raise ValueError(f"{name} produced no folds")
    return splits


def _index_pair(item, k: int, name: str):
    """Fold ``k`` of an explicit ``cv`` as a ``(train, test)`` pair of arrays."""
    try:
        parts = list(item)
    except TypeError:
        raise ValueError(f"{name}: fold {k} must be a (train, test) pair of index arrays, "
                         f"got {type(item).__name__}") from None
    if len(parts) != 2:
        raise ValueError(f"{name}: fold {k} must be a (train, test) pair of index arrays, "
                         f"got {len(parts)} items")
    return np.asarray(parts[0]), np.asarray(parts[1])


def _row_indices(idx, n: int, name: str, k: int, part: str) -> np.ndarray:
    """Integer row indices of one part of a fold: integers, or a boolean mask of n rows."""
    idx = np.asarray(idx)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"{name}: fold {k}'s {part} mask must have {n} entries, got "
                             f"shape {idx.shape}")
        return np.flatnonzero(idx)
    if idx.size == 0:
        return idx.astype(np.int64).ravel()
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{name}: fold {k}'s {part} part must be a 1-d array of integer row "
                         f"indices, got dtype {idx.dtype} and shape {idx.shape}")
    return idx.astype(np.int64)


def holdout_split(n: int, fraction: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Sorted training and validation rows: ``max(1, round(fraction * n))`` held out.

    The single-split version of the CV rules, used by the default estimators
    to pick their regularisation from the data.  ``rng`` is a Generator.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}")
    n_val = holdout_size(n, fraction)
    perm = check_rng(rng).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def holdout_size(n: int, fraction: float) -> int:
    """The validation count of :func:`holdout_split`: ``max(1, round(fraction * n))``, below n."""
    if n < 2:
        raise ValueError(f"a validation split needs at least 2 samples, got {n}")
    return min(n - 1, max(1, int(round(fraction * n))))


#: Folds of the default (``cv=None`` / ``lam="auto"``) choice.
DEFAULT_FOLDS = 5


def splitmix64(h):
    """The splitmix64 finaliser of a uint64 array (Steele, Lea & Flood, 2014): a bijective mix."""
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def row_hashes(X) -> np.ndarray:
    """A 64-bit hash of each row's values (equal rows, equal hashes; ``-0.0`` is ``0.0``).

    splitmix64 chained over the columns in a fixed order, so a row's hash
    does not depend on the other rows (or, on Dask, on its chunk).  Two
    different rows share a hash with probability about :math:`2^{-64}`:
    among :math:`10^7` rows the chance of any collision is about
    :math:`m^2 / 2^{65} \\approx 3 \\cdot 10^{-6}`.
    """
    bits = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0).view(np.uint64)
    h = np.full(bits.shape[0], np.uint64(0x9E3779B97F4A7C15))
    for j in range(bits.shape[1]):
        h = splitmix64(h ^ bits[:, j])
    return h


def row_projection(X, g) -> np.ndarray:
    """:math:`v_i = \\langle x_i, g\\rangle`, summed column by column in a fixed order.

    Not a BLAS product: a row's ``v`` is then bitwise the same whatever the
    other rows are (BLAS blocks by the row count), so equal rows project
    equally and a chunk of a Dask array gives its rows the in-memory values.
    """
    X = np.asarray(X, dtype=np.float64)
    v = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        v += X[:, j] * g[j]
    return v


def distinct_fold_labels(v, h, n_folds: int, rng) -> np.ndarray:
    """Fold labels of distinct rows from their projections ``v`` and hashes ``h``.

    The rows are ranked by ``(v, h)`` (the hash breaks ties of the
    projection) and dealt round-robin to the folds in a random order drawn
    from ``rng``: ``perm[rank] % n_folds``.  The rule of :func:`row_folds`,
    shared with the Dask backend, which finds ``v`` and ``h`` chunk by chunk.
    """
    rank = np.lexsort((h, v))
    position = np.empty_like(rank)
    position[rank] = np.arange(rank.size)
    order = rng.permutation(rank.size)
    return (order[position] % n_folds).astype(np.int64)


def row_folds(X, n_folds, rng) -> np.ndarray:
    """Fold label (0 .. n_folds-1) of each row, the same for identical rows.

    The distinct rows of ``X`` are ranked by a random projection drawn from
    ``rng`` (:func:`row_projection`; ties by :func:`row_hashes`) and dealt
    round-robin to the folds in a random order drawn from ``rng``
    (:func:`distinct_fold_labels`); repeated rows follow their first copy.
    So the folds do not depend on the row order, a row of integer
    ``sample_weight`` k behaves like k copies of it, which K-fold over row
    positions cannot do, and the folds are balanced to one distinct row.
    The Dask backend computes the same labels without gathering the rows.
    """
    X = np.asarray(X, dtype=float) + 0.0
    n_folds = check_int(n_folds, "n_folds", minimum=1)
    rng = check_rng(rng)
    g = rng.standard_normal(X.shape[1])
    _, first, inv = np.unique(X, axis=0, return_index=True, return_inverse=True)
    distinct = X[first]
    labels = distinct_fold_labels(row_projection(distinct, g), row_hashes(distinct),
                                  n_folds, rng)
    return labels[inv.ravel()]


def distinct_labels(X) -> np.ndarray:
    """Label of each row of ``X`` among its distinct rows (equal rows, equal labels).

    The labels index :func:`numpy.unique`'s sorted distinct rows, so they do
    not depend on the row order; ``-0.0`` and ``0.0`` are one value.
    """
    X = np.asarray(X)
    _, inv = np.unique(X.reshape(X.shape[0], -1) + 0.0, axis=0, return_inverse=True)
    return inv.ravel().astype(np.int64)


def distinct_count(labels, rows=None) -> int:
    """The number of distinct rows among ``rows`` (all when None) of :func:`distinct_labels`."""
    labels = np.asarray(labels)
    return int(np.unique(labels if rows is None else labels[rows]).size)


def grouped_splits(X, n_folds, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` pairs of :func:`row_folds` (fewer folds if there are few distinct rows)."""
    labels = row_folds(X, n_folds, rng)
    splits = []
    for k in range(n_folds):
        test = np.flatnonzero(labels == k)
        train = np.flatnonzero(labels != k)
        if test.size and train.size:
            splits.append((train, test))
    if not splits:
        raise ValueError("a validation split needs at least 2 distinct rows of X, got "
                         f"n_samples={len(X)} with {np.unique(labels).size} distinct")
    return splits


def kept_rows(sample_weight):
    """Mask of the rows ``fit`` keeps (zero weights are dropped), or None (all kept)."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        return None  # fit's own validation reports it
    return None if w.ndim != 1 else w > 0


def resolve_splits(cv, X, Y, rng, *, name="cv", kept=None):
    """The folds of ``cv``.

    ``None``: :func:`grouped_splits` (5 folds over distinct rows); an int or
    an object with ``split``: :func:`rflite._core.folds.cv_splits`; an iterable of
    ``(train, test)`` index pairs (as scikit-learn's ``check_cv`` accepts,
    and its estimator checks pass) is used as given.
    """
    if cv is None:
        return grouped_splits(X, DEFAULT_FOLDS, rng)
    if not isinstance(cv, (str, bytes, numbers.Integral)) and not callable(
            getattr(cv, "split", None)) and hasattr(cv, "__iter__"):
        pairs = [_index_pair(item, k, name) for k, item in enumerate(cv)]
        if kept is not None and not kept.all():
            # the pairs index the rows as given; fit dropped the zero-weight ones
            new = np.cumsum(kept) - 1
            pairs = [(new[tr[kept[tr]]], new[te[kept[te]]]) for tr, te in pairs]
        cv = SplitList(pairs)
    return cv_splits(cv, X, Y[:, 0] if Y.ndim == 2 else Y, name=name)


def _canonical_order(X, T) -> np.ndarray:
    """Row order sorting ``[X, T]`` lexicographically (first column first).

    Fits that split rows at random become independent of the order the rows
    come in, and repeated rows are adjacent, so a fit with integer
    ``sample_weight`` equals the fit on the repeated rows exactly.
    """
    keys = np.column_stack([X, np.asarray(T).reshape(X.shape[0], -1)])
    return np.lexsort(keys.T[::-1])
