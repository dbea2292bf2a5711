"""Cross-library pairs: a producer of one library, a consumer of another."""
import os

import pytest


def assert_data(res, name, content):
    assert res.returncode == 0, res.describe()
    assert res.field("NAME") == name, res.describe()
    assert res.field("CONTENT") == content, res.describe()


@pytest.mark.parametrize("producer,consumer", [("py", "ndnts"), ("ndnts", "py")])
def test_exact_name(clients, producer, consumer):
    prefix = f"/interop/cross/{producer}"
    clients.producer(producer, prefix, "--content", f"{producer} says hi", "--freshness", "1000")
    res = clients.consume(consumer, f"{prefix}/item/1")
    assert_data(res, f"{prefix}/item/1", f"{producer} says hi")
    assert res.field("FRESHNESS") == "1000"


@pytest.mark.parametrize("producer,consumer", [("py", "ndnts"), ("ndnts", "py")])
def test_can_be_prefix(clients, producer, consumer):
    prefix = f"/interop/cross-cbp/{producer}"
    # MustBeFresh wants a FreshnessPeriod: a Data without one satisfies no
    # MustBeFresh Interest (ndn-cxx's Interest::matchesData, which NFD applies).
    clients.producer(producer, prefix, "--content", "prefix match", "--freshness", "1000")
    res = clients.consume(consumer, prefix, "--can-be-prefix", "--must-be-fresh")
    assert_data(res, prefix, "prefix match")


def test_must_be_fresh_wants_a_freshness_period(clients):
    """A Data without a FreshnessPeriod answers a plain Interest, never a
    MustBeFresh one (ndn-cxx's Interest::matchesData, as NFD applies it)."""
    prefix = "/interop/cross-mbf/py"
    clients.producer("py", prefix, "--content", "no freshness")
    res = clients.consume("ndnts", f"{prefix}/a", "--must-be-fresh", "--lifetime", "1000", timeout=15)
    assert res.returncode in (2, 3), res.describe()
    res = clients.consume("ndnts", f"{prefix}/b")
    assert_data(res, f"{prefix}/b", "no freshness")


@pytest.mark.parametrize("producer,consumer", [("py", "ndnts"), ("ndnts", "py")])
def test_no_producer(clients, producer, consumer):
    clients.producer(producer, "/interop/cross-np/here")
    res = clients.consume(consumer, "/interop/cross-np/elsewhere", "--lifetime", "1000", timeout=15)
    assert res.returncode in (2, 3), res.describe()


def test_python_producer_ndnd_cat(clients):
    """ndnd cat on a versioned name fetches segments directly (no RDR metadata);
    the python producer answers seg=0 with FinalBlockId=seg=0: a one-segment object."""
    clients.producer("py", "/interop/cross/cat", "--content", "single segment object", "--final-block")
    res = clients.ndnd_cat("/interop/cross/cat/v=1")
    assert res.returncode == 0, res.describe()
    assert res.stdout_bytes == b"single segment object", res.describe()


def test_ndnd_put_python_consumer(clients, interop_tmp):
    """A CanBePrefix Interest for ndnd put's object prefix gets one of its segments."""
    blob = interop_tmp / "blob.bin"
    blob.write_bytes(os.urandom(20000))
    clients.ndnd_put("/interop/cross/put", blob)
    res = clients.consume("py", "/interop/cross/put", "--can-be-prefix")
    assert res.returncode == 0, res.describe()
    assert res.field("NAME").startswith("/interop/cross/put/"), res.describe()


def test_ndnd_put_ndnts_consumer(clients, interop_tmp):
    blob = interop_tmp / "blob.bin"
    blob.write_bytes(os.urandom(20000))
    clients.ndnd_put("/interop/cross/put2", blob)
    res = clients.consume("ndnts", "/interop/cross/put2", "--can-be-prefix")
    assert res.returncode == 0, res.describe()
    assert res.field("NAME").startswith("/interop/cross/put2/"), res.describe()
