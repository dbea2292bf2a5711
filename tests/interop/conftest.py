"""Fixtures for Trajan's interoperability tests with python-ndn, NDNts and ndnd.

The forwarder under test is chosen by INTEROP_FORWARDER=trajan|ndnd (default
trajan). Each test gets a fresh forwarder in its own temporary directory, with
its Unix socket there and UDP/TCP listeners on a free loopback port. Client
programs reach it through NDN_CLIENT_TRANSPORT, as unmodified NDN applications
would through client.conf.

Everything third-party comes from .interop/ (scripts/interop-setup.sh); tests
skip with a clear message when a piece is missing.
"""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
INTEROP = REPO / ".interop"
VENV_PY = INTEROP / "venv" / "bin" / "python"
NDND = INTEROP / "bin" / "ndnd"
NODE_DIR = INTEROP / "node"
SETUP_HINT = "run `bash scripts/interop-setup.sh` first"

FORWARDER = os.environ.get("INTEROP_FORWARDER", "trajan").strip().lower()
START_TIMEOUT_S = float(os.environ.get("INTEROP_START_TIMEOUT", "15"))
CLIENT_TIMEOUT_S = float(os.environ.get("INTEROP_CLIENT_TIMEOUT", "30"))


def trajan_bin() -> Path:
    p = Path(os.environ.get("TRAJAN_BIN", "target/release/trajan"))
    return p if p.is_absolute() else REPO / p


# ---------------------------------------------------------------------------
# forwarder configuration: keep each in one small function so that it can
# follow the forwarder's schema as it changes.

def trajan_config(tmp: Path, sock: Path, udp_port: int, tcp_port: int) -> str:
    """Trajan's TOML configuration (schema: config/default.toml)."""
    return (
        "[faces]\n"
        f'unix_path = "{sock}"\n'
        f'udp_listen = ["127.0.0.1:{udp_port}"]\n'
        f'tcp_listen = ["127.0.0.1:{tcp_port}"]\n'
        "[log]\n"
        'level = "debug"\n'
    )


def ndnd_config(tmp: Path, sock: Path, udp_port: int, tcp_port: int) -> str:
    """ndnd fw (YaNFD) YAML configuration.

    ndnd binds its TCP/UDP listeners to 0.0.0.0 and [::] on the given port (no
    address option); multicast, WebSocket and HTTP/3 are switched off so that
    it sends nothing beyond the sockets the tests open. One forwarding thread:
    ndnd's content store is per thread and Interests are dispatched to threads
    by name hash, so with several threads a CanBePrefix Interest can miss Data
    cached by another thread.
    """
    return f"""\
core:
  log_level: DEBUG
faces:
  congestion_marking: false
  udp:
    enabled_unicast: true
    enabled_multicast: false
    port_unicast: {udp_port}
    lifetime: 600
  tcp:
    enabled: true
    port_unicast: {tcp_port}
  unix:
    enabled: true
    socket_path: {sock}
  websocket:
    enabled: false
  http3:
    enabled: false
fw:
  threads: 1
mgmt:
  allow_localhop: false
tables:
  content_store:
    capacity: 1024
    admit: true
    serve: true
  rib:
    readvertise_nlsr: false
"""


# ---------------------------------------------------------------------------
# helpers

def free_port() -> int:
    """A port that is free for both TCP and UDP on every address (ndnd binds 0.0.0.0)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("0.0.0.0", 0))
            port = t.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                    u.bind(("0.0.0.0", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free TCP+UDP port found")


def unix_accepts(path: Path) -> bool:
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(str(path))
            return True
        except OSError:
            return False


def tcp_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_process(proc: subprocess.Popen, term_timeout: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after term_timeout."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=term_timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


def tail(path: Path, max_chars: int = 20000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    return text if len(text) <= max_chars else "...\n" + text[-max_chars:]


# ---------------------------------------------------------------------------
# the forwarder under test

@dataclass
class Forwarder:
    kind: str
    tmp: Path
    sock_path: Path
    udp_port: int
    tcp_port: int
    log_path: Path
    argv: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None

    @property
    def transport(self) -> str:
        return f"unix://{self.sock_path}"

    @property
    def tcp_transport(self) -> str:
        return f"tcp://127.0.0.1:{self.tcp_port}"

    @property
    def udp_transport(self) -> str:
        return f"udp://127.0.0.1:{self.udp_port}"

    def start(self) -> None:
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.argv, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.kind} ({' '.join(self.argv)}) exited with {self.proc.returncode} "
                            f"during start-up:\n{tail(self.log_path)}", pytrace=False)
            if unix_accepts(self.sock_path):
                return
            time.sleep(0.05)
        stop_process(self.proc)
        pytest.fail(f"{self.kind} did not accept connections on {self.sock_path} within "
                    f"{START_TIMEOUT_S}s:\n{tail(self.log_path)}", pytrace=False)

    def wait_tcp(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if tcp_accepts(self.tcp_port):
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
        self._log.close()

    def log(self) -> str:
        return tail(self.log_path)


def make_forwarder(tmp: Path) -> Forwarder:
    sock = tmp / "nfd.sock"
    udp_port, tcp_port = free_port(), free_port()
    log = tmp / "forwarder.log"
    if FORWARDER == "ndnd":
        if not NDND.exists():
            pytest.skip(f"ndnd not installed at {NDND}: {SETUP_HINT}")
        cfg = tmp / "ndnd-fw.yml"
        cfg.write_text(ndnd_config(tmp, sock, udp_port, tcp_port))
        argv = [str(NDND), "fw", "run", str(cfg)]
    elif FORWARDER == "trajan":
        binary = trajan_bin()
        if not binary.exists():
            pytest.skip(f"Trajan binary not found at {binary}: build it with "
                        "`cargo build --release -p trajan` or set TRAJAN_BIN")
        cfg = tmp / "trajan.toml"
        cfg.write_text(trajan_config(tmp, sock, udp_port, tcp_port))
        argv = [str(binary), "run", "--config", str(cfg)]
    else:
        raise pytest.UsageError(f"INTEROP_FORWARDER must be 'trajan' or 'ndnd', not {FORWARDER!r}")
    return Forwarder(FORWARDER, tmp, sock, udp_port, tcp_port, log, argv)


@pytest.fixture
def interop_tmp(tmp_path_factory) -> Path:
    # Unix socket paths are limited to 107 bytes: keep the directory short.
    return Path(tmp_path_factory.mktemp("fw", numbered=True))


@pytest.fixture
def forwarder(request, interop_tmp):
    fw = make_forwarder(interop_tmp)
    fw.start()
    request.node._interop_forwarder = fw
    yield fw
    fw.stop()


# ---------------------------------------------------------------------------
# client programs

class Client:
    """A long-running client program (producer) whose output lines are collected."""

    def __init__(self, name: str, argv: list[str], env: dict, log_path: Path, stdin_path: Path | None = None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.lines: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        self._stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(argv, env=env, stdin=self._stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        with open(self.log_path, "ab") as log:
            for raw in self.proc.stdout:
                log.write(raw)
                log.flush()
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.lines.append(line)
                self._q.put(line)
        self._q.put(None)

    def wait_for(self, pattern: str, timeout: float = CLIENT_TIMEOUT_S) -> str:
        """Wait (bounded) for an output line matching the regex; fail the test otherwise."""
        rx = re.compile(pattern)
        for line in list(self.lines):
            if rx.search(line):
                return line
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"{self.name} exited ({self.proc.wait()}) before printing /{pattern}/:\n"
                            + "\n".join(self.lines[-50:]))
            if rx.search(line):
                return line
        pytest.fail(f"{self.name} did not print /{pattern}/ within {timeout}s:\n" + "\n".join(self.lines[-50:]))

    def wait_ready(self, timeout: float = CLIENT_TIMEOUT_S) -> None:
        self.wait_for(r"^READY$", timeout)

    def stop(self) -> int | None:
        stop_process(self.proc)
        self._reader.join(timeout=5)
        if self._stdin is not subprocess.DEVNULL:
            self._stdin.close()
        return self.proc.returncode


@dataclass
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = b""

    def field(self, key: str) -> str | None:
        """Value of a 'KEY value' line printed by the py_/ndnts_ consumers."""
        for line in self.stdout.splitlines():
            if line == key:
                return ""
            if line.startswith(key + " "):
                return line[len(key) + 1:]
        return None

    def describe(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.returncode}\n--- stdout ---\n{self.stdout[-4000:]}"
                f"\n--- stderr ---\n{self.stderr[-4000:]}")


class Clients:
    """Starts client programs against one forwarder (NDN_CLIENT_TRANSPORT set)."""

    def __init__(self, fw: Forwarder, tmp: Path):
        self.fw = fw
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir(exist_ok=True)
        self.started: list[Client] = []
        self.ran: list[Result] = []
        self._n = 0

    def env(self, transport: str | None = None) -> dict:
        env = dict(os.environ)
        env["NDN_CLIENT_TRANSPORT"] = transport or self.fw.transport
        # A private HOME: no ~/.ndn/client.conf or keychain of the user leaks in.
        env["HOME"] = str(self.home)
        env["INTEROP_NODE_DIR"] = str(NODE_DIR)
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    # command lines --------------------------------------------------------
    @staticmethod
    def argv(kind: str, role: str, *args: str) -> list[str]:
        if kind == "py":
            require_python_ndn()
            return [str(VENV_PY), str(HERE / f"py_{role}.py"), *args]
        if kind == "ndnts":
            require_ndnts()
            return [shutil.which("node") or "node", str(HERE / f"ndnts_{role}.mjs"), *args]
        if kind == "ndnd":
            require_ndnd()
            return [str(NDND), *args]
        raise ValueError(kind)

    def start(self, name: str, argv: list[str], transport: str | None = None,
              stdin_path: Path | None = None) -> Client:
        self._n += 1
        c = Client(name, argv, self.env(transport), self.tmp / f"client{self._n}-{name}.log", stdin_path)
        self.started.append(c)
        return c

    def run(self, argv: list[str], timeout: float = CLIENT_TIMEOUT_S, transport: str | None = None,
            binary: bool = False) -> Result:
        """Run a client to completion (bounded); a hang fails the test."""
        try:
            cp = subprocess.run(argv, env=self.env(transport), stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode("utf-8", "replace")
            err = (e.stderr or b"").decode("utf-8", "replace")
            pytest.fail(f"client timed out after {timeout}s: {' '.join(argv)}\n{out[-2000:]}\n{err[-2000:]}")
        res = Result(argv, cp.returncode, cp.stdout.decode("utf-8", "replace") if not binary else "",
                     cp.stderr.decode("utf-8", "replace"), cp.stdout)
        self.ran.append(res)
        return res

    # the contract shared by the py_ and ndnts_ programs -----------------
    def producer(self, kind: str, prefix: str, *extra: str, transport: str | None = None,
                 ready_timeout: float = CLIENT_TIMEOUT_S) -> Client:
        c = self.start(f"{kind}-producer", self.argv(kind, "producer", prefix, *extra), transport)
        c.wait_ready(ready_timeout)
        return c

    def consume(self, kind: str, name: str, *extra: str, transport: str | None = None,
                timeout: float = CLIENT_TIMEOUT_S) -> Result:
        return self.run(self.argv(kind, "consumer", name, *extra), timeout=timeout, transport=transport)

    # ndnd tools --------------------------------------------------------
    def ndnd_put(self, prefix: str, data_path: Path, *extra: str) -> Client:
        c = self.start("ndnd-put", self.argv("ndnd", "", "put", *extra, prefix), stdin_path=data_path)
        c.wait_for(r"Registered route", CLIENT_TIMEOUT_S)
        return c

    def ndnd_cat(self, name: str, timeout: float = CLIENT_TIMEOUT_S) -> Result:
        return self.run(self.argv("ndnd", "", "cat", name), timeout=timeout, binary=True)

    def close(self):
        for c in reversed(self.started):
            c.stop()

    def report(self) -> str:
        parts = []
        for c in self.started:
            parts.append(f"=== {c.name}: {' '.join(c.argv)} (exit {c.proc.returncode}) ===\n"
                         + "\n".join(c.lines[-60:]))
        for r in self.ran:
            parts.append("=== " + r.describe())
        return "\n".join(parts)


def require_python_ndn():
    if not VENV_PY.exists():
        pytest.skip(f"python-ndn venv missing at {VENV_PY}: {SETUP_HINT}")


def require_ndnts():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (NODE_DIR / "node_modules" / "@ndn" / "endpoint").exists():
        pytest.skip(f"NDNts not installed in {NODE_DIR}: {SETUP_HINT}")


def require_ndnd():
    if not NDND.exists():
        pytest.skip(f"ndnd not installed at {NDND}: {SETUP_HINT}")


@pytest.fixture
def clients(request, forwarder, interop_tmp):
    cs = Clients(forwarder, interop_tmp)
    request.node._interop_clients = cs
    yield cs
    cs.close()


# ---------------------------------------------------------------------------
# wiretap: a logging proxy between clients and the forwarder's Unix socket

@dataclass
class Wiretap:
    sock_path: Path
    log_path: Path
    proc: subprocess.Popen

    @property
    def transport(self) -> str:
        return f"unix://{self.sock_path}"

    def frames(self) -> list[dict]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.strip()]


@pytest.fixture
def wiretap(forwarder, interop_tmp):
    sock = interop_tmp / "tap.sock"
    log = interop_tmp / "frames.jsonl"
    proc = subprocess.Popen([sys.executable, str(HERE / "tlv_proxy.py"), "--listen", str(sock),
                             "--upstream", str(forwarder.sock_path), "--log", str(log),
                             "--max-seconds", "300"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 10
    while not unix_accepts(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"tlv_proxy did not start: {proc.stdout.read().decode(errors='replace')}")
        time.sleep(0.05)
    yield Wiretap(sock, log, proc)
    stop_process(proc)


# ---------------------------------------------------------------------------
# attach the forwarder's log and the clients' output to failing tests

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        fw = getattr(item, "_interop_forwarder", None)
        cs = getattr(item, "_interop_clients", None)
        if cs is not None:
            report.sections.append(("interop clients", cs.report()))
        if fw is not None:
            report.sections.append((f"{fw.kind} log ({fw.log_path})", fw.log()))


def pytest_report_header(config):
    return [f"interop: forwarder={FORWARDER} "
            f"({trajan_bin() if FORWARDER == 'trajan' else NDND}), .interop={INTEROP}"]
