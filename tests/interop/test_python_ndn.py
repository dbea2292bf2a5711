"""python-ndn producer -> forwarder -> python-ndn consumer."""
import time

import pytest


def assert_data(res, name, content):
    assert res.returncode == 0, res.describe()
    assert res.field("NAME") == name, res.describe()
    assert res.field("CONTENT") == content, res.describe()


@pytest.mark.parametrize("api", ["v2", "v1"])
def test_exact_name(clients, api):
    # v2: rib/register as an NDN 0.3 signed Interest; v1: legacy command Interest.
    clients.producer("py", "/interop/py", "--api", api)
    res = clients.consume("py", "/interop/py/hello")
    assert_data(res, "/interop/py/hello", "python-ndn:/interop/py/hello")


def test_content_and_freshness(clients):
    clients.producer("py", "/interop/py", "--content", "hello world", "--freshness", "5000")
    res = clients.consume("py", "/interop/py/a/b/c", "--must-be-fresh")
    assert_data(res, "/interop/py/a/b/c", "hello world")
    assert res.field("FRESHNESS") == "5000"


def test_several_consumers(clients):
    clients.producer("py", "/interop/many")
    for i in range(5):
        assert_data(clients.consume("py", f"/interop/many/{i}"), f"/interop/many/{i}",
                    f"python-ndn:/interop/many/{i}")


def test_can_be_prefix(clients):
    clients.producer("py", "/interop/cbp")
    res = clients.consume("py", "/interop/cbp", "--can-be-prefix")
    assert_data(res, "/interop/cbp", "python-ndn:/interop/cbp")


def test_can_be_prefix_from_content_store(clients):
    """After the producer is gone, a CanBePrefix Interest is answered from the CS
    with the longer cached name, and an exact Interest for the prefix is not."""
    prod = clients.producer("py", "/interop/cs", "--freshness", "60000")
    assert_data(clients.consume("py", "/interop/cs/obj/1"), "/interop/cs/obj/1", "python-ndn:/interop/cs/obj/1")
    prod.stop()
    time.sleep(0.3)
    res = clients.consume("py", "/interop/cs/obj", "--can-be-prefix", "--lifetime", "1000")
    assert_data(res, "/interop/cs/obj/1", "python-ndn:/interop/cs/obj/1")
    res = clients.consume("py", "/interop/cs/obj", "--lifetime", "1000")
    assert res.returncode in (2, 3), res.describe()


def test_must_be_fresh_after_freshness_expired(clients):
    prod = clients.producer("py", "/interop/fresh", "--freshness", "200")
    assert_data(clients.consume("py", "/interop/fresh/x"), "/interop/fresh/x", "python-ndn:/interop/fresh/x")
    prod.stop()
    time.sleep(0.6)
    # Stale in the CS: served without MustBeFresh, not with it.
    assert_data(clients.consume("py", "/interop/fresh/x", "--lifetime", "1000"),
                "/interop/fresh/x", "python-ndn:/interop/fresh/x")
    res = clients.consume("py", "/interop/fresh/x", "--must-be-fresh", "--lifetime", "1000")
    assert res.returncode in (2, 3), res.describe()


def test_no_producer_nack_or_timeout(clients):
    res = clients.consume("py", "/interop/nobody/here", "--lifetime", "1000", timeout=15)
    assert res.returncode in (2, 3), res.describe()
    assert res.field("NACK") is not None or res.field("TIMEOUT") is not None, res.describe()


@pytest.mark.parametrize("transport", ["tcp", "udp"])
def test_consumer_over_ip(clients, forwarder, transport):
    """Producer on the Unix socket, consumer over TCP or UDP on 127.0.0.1."""
    if transport == "tcp":
        assert forwarder.wait_tcp(), f"nothing accepts TCP on 127.0.0.1:{forwarder.tcp_port}"
    uri = forwarder.tcp_transport if transport == "tcp" else forwarder.udp_transport
    clients.producer("py", "/interop/ip")
    res = clients.consume("py", f"/interop/ip/{transport}", transport=uri)
    assert_data(res, f"/interop/ip/{transport}", f"python-ndn:/interop/ip/{transport}")


def test_producer_over_tcp(clients, forwarder):
    """rib/register sent over a TCP face from 127.0.0.1."""
    assert forwarder.wait_tcp()
    clients.producer("py", "/interop/tcpprod", transport=forwarder.tcp_transport)
    assert_data(clients.consume("py", "/interop/tcpprod/1"), "/interop/tcpprod/1", "python-ndn:/interop/tcpprod/1")
