"""NDNts producer -> forwarder -> NDNts consumer."""
import pytest


def assert_data(res, name, content):
    assert res.returncode == 0, res.describe()
    assert res.field("NAME") == name, res.describe()
    assert res.field("CONTENT") == content, res.describe()


def test_exact_name(clients):
    clients.producer("ndnts", "/interop/ndnts")
    res = clients.consume("ndnts", "/interop/ndnts/hello")
    assert_data(res, "/interop/ndnts/hello", "NDNts:/interop/ndnts/hello")


def test_content_and_freshness(clients):
    clients.producer("ndnts", "/interop/ndnts", "--content", "from NDNts", "--freshness", "4000")
    res = clients.consume("ndnts", "/interop/ndnts/x/y", "--must-be-fresh")
    assert_data(res, "/interop/ndnts/x/y", "from NDNts")
    assert res.field("FRESHNESS") == "4000"


def test_typed_components(clients):
    """Version and segment components (types 54 and 50) survive the forwarder."""
    clients.producer("ndnts", "/interop/typed")
    res = clients.consume("ndnts", "/interop/typed/v=7/seg=3")
    assert_data(res, "/interop/typed/v=7/seg=3", "NDNts:/interop/typed/v=7/seg=3")


def test_can_be_prefix(clients):
    clients.producer("ndnts", "/interop/ndnts-cbp")
    res = clients.consume("ndnts", "/interop/ndnts-cbp", "--can-be-prefix")
    assert_data(res, "/interop/ndnts-cbp", "NDNts:/interop/ndnts-cbp")


def test_two_producers_longest_prefix_match(clients):
    clients.producer("ndnts", "/interop/lpm", "--content", "short")
    clients.producer("ndnts", "/interop/lpm/long", "--content", "long")
    assert_data(clients.consume("ndnts", "/interop/lpm/long/1"), "/interop/lpm/long/1", "long")
    assert_data(clients.consume("ndnts", "/interop/lpm/other"), "/interop/lpm/other", "short")


def test_no_producer_nack_or_timeout(clients):
    res = clients.consume("ndnts", "/interop/nobody", "--lifetime", "1000", timeout=15)
    assert res.returncode in (2, 3), res.describe()


@pytest.mark.parametrize("transport", ["tcp", "udp"])
def test_consumer_over_ip(clients, forwarder, transport):
    if transport == "tcp":
        assert forwarder.wait_tcp(), f"nothing accepts TCP on 127.0.0.1:{forwarder.tcp_port}"
    uri = forwarder.tcp_transport if transport == "tcp" else forwarder.udp_transport
    clients.producer("ndnts", "/interop/ndnts-ip")
    res = clients.consume("ndnts", f"/interop/ndnts-ip/{transport}", transport=uri)
    assert_data(res, f"/interop/ndnts-ip/{transport}", f"NDNts:/interop/ndnts-ip/{transport}")


def test_producer_over_tcp(clients, forwarder):
    """NDNts over TCP to 127.0.0.1 treats the face as local: rib/register goes to /localhost/nfd."""
    assert forwarder.wait_tcp(), f"nothing accepts TCP on 127.0.0.1:{forwarder.tcp_port}"
    clients.producer("ndnts", "/interop/ndnts-tcpprod", transport=forwarder.tcp_transport)
    res = clients.consume("ndnts", "/interop/ndnts-tcpprod/1")
    assert_data(res, "/interop/ndnts-tcpprod/1", "NDNts:/interop/ndnts-tcpprod/1")
