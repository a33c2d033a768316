import warnings

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def cluster_client():
    """One LocalCluster (two worker processes, one thread each) for the whole run.

    Started on first use (only slow-lane tests use it) and shared by every test
    that fits on a cluster; the tests that kill a worker start their own
    (``own_cluster`` in test_dask.py) so a lost worker never reaches another test.
    """
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           dashboard_address=None, silence_logs=50)
        client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
