"""The catalogue, file search and readers behind :func:`rflite.datasets.load_uci`.

:data:`UCI_DATASETS` describes the six shared sets (columns, splits,
published numbers); :func:`_locate` finds a set's file, :func:`_read_table`
reads it once per modification time and turns every reader failure into a
``ValueError`` naming the file, and :func:`_standardise` applies the
training statistics.  The search takes the default directories as
arguments: :mod:`rflite.datasets` owns them, so that setting them there
(tests point them at empty directories) is what the search sees.
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.io
from rflite._core.exceptions import warn

#: Environment variable consulted for the data directory when no ``data_dir``
#: argument is given.
DATA_ENV_VAR = "RFLITE_DATA"


class UCIInfo(NamedTuple):
    """Description of one shared UCI-derived set (as in the data sets' README).

    Attributes
    ----------
    file : str
        Path relative to the data directory (``uci/...``).
    fmt : str
        ``"whitespace"``, ``"comma"`` or ``"mat"``.
    inputs : tuple of int or None
        0-based input columns of the text table (README columns minus one);
        ``None`` for .mat files (all columns of the input matrix).
    target : int or None
        0-based target column of the text table; ``None`` for .mat files.
    mat_keys : tuple of str or None
        ``(inputs, target)`` variable names of a .mat file.
    log_target : bool
        Take ``log`` of the target (propulsion).
    n_train, n_test : int
        Rows taken after the shuffle (train first, then test).
    n_noise : int
        N(0, 1) noise columns appended by default.
    d : int
        Input dimension after the noise columns.
    published : dict
        Published test MSE on the standardised target, by method
        (``None`` where the paper has no number).
    harfe_params : dict
        HARFE's published ``N``, ``s``, ``m_lambda`` (= m * lambda) and ``q``.
    shrimp_q : int or None
        The ``q`` of the published SHRIMP number.
    """

    file: str
    fmt: str
    inputs: tuple | None
    target: int | None
    mat_keys: tuple | None
    log_target: bool
    n_train: int
    n_test: int
    n_noise: int
    d: int
    published: dict
    harfe_params: dict
    shrimp_q: int | None


def _cols(*ranges) -> tuple:
    """0-based column indices from inclusive 1-based ranges."""
    out = []
    for lo, hi in ranges:
        out.extend(range(lo - 1, hi))
    return tuple(out)


def _pub(harfe, shrimp, salsa, srfe, lasso):
    return {"HARFE": harfe, "SHRIMP": shrimp, "SALSA": salsa, "SRFE": srfe, "Lasso": lasso}


def _hp(N, s, m_lambda, q):
    return {"N": N, "s": s, "m_lambda": m_lambda, "q": q}


#: The six shared sets, with the README's preprocessing and published numbers.
UCI_DATASETS: dict[str, UCIInfo] = {
    "propulsion": UCIInfo(
        "uci/propulsion.txt", "whitespace", _cols((3, 8), (10, 18)), 1, None, True,
        200, 200, 0, 15,
        _pub(4.17e-5, 1.02e-6, 8.8e-3, 1.54e-2, 2.48e-2), _hp(3000, 300, 1e-10, 2), 2,
    ),
    "airfoil": UCIInfo(
        "uci/airfoil.txt", "whitespace", _cols((1, 5)), 5, None, False,
        750, 750, 36, 41,
        _pub(0.449, 0.265, 0.518, 0.570, 0.520), _hp(80000, 5000, 1.0, 2), 2,
    ),
    "ccpp": UCIInfo(
        "uci/ccpp.mat", "mat", None, None, ("XTrain", "YTrain"), False,
        2000, 2000, 55, 59,
        _pub(0.0677, 0.0655, 0.0678, 0.0744, 0.0740), _hp(10000, 1000, 0.05, 1), 2,
    ),
    "housing": UCIInfo(
        "uci/housing.txt", "whitespace", _cols((2, 3), (5, 14)), 0, None, False,
        256, 250, 0, 12,
        _pub(0.264, 0.394, 0.262, 0.640, 0.445), _hp(10000, 1000, 0.1, 2), 7,
    ),
    "speech": UCIInfo(
        "uci/parkinson21.txt", "comma", _cols((1, 14), (20, 26)), 14, None, False,
        520, 520, 0, 21,
        _pub(0.0238, None, 0.0224, 0.0246, 0.0730), _hp(20000, 1000, 0.1, 2), None,
    ),
    "insulin": UCIInfo(
        "uci/epidata.mat", "mat", None, None, ("snp_data", "insulin_data"), False,
        256, 250, 0, 50,
        _pub(1.014, 1.24, 1.021, 1.646, 1.110), _hp(2560, 170, 2.75, 2), 1,
    ),
}


class UCIDataset(NamedTuple):
    """A preprocessed UCI split (see :func:`load_uci`).

    Attributes
    ----------
    X_train, y_train, X_test, y_test : ndarray
        Standardised with the training statistics; noise columns (if any) are
        the last ``n_noise`` columns of ``X_*``.
    name : str
    d : int
        ``X_train.shape[1]``.
    y_mean, y_std : float
        Training mean and standard deviation of the raw target (of ``log y``
        for propulsion): ``y_raw = y * y_std + y_mean``.
    x_mean, x_std : (d - n_noise,) ndarray
        The same for the input columns (``x_std`` is 1 for constant columns).
    n_noise : int
        Number of appended N(0, 1) columns.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    d: int
    y_mean: float
    y_std: float
    x_mean: np.ndarray
    x_std: np.ndarray
    n_noise: int


def _locate(name, data_dir, default_dir, packaged_dir) -> Path:
    """The search behind :func:`rflite.datasets.uci_path`.

    ``default_dir`` and ``packaged_dir`` are the last two places looked in.
    """
    rel = Path(UCI_DATASETS[name].file)
    env = os.environ.get(DATA_ENV_VAR) or None
    candidates = [
        (f"data_dir argument ({data_dir})" if data_dir is not None
         else "data_dir argument (not given)", data_dir),
        (f"${DATA_ENV_VAR} ({env})" if env else f"${DATA_ENV_VAR} (not set)", env),
        (f"default ({default_dir})", default_dir),
        (f"copy shipped with rflite ({packaged_dir}; housing and airfoil only)", packaged_dir),
    ]
    skipped = []
    for index, (label, base) in enumerate(candidates):
        if base is None:
            continue
        base = Path(base).expanduser()
        for path in (base / rel, base / rel.name):
            if path.is_file():
                if skipped:
                    warn(
                        f"{rel.name} not found in {', '.join(skipped)}; using {path}",
                        UserWarning)
                return path
        if index < 2:  # only locations the user named are worth a warning
            skipped.append(label)
    raise FileNotFoundError(
        f"UCI data file {str(rel)!r} for name={name!r} not found (looked for "
        f"<dir>/{rel} and <dir>/{rel.name}) in: "
        + "; ".join(label for label, _ in candidates)
        + f". Pass data_dir=..., or set {DATA_ENV_VAR}."
    )


@functools.lru_cache(maxsize=16)
def _read_table(path: str, fmt: str, mat_keys, mtime_ns: int):
    """Read a raw table once per (path, modification time); arrays are read-only.

    Every failure of the readers (a truncated or foreign ``.mat`` file, a
    missing variable, text that is not numbers, ragged rows) becomes a
    ``ValueError`` that names the file and says what is wrong, instead of the
    reader's own message, which names neither.
    """
    if fmt == "mat":
        try:
            mat = scipy.io.loadmat(path)
        except Exception as exc:  # scipy raises ValueError, TypeError, MatReadError, ...
            raise ValueError(f"{path}: not a readable MATLAB .mat file "
                             f"({type(exc).__name__}: {exc})") from exc
        missing = [k for k in mat_keys if k not in mat]
        if missing:
            found = sorted(k for k in mat if not k.startswith("__"))
            raise ValueError(f"{path}: MATLAB variable(s) {missing} missing; the file holds {found}")
        tables = []
        for key in mat_keys:
            try:
                tables.append(np.asarray(mat[key], dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}: MATLAB variable {key!r} is not a numeric array "
                                 f"({exc})") from exc
        X, y = tables
        if X.ndim != 2 or y.size != X.shape[0]:
            raise ValueError(f"{path}: {mat_keys[0]!r} must be a 2-D array with one row per "
                             f"entry of {mat_keys[1]!r}; shapes are {X.shape} and {y.shape}")
        tables = (X, y.ravel())
    else:
        try:
            with warnings.catch_warnings():  # an empty file is reported below, not warned
                warnings.simplefilter("ignore", UserWarning)
                table = np.loadtxt(path, delimiter="," if fmt == "comma" else None, ndmin=2)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a table of numbers "
                             f"({'comma' if fmt == 'comma' else 'whitespace'}-separated): {exc}"
                             ) from exc
        if table.size == 0:
            raise ValueError(f"{path}: no data (the file is empty or holds only comments)")
        tables = (np.asarray(table, dtype=np.float64),)
    for t in tables:
        bad = ~np.isfinite(t)
        if bad.any():
            first = np.argwhere(bad)[0]
            where = (f"row {first[0] + 1}, column {first[1] + 1}" if t.ndim == 2
                     else f"entry {first[0] + 1}")
            raise ValueError(f"{path}: {int(bad.sum())} NaN or infinite value(s) in the data, "
                             f"the first at {where} (1-based); clean or impute the file first")
        t.flags.writeable = False
    return tuple(tables)


def _standardise(train, test, ddof):
    mean = train.mean(axis=0)
    std = train.std(axis=0, ddof=ddof)
    # A constant training column (propulsion's column 12, P1 = 0.998) would give
    # 0/0, or, because the computed mean is off by an ulp, +-1 noise of size
    # 1e-15 / 1e-15.  Centre it on its exact value and leave it unscaled (as
    # sklearn's StandardScaler does), so it becomes exactly 0 on the train set.
    const = train.min(axis=0) == train.max(axis=0)
    if np.any(const):
        mean = np.where(const, train[0], mean)
        std = np.where(const, 1.0, std)
    return (train - mean) / std, (test - mean) / std, mean, std
