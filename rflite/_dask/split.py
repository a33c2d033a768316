r"""Hold-out splits of Dask rows without an m-long array on the client (private).

The in-memory fits of SHRIMP, ARFF and GFC first sort their rows (or
distinct rows) lexicographically; :func:`canonical_rows` finds that order
for Dask rows in one pass (the chunks' distinct rows merged on the client),
and :func:`reorder_rows` applies it.  Hold-outs are then drawn over those
positions: up to :data:`CLIENT_SPLIT_MAX_ROWS` rows the client draws the
in-memory permutation (8 bytes a row), so that a Dask fit on the rows of an
in-memory fit splits them identically.  Beyond it, a row is a validation row
when its image under a keyed pseudo-random permutation of ``range(m)``
(:class:`FeistelPermutation`) falls below the validation count: every chunk
evaluates the permutation at its own row indices, so the mask is a Dask
array with ``X``'s row chunks and the graph holds a few keys, not m numbers.
The validation rows are then the first ``n_val`` rows of a uniformly shuffled
order, as in memory -- only the shuffle is another one.

With ``sample_weight`` SHRIMP holds out the prefix of the shuffled order
whose weight is closest to ``frac`` of the total (:func:`weighted_prefix`):
on the client that is a cumulative sum over the permuted weights; here it
is found by refining a histogram of the weights over the permuted positions,
:data:`HISTOGRAM_BINS` bins a pass (two passes over the weight column up to
:math:`2^{32}` rows, nothing of length m leaving the workers).
"""

from __future__ import annotations

import math

import numpy as np

from rflite._core.folds import distinct_fold_labels, row_hashes, row_projection, splitmix64
from rflite._dask.operator import SPLIT_EVERY

#: Up to this many rows the client draws the in-memory permutation (8 bytes a row),
#: so that Dask and in-memory fits split alike; beyond it, :class:`FeistelPermutation`.
CLIENT_SPLIT_MAX_ROWS = 1 << 22

#: Largest table of distinct rows of ``(X, y)`` (8 bytes a value) that the client
#: gathers to sort the rows into the canonical order of the in-memory fits
#: (:func:`canonical_rows`): 256 MiB, about 3 million distinct rows of 10
#: columns.  An in-memory fit sorts a key of the same size; past it the Dask
#: fits keep the rows in the order given.
CANONICAL_MAX_BYTES = 1 << 28

#: Bins of the weight histogram a pass of :func:`weighted_prefix` refines.
HISTOGRAM_BINS = 1 << 16

_FEISTEL_ROUNDS = 6


class FeistelPermutation:
    r"""A keyed pseudo-random permutation :math:`\pi` of ``range(m)``, evaluated without a table.

    A balanced Feistel network (Luby & Rackoff, 1988) of
    :data:`_FEISTEL_ROUNDS` rounds on ``2h``-bit integers,
    :math:`2^{2h} \ge m`, with round function ``splitmix64(R ^ key_r)``
    keeps every round a bijection; *cycle walking* (Black & Rogaway, 2002)
    re-applies it to outputs at or above m until they fall below, which is a
    bijection of ``range(m)`` (:math:`2^{2h} < 4m`: fewer than 4 rounds of
    the walk on average).  The keys are drawn from ``rng``; the image of an
    index depends only on the keys, m and the index, so every chunk can
    evaluate its own rows.
    """

    def __init__(self, m: int, rng):
        self.m = int(m)
        bits = max(2, (self.m - 1).bit_length())
        self.half = (bits + 1) // 2
        self.keys = rng.integers(0, 2**63, size=_FEISTEL_ROUNDS, dtype=np.int64).astype(np.uint64)

    def _rounds(self, x):
        mask = np.uint64((1 << self.half) - 1)
        half = np.uint64(self.half)
        left, right = x >> half, x & mask
        for key in self.keys:
            left, right = right, left ^ (splitmix64(right ^ key) & mask)
        return (left << half) | right

    def __call__(self, index) -> np.ndarray:
        """:math:`\\pi` of an integer array of indices in ``range(m)`` (int64)."""
        out = self._rounds(np.asarray(index, dtype=np.uint64).reshape(-1))
        m = np.uint64(self.m)
        out_of_range = np.flatnonzero(out >= m)
        while out_of_range.size:
            out[out_of_range] = self._rounds(out[out_of_range])
            out_of_range = out_of_range[out[out_of_range] >= m]
        return out.astype(np.int64)


def _k_in_positions(rows, perm, lo, hi):
    """Mask (rows, 1) of one chunk of row indices: ``lo <= perm(i) < hi``."""
    pos = perm(rows)
    return ((pos >= lo) & (pos < hi)).reshape(-1, 1)


def position_mask(row_chunks, perm: FeistelPermutation, lo: int, hi: int):
    """Lazy (m, 1) bool Dask array with ``row_chunks``: row i selected iff ``lo <= perm(i) < hi``.

    The rows at positions ``lo .. hi-1`` of the shuffled order: ``[0, n_val)``
    a hold-out part, consecutive ranges a random partition.
    """
    import dask.array as da

    rows = da.arange(perm.m, chunks=(row_chunks,), dtype=np.int64)
    return rows.map_blocks(_k_in_positions, perm=perm, lo=int(lo), hi=int(hi),
                           chunks=(row_chunks, (1,)), new_axis=1, dtype=bool,
                           meta=np.empty((0, 0), bool), token="rflite-position-mask")


def validation_mask(row_chunks, perm: FeistelPermutation, n_val: int):
    """Lazy (m, 1) bool Dask array with ``row_chunks``: row i held out iff ``perm(i) < n_val``."""
    return position_mask(row_chunks, perm, 0, n_val)


def _k_histogram(rows, Wb, perm, lo, width, n_bins):
    """(1, n_bins) weight sums of a chunk over permuted positions ``[lo, lo + width n_bins)``."""
    pos = perm(rows) - lo
    inside = (pos >= 0) & (pos < width * n_bins)
    w = np.asarray(Wb, dtype=np.float64).reshape(-1)
    return np.bincount(pos[inside] // width, weights=w[inside], minlength=n_bins).reshape(1, -1)


def _histogram(W, perm, lo, width, n_bins):
    import dask.array as da

    rows = da.arange(perm.m, chunks=(W.chunks[0],), dtype=np.int64)
    parts = da.map_blocks(_k_histogram, rows[:, None], W, perm=perm, lo=lo, width=width,
                          n_bins=n_bins, chunks=((1,) * W.numblocks[0], (n_bins,)),
                          dtype=np.float64, meta=np.empty((0, 0)), token="rflite-split-histogram")
    return np.asarray(parts.sum(axis=0, split_every=SPLIT_EVERY).compute())


def weighted_prefix(W, perm: FeistelPermutation, frac: float, n_bins: int = HISTOGRAM_BINS):
    r"""The validation count ``n_val`` of a weighted split.

    ``n_val`` in ``1 .. m-1`` makes the weight :math:`c_k = \sum_{\pi(i) < k} w_i`
    of the first k permuted rows closest to ``frac`` of the total (ties to
    the smaller k among the two prefixes around the crossing: with zero
    weights several k may tie).  ``W`` is the (m, 1) Dask weight column.
    Each pass sums the weights into ``n_bins`` bins of permuted positions and
    keeps the bin where :math:`c_k` crosses the target, until a bin is one
    position wide: :math:`\lceil \log_{n\_bins} m \rceil` passes over ``W``.
    """
    m = perm.m
    lo, hi, before, target = 0, m, 0.0, None
    while True:
        width = max(1, math.ceil((hi - lo) / n_bins))
        hist = _histogram(W, perm, lo, width, n_bins)
        if target is None:
            target = frac * float(hist.sum())
        cum = before + np.cumsum(hist)
        if width == 1:
            break
        # the bins past hi (positions the last pass did not ask for) are never chosen
        n_in = math.ceil((hi - lo) / width)
        b = min(int(np.searchsorted(cum[:n_in], target, side="left")), n_in - 1)
        before = float(cum[b - 1]) if b else before
        lo, hi = lo + b * width, min(hi, lo + (b + 1) * width)
    # cum[j] is c_{lo + j + 1}; k1 is the first k with c_k >= target
    j = min(int(np.searchsorted(cum[: hi - lo], target, side="left")), hi - lo - 1)
    k1 = lo + j + 1
    c1 = float(cum[j])
    c0 = before if j == 0 else float(cum[j - 1])
    n_val = k1 - 1 if (k1 - 1 >= 1 and abs(c0 - target) <= abs(c1 - target)) else k1
    return min(max(n_val, 1), m - 1)


class RowSelection:
    """Lazy rows of a Dask array: a (m, 1) bool mask with ``X``'s row chunks and its count."""

    def __init__(self, mask, size: int):
        self.mask, self.size = mask, int(size)
        self._counts = None

    def counts(self) -> tuple:
        """Selected rows per chunk: one pass over the mask (O(chunks) numbers come back)."""
        if self._counts is None:
            nb = self.mask.numblocks[0]
            per_chunk = self.mask.map_blocks(_k_count, chunks=((1,) * nb, (1,)), dtype=np.int64,
                                             meta=np.empty((0, 0), np.int64),
                                             token="rflite-selection-count")
            self._counts = tuple(int(c) for c in per_chunk.compute()[:, 0])
        return self._counts


def _k_count(Mb):
    """Selected rows of one chunk of a mask: a (1, 1) array."""
    return np.array([[np.count_nonzero(Mb)]], dtype=np.int64)


def _k_take(Ab, Mb):
    return Ab[Mb.reshape(-1)]


def holdout_rows(row_chunks, n: int, fraction: float, rng):
    """:func:`rflite._core.folds.holdout_split` of the rows of a Dask array: ``(train, val)``.

    Up to :data:`CLIENT_SPLIT_MAX_ROWS` rows the in-memory split (sorted index
    arrays, drawn from ``rng`` alike); beyond, :class:`RowSelection` masks
    from a :class:`FeistelPermutation` keyed from ``rng``, with the same
    validation count.  :func:`take_rows` selects either.
    """
    from rflite._core.folds import holdout_size, holdout_split

    if n <= CLIENT_SPLIT_MAX_ROWS:
        return holdout_split(n, fraction, rng)
    n_val = holdout_size(n, fraction)
    V = validation_mask(row_chunks, FeistelPermutation(n, rng), n_val)
    return RowSelection(~V, n - n_val), RowSelection(V, n_val)


def take_rows(A, rows):
    """Rows ``rows`` (index array or :class:`RowSelection`) of a Dask array, in row order.

    A selection keeps ``A``'s chunk structure with known chunk sizes (the
    counts of one pass over the mask), so the operator's checks accept it.
    """
    import dask.array as da

    if not isinstance(rows, RowSelection):
        return A[rows]
    counts = rows.counts()
    mask = rows.mask.rechunk((A.chunks[0], (1,)))
    if A.ndim == 1:
        mask = mask[:, 0]
    return da.map_blocks(_k_take, A, mask, chunks=(counts,) + A.chunks[1:], dtype=A.dtype,
                         meta=np.empty((0,) * A.ndim, A.dtype), token="rflite-take-rows")


def _distinct_pairs(Xb, Wb, Lb):
    """The distinct ``(row hash, group label)`` pairs of a chunk's kept rows (an (n, 2) uint64)."""
    h = row_hashes(Xb)
    lab = np.zeros(h.size, np.uint64) if Lb is None else np.asarray(Lb)[:, 0].astype(np.uint64)
    if Wb is not None:
        keep = np.asarray(Wb)[:, 0] > 0
        h, lab = h[keep], lab[keep]
    return np.unique(np.column_stack([h, lab]), axis=0)


def distinct_rows(X, W=None, folds=None):
    """Distinct kept rows of a Dask ``X``: their number, and per fold its training rows'.

    The Dask counterpart of :func:`rflite._core.folds.distinct_count` (rows
    with positive weight ``W``; equality by :func:`row_hashes`).  One pass:
    every chunk sends its distinct ``(hash, group)`` pairs, at most 16 bytes
    a row, to the client.  With ``folds`` (:class:`rflite._dask.auto._Folds`)
    also returns an (n_folds,) array: the distinct rows among each fold's
    training rows.
    """
    import dask

    rows = X.to_delayed().ravel()
    ws = [None] * len(rows) if W is None else W.to_delayed().ravel()
    ls = [None] * len(rows) if folds is None else folds.labels.to_delayed().ravel()
    parts = dask.compute(*[dask.delayed(_distinct_pairs)(x, w, lab)
                           for x, w, lab in zip(rows, ws, ls)])
    pairs = np.unique(np.concatenate([p for p in parts if p.size] or [np.zeros((0, 2),
                                                                              np.uint64)]),
                      axis=0)
    total = int(np.unique(pairs[:, 0]).size)
    if folds is None:
        return total
    groups = pairs[:, 1].astype(np.int64)
    per_fold = np.array([np.unique(pairs[folds.member[groups, f] == 1, 0]).size
                         for f in range(folds.n_folds)], dtype=np.int64)
    return total, per_fold


def _distinct_keys(Xb, Wb, g):
    """A chunk's distinct kept rows: hashes (sorted), projections on ``g`` and copies."""
    X = np.asarray(Xb, dtype=np.float64) + 0.0
    if Wb is not None:
        X = X[np.asarray(Wb)[:, 0] > 0]
    h, first, copies = np.unique(row_hashes(X), return_index=True, return_counts=True)
    return h, row_projection(X[first], g), copies


class DistinctRows:
    """The distinct kept rows of a Dask ``X`` on the client: 24 bytes each.

    ``hashes`` (sorted, :func:`rflite._core.folds.row_hashes`), their
    projections ``v`` on the Gaussian vector of :func:`distinct_row_folds`,
    and ``copies``, the kept rows equal to each.
    """

    def __init__(self, hashes, v, copies):
        self.hashes, self.v, self.copies = hashes, v, copies

    @property
    def size(self) -> int:
        return int(self.hashes.size)


def distinct_row_folds(X, W, n_folds: int, rng):
    """:func:`rflite._core.folds.row_folds` of the kept rows of a Dask ``X``: ``(rows, labels)``.

    Draws ``g`` from ``rng`` as the in-memory rule does; one pass sends each
    chunk's distinct kept rows (:func:`row_hashes`, :func:`row_projection`,
    copies: 24 bytes a distinct row) to the client, which merges them and
    deals them to the folds with the in-memory rule
    (:func:`rflite._core.folds.distinct_fold_labels`, drawing its order
    from ``rng`` next).  Returns the :class:`DistinctRows` and the fold of
    each: the labels of an in-memory fit on the same rows, whatever the
    chunking and row order.  Rows of zero weight take no part in the
    dealing (as ``fit`` drops them); the client holds O(distinct rows)
    numbers, which is what labelling the distinct rows needs.
    """
    import dask

    g = rng.standard_normal(X.shape[1])
    rows = X.to_delayed().ravel()
    ws = [None] * len(rows) if W is None else W.to_delayed().ravel()
    parts = dask.compute(*[dask.delayed(_distinct_keys)(x, w, g) for x, w in zip(rows, ws)])
    h = np.concatenate([p[0] for p in parts])
    v = np.concatenate([p[1] for p in parts])
    c = np.concatenate([p[2] for p in parts])
    hashes, first, inv = np.unique(h, return_index=True, return_inverse=True)
    copies = np.bincount(inv.ravel(), weights=c, minlength=hashes.size).astype(np.int64)
    distinct = DistinctRows(hashes, v[first], copies)
    return distinct, distinct_fold_labels(distinct.v, hashes, n_folds, rng)


def _k_fold_lookup(Xb, table, missing):
    """Fold label of every row of a chunk: its distinct row's, ``missing`` for a row not kept."""
    hashes, labels = table
    h = row_hashes(Xb)
    pos = np.minimum(np.searchsorted(hashes, h), hashes.size - 1)
    found = hashes[pos] == h
    return np.where(found, labels[pos], missing).astype(np.int64).reshape(-1, 1)


def fold_label_array(X, distinct: DistinctRows, labels, missing: int):
    """(m, 1) int Dask array with ``X``'s row chunks: each row's label from its hash.

    The table (hashes and labels of the distinct rows, 16 bytes each) is
    sent once and every chunk looks its rows up in it; the labels are then
    persisted (8 bytes a row, on the workers under a distributed client), so
    the many passes of a choice refer to them by key instead of carrying the
    table in every graph.
    """
    import dask.array as da

    from rflite._dask.operator import _broadcast

    table, _ = _broadcast((distinct.hashes, np.asarray(labels, dtype=np.int64)))
    labels = da.map_blocks(_k_fold_lookup, X, table, missing=int(missing),
                           chunks=(X.chunks[0], (1,)), dtype=np.int64,
                           meta=np.empty((0, 0), np.int64), token="rflite-fold-labels")
    return labels.persist()


def _k_distinct_rows(Xb, Yb, Wb):
    """A chunk's distinct kept rows of ``[X, Y]`` (sorted) and each kept row's index among
    them; the mask of the kept rows (None: all)."""
    key = np.ascontiguousarray(np.hstack([np.asarray(Xb, dtype=np.float64),
                                          np.asarray(Yb, dtype=np.float64).reshape(len(Xb), -1)]))
    keep = None
    if Wb is not None:
        keep = np.asarray(Wb)[:, 0] > 0
        key = key[keep]
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    return uniq, np.asarray(inverse, dtype=np.int64).ravel(), keep


class CanonicalRows:
    """The rows of a Dask ``(X, Y)`` grouped as the in-memory fits group them.

    ``groups`` (m,): each row's index among the distinct rows of ``[X, Y]``
    in :func:`numpy.unique` order (lexicographic, first column first; -1 for
    a row of zero weight).  ``order``: the kept rows in the canonical order
    of :func:`rflite._core.folds._canonical_order` (a stable sort by group,
    so it is that function's :func:`numpy.lexsort` exactly).
    """

    def __init__(self, groups):
        self.groups = groups
        kept = np.flatnonzero(groups >= 0)
        self.order = kept[np.argsort(groups[kept], kind="stable")]
        self.n_groups = int(groups.max()) + 1 if kept.size else 0


def canonical_rows(X, Y, W=None):
    """:class:`CanonicalRows` of a Dask ``X`` and ``Y`` (and weights ``W``), or None.

    One pass: every chunk sends its distinct kept rows and each row's index
    among them; the client merges the chunks' rows with :func:`numpy.unique`
    (equality and order are those of the in-memory fits, ``-0.0 == 0.0``
    included).  The client holds the distinct rows and 8 bytes a row, so
    None (keep the rows as given) past :data:`CLIENT_SPLIT_MAX_ROWS` rows or
    :data:`CANONICAL_MAX_BYTES` of rows.
    """
    import dask

    m = X.shape[0]
    width = X.shape[1] + (Y.shape[1] if Y.ndim == 2 else 1)
    if m > CLIENT_SPLIT_MAX_ROWS or m * width * 8 > CANONICAL_MAX_BYTES:
        return None
    xs, ys = X.to_delayed().ravel(), Y.rechunk({0: X.chunks[0]}).to_delayed().ravel()
    ws = [None] * len(xs) if W is None else W.rechunk({0: X.chunks[0]}).to_delayed().ravel()
    parts = dask.compute(*[dask.delayed(_k_distinct_rows)(x, y, w)
                           for x, y, w in zip(xs, ys, ws)])
    _, merged = np.unique(np.concatenate([p[0] for p in parts]), axis=0, return_inverse=True)
    merged = np.asarray(merged, dtype=np.int64).ravel()
    groups = np.full(m, -1, dtype=np.int64)
    start = first = 0
    for (uniq, inverse, keep), rows in zip(parts, X.chunks[0]):
        g = merged[first:first + uniq.shape[0]][inverse]
        if keep is None:
            groups[start:start + rows] = g
        else:
            groups[start:start + rows][keep] = g
        start, first = start + rows, first + uniq.shape[0]
    return CanonicalRows(groups)


def reorder_rows(A, order):
    """Rows ``order`` of a Dask array, in that order, rechunked to ``A``'s row chunks when
    all rows are taken, and persisted.

    The reordering moves rows between chunks (a shuffle of the rows); the
    fits then make many passes over the result, so it is computed once and
    kept (on the workers under a distributed client: a copy of ``A``)
    rather than reshuffled in every pass.
    """
    import dask
    import dask.array as da

    with dask.config.set({"array.slicing.split_large_chunks": False}):
        out = A[order]
    if order.size == A.shape[0]:
        out = out.rechunk({0: A.chunks[0]})
    return (out if isinstance(out, da.Array) else da.asarray(out)).persist()
