"""ndnd's own tools (put/cat, ping/pingserver) through the forwarder."""
import os
import re


def test_put_cat_segmented_object(clients, interop_tmp):
    blob = interop_tmp / "blob.bin"
    payload = os.urandom(300 * 1024)  # ~37 segments of 8800 bytes
    blob.write_bytes(payload)
    clients.ndnd_put("/interop/ndnd/blob", blob)
    res = clients.ndnd_cat("/interop/ndnd/blob")
    assert res.returncode == 0, res.describe()
    assert len(res.stdout_bytes) == len(payload), res.describe()
    assert res.stdout_bytes == payload
    assert re.search(r"Object fetched /interop/ndnd/blob/v=\d+", res.stderr), res.describe()


def test_put_cat_twice_second_from_cache_or_producer(clients, interop_tmp):
    blob = interop_tmp / "small.bin"
    payload = b"tiny object\n" * 100
    blob.write_bytes(payload)
    clients.ndnd_put("/interop/ndnd/small", blob)
    for _ in range(2):
        res = clients.ndnd_cat("/interop/ndnd/small")
        assert res.returncode == 0, res.describe()
        assert res.stdout_bytes == payload


def test_cat_without_producer_fails(clients):
    res = clients.ndnd_cat("/interop/ndnd/missing", timeout=30)
    assert res.returncode != 0, res.describe()


def test_ping(clients):
    server = clients.start("ndnd-pingserver", clients.argv("ndnd", "", "pingserver", "/interop/ping"))
    server.wait_for(r"^PING SERVER")
    # pingserver prints its banner before rib/register completes: retry a bounded number of times.
    for _ in range(5):
        res = clients.run(clients.argv("ndnd", "", "ping", "/interop/ping", "-c", "3", "-i", "100", "-t", "1000"),
                          timeout=20)
        if "3 received" in res.stdout:
            break
    assert "3 interests transmitted, 3 received, 0% lost" in res.stdout, res.describe()


def test_management_datasets(clients):
    """ndnd's nfdc-like tools read NFD status datasets: status/general, faces/list,
    rib/list and fib/list (fetched as /localhost/nfd/<module>/<dataset> with
    CanBePrefix+MustBeFresh, then the exact /v=<version>/seg=0 again)."""
    clients.producer("py", "/interop/mgmt/x")

    def tool(*args):
        return clients.run(clients.argv("ndnd", "", "fw", *args), timeout=20)

    res = tool("status")
    assert res.returncode == 0 and "nFibEntries" in res.stdout, res.describe()
    res = tool("face-list")
    assert res.returncode == 0 and "faceid=" in res.stdout, res.describe()
    res = tool("route-list")
    assert res.returncode == 0 and "prefix=/interop/mgmt/x" in res.stdout, res.describe()
    res = tool("fib-list")
    assert res.returncode == 0 and "/interop/mgmt/x" in res.stdout, res.describe()


def test_strategy_choice_and_cs_info(clients):
    """ndnd's strategy-set, strategy-list and strategy-unset change and read the
    forwarder's strategy choices (strategy-choice/set answers with the versioned
    name, as NFD does), and cs-info reads cs/info with both CS switches on."""

    def tool(*args):
        res = clients.run(clients.argv("ndnd", "", "fw", *args), timeout=20)
        assert res.returncode == 0, res.describe()
        return res

    res = tool("strategy-set", "prefix=/interop/strategy", "strategy=/localhost/nfd/strategy/multicast")
    assert "Status=200" in res.stdout and re.search(r"multicast/v=\d+", res.stdout), res.describe()
    res = tool("strategy-list")
    assert re.search(r"prefix=/interop/strategy strategy=/localhost/nfd/strategy/multicast/v=\d+", res.stdout), res.describe()
    tool("strategy-unset", "prefix=/interop/strategy")
    res = tool("strategy-list")
    assert "/interop/strategy" not in res.stdout and "prefix=/ strategy=" in res.stdout, res.describe()
    res = tool("cs-info")
    assert re.search(r"admit=true", res.stdout) and re.search(r"serve=true", res.stdout), res.describe()
