"""Repository-level pytest settings.

``setup.cfg`` collects doctests from every module (``--doctest-modules``) in
``tests``, ``benchmarks`` and ``rflite``; both test folders have a
``conftest.py`` and neither is a package, so collecting the two files as
doctest modules under the same name ``conftest`` stopped the whole-suite run
with "import file mismatch".  They hold no doctests: skip them as modules
(pytest still loads them as conftest plugins).
"""

collect_ignore = ["tests/conftest.py", "benchmarks/conftest.py"]

import contextlib
import pathlib
import warnings

import pytest

_BENCHMARKS = pathlib.Path(__file__).parent / "benchmarks"


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run the slow lane too (tests marked slow, every benchmark)")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects, so ``-m slow`` sees the marks
def pytest_collection_modifyitems(config, items):
    """Two lanes: skip ``@pytest.mark.slow(reason=...)`` tests unless ``--runslow``.

    Every benchmark (run once as a smoke test) is in the slow lane.
    """
    runslow = config.getoption("--runslow")
    for item in items:
        if _BENCHMARKS in pathlib.Path(str(item.fspath)).parents and \
                item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow(reason="benchmark smoke run"))
        mark = item.get_closest_marker("slow")
        if mark is not None and not runslow:
            reason = mark.kwargs.get("reason") or (mark.args[0] if mark.args else "slow")
            item.add_marker(pytest.mark.skip(reason=f"slow lane (--runslow): {reason}"))


@contextlib.contextmanager
def _two_worker_cluster():
    """A LocalCluster of two single-thread worker processes and its client, closed after."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           dashboard_address=None, silence_logs=50)
        client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.close()
            cluster.close()


@pytest.fixture(scope="session")
def cluster_client():
    """One LocalCluster for the whole run, shared by every test that fits on a cluster.

    Started on first use (only slow-lane tests and benchmarks use it); the
    tests that kill a worker take ``own_cluster`` so a lost worker never
    reaches another test.
    """
    with _two_worker_cluster() as client:
        yield client


@pytest.fixture
def own_cluster():
    """A fresh LocalCluster for one test (which may kill its workers), current while it runs."""
    import dask

    with _two_worker_cluster() as client:
        with client.as_current(), dask.config.set(scheduler=client):
            yield client


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "local_dask_fit: keep LOCAL_FIT_MAX_ROWS (small Dask fits run in memory)")


@pytest.fixture(autouse=True)
def _dask_fits_on_the_workers(request, monkeypatch):
    """Dask fits in tests and benchmarks run on the workers, however few the rows.

    A Dask ``X`` of at most ``rflite._core.backend.LOCAL_FIT_MAX_ROWS`` rows
    is otherwise computed and fitted in memory, which would leave the
    distributed fits untested on the small arrays the tests use; tests of
    that seam itself are marked ``local_dask_fit``.
    """
    if request.node.get_closest_marker("local_dask_fit") is None:
        import rflite._core.backend as backend

        monkeypatch.setattr(backend, "LOCAL_FIT_MAX_ROWS", 0)
