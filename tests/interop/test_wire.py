"""What the clients put on the wire, and what the forwarder must answer.

Clients talk to the forwarder through tlv_proxy.py (the `wiretap` fixture),
which logs every TLV. These tests pin down the NFD-protocol details that were
observed with ndnd fw and that Trajan must reproduce (see captures.md).
"""
import time

import pytest

from tlv_proxy import elements, summarize


def unwrap(hex_frame: str):
    """(lp fields dict, inner packet bytes) for an LpPacket, ({}, frame) otherwise."""
    frame = bytes.fromhex(hex_frame)
    t, v, _ = next(elements(frame))
    if t != 0x64:
        return {}, frame
    lp, inner = {}, b""
    for et, ev, _w in elements(v):
        if et == 0x50:
            inner = bytes(ev)
        else:
            lp[et] = bytes(ev)
    return lp, inner


def packets(tap, direction=None):
    """[(frame record, lp fields, inner summary, inner bytes)] in log order."""
    out = []
    for rec in tap.frames():
        if direction and rec["dir"] != direction:
            continue
        lp, inner = unwrap(rec["hex"])
        if not inner:
            continue  # LpPacket without fragment (e.g. an Ack): not expected here
        out.append((rec, lp, summarize(inner), inner))
    return out


def wait_frames(tap, pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in packets(tap) if pred(p)]
        if found:
            return found
        time.sleep(0.05)
    return []


PIT_TOKEN = 0x62
REGISTER = "/localhost/nfd/rib/register/"


def start_producer(clients, tap, kind, prefix):
    if kind == "py-v2":
        return clients.producer("py", prefix, "--api", "v2", transport=tap.transport)
    if kind == "py-v1":
        return clients.producer("py", prefix, "--api", "v1", transport=tap.transport)
    if kind == "ndnts":
        return clients.producer("ndnts", prefix, transport=tap.transport)
    if kind == "ndnd":
        c = clients.start("ndnd-pingserver", clients.argv("ndnd", "", "pingserver", prefix),
                          transport=tap.transport)
        c.wait_for(r"^PING SERVER")
        return c
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["py-v2", "py-v1", "ndnts", "ndnd"])
def test_rib_register_exchange(clients, wiretap, kind):
    prefix = f"/interop/wire/{kind}"
    start_producer(clients, wiretap, kind, prefix)
    cmds = wait_frames(wiretap, lambda p: p[0]["dir"] == "c2f" and p[2].get("type") == "Interest"
                       and p[2].get("name", "").startswith(REGISTER))
    assert cmds, f"no rib/register command seen: {wiretap.frames()}"
    rec, lp, cmd, _ = cmds[0]

    # The shape of the command, per client library.
    if kind in ("py-v2", "ndnts", "ndnd"):
        # NDN 0.3 signed Interest: /localhost/nfd/rib/register/<ControlParameters>/params-sha256=...
        # with empty ApplicationParameters and a DigestSha256 InterestSignatureInfo
        # carrying SignatureNonce and SignatureTime.
        assert cmd["name_components"] == 6, cmd
        assert "ApplicationParameters" in cmd["fields"], cmd
        assert cmd["InterestSignatureInfo"]["SignatureType"] == 0, cmd
        assert "SignatureTime" in cmd["InterestSignatureInfo"], cmd
        assert "SignatureNonce" in cmd["InterestSignatureInfo"], cmd
    else:
        # Legacy signed command Interest: ControlParameters, timestamp, nonce,
        # SignatureInfo and SignatureValue are all name components.
        assert cmd["name_components"] == 9, cmd
        assert "ApplicationParameters" not in cmd["fields"], cmd
    if kind == "ndnts":
        assert PIT_TOKEN in lp, "NDNts wraps its Interests in LpPacket with a PitToken"
    if kind == "ndnd":
        assert "MustBeFresh" in cmd["fields"], cmd

    # The forwarder's answer: a Data with exactly the command's name holding a
    # ControlResponse 200 whose ControlParameters echo the prefix and name the face.
    answers = wait_frames(wiretap, lambda p: p[0]["dir"] == "f2c" and p[0]["conn"] == rec["conn"]
                          and p[2].get("type") == "Data" and p[2].get("name") == cmd["name"])
    assert answers, f"no response to {cmd['name']}: {wiretap.frames()}"
    arec, alp, data, _ = answers[0]
    cr = data.get("ControlResponse")
    assert cr and cr["StatusCode"] == 200, data
    assert cr["ControlParameters"]["Name"] == prefix, data
    assert "FaceId" in cr["ControlParameters"], data
    if PIT_TOKEN in lp:
        assert alp.get(PIT_TOKEN) == lp[PIT_TOKEN], "PitToken of the command must be echoed on its Data"


def test_pit_token_round_trip(clients, wiretap):
    """NDNts consumer (LP + PitToken) -> python producer: the consumer gets its own
    PitToken back, the producer's Data travels unchanged."""
    clients.producer("py", "/interop/wire/pit", "--content", "tok", transport=wiretap.transport)
    res = clients.consume("ndnts", "/interop/wire/pit/1", transport=wiretap.transport)
    assert res.returncode == 0, res.describe()
    pk = packets(wiretap)
    interest = [p for p in pk if p[0]["dir"] == "c2f" and p[2].get("name") == "/interop/wire/pit/1"
                and p[2]["type"] == "Interest"]
    assert interest and PIT_TOKEN in interest[0][1], pk
    consumer_conn, token = interest[0][0]["conn"], interest[0][1][PIT_TOKEN]
    delivered = [p for p in pk if p[0]["dir"] == "f2c" and p[0]["conn"] == consumer_conn
                 and p[2]["type"] == "Data"]
    produced = [p for p in pk if p[0]["dir"] == "c2f" and p[2]["type"] == "Data"
                and p[2].get("name") == "/interop/wire/pit/1"]
    assert delivered and produced, pk
    assert delivered[0][1].get(PIT_TOKEN) == token
    assert delivered[0][3] == produced[0][3], "Data must be forwarded byte for byte"


def test_bare_data_without_pit_token_is_accepted(clients, wiretap):
    """python-ndn's legacy NDNApp ignores PIT tokens and answers with a bare Data:
    the forwarder must match it by name."""
    clients.producer("py", "/interop/wire/bare", "--api", "v1", transport=wiretap.transport)
    res = clients.consume("py", "/interop/wire/bare/1", transport=wiretap.transport)
    assert res.returncode == 0, res.describe()
    produced = [p for p in packets(wiretap, "c2f") if p[2]["type"] == "Data"
                and p[2].get("name") == "/interop/wire/bare/1"]
    assert produced and PIT_TOKEN not in produced[0][1], produced
