#!/usr/bin/env python3
"""A logging Unix-socket proxy for NDN stream faces (Trajan interop tests).

    tlv_proxy.py --listen /tmp/x/proxy.sock --upstream /tmp/x/nfd.sock --log frames.jsonl

Accepts client connections on --listen, opens one connection to the forwarder's
socket (--upstream) per client and copies bytes both ways unchanged. Each
complete top-level TLV seen in either direction is appended to --log as one
JSON line: {"t": seconds, "conn": n, "dir": "c2f"|"f2c", "hex": "...",
"summary": {...}}. Prints READY once listening; exits on SIGTERM/SIGINT, or by
itself after --max-seconds (default 300) so that it never outlives a test run.

The module also offers decode()/summarize() for tests that inspect the frames.
"""
import argparse
import asyncio
import json
import signal
import sys
import time

# --- minimal TLV decoding ----------------------------------------------------

TLV_NAMES = {
    0x05: "Interest", 0x06: "Data", 0x64: "LpPacket", 0x07: "Name",
    0x21: "CanBePrefix", 0x12: "MustBeFresh", 0x1e: "ForwardingHint", 0x0a: "Nonce",
    0x0c: "InterestLifetime", 0x22: "HopLimit", 0x24: "ApplicationParameters",
    0x2c: "InterestSignatureInfo", 0x2e: "InterestSignatureValue",
    0x14: "MetaInfo", 0x15: "Content", 0x16: "SignatureInfo", 0x17: "SignatureValue",
    0x18: "ContentType", 0x19: "FreshnessPeriod", 0x1a: "FinalBlockId",
    0x1b: "SignatureType", 0x1c: "KeyLocator", 0x26: "SignatureNonce", 0x28: "SignatureTime",
    0x2a: "SignatureSeqNum",
    # NDNLPv2
    0x50: "Fragment", 0x51: "Sequence", 0x52: "FragIndex", 0x53: "FragCount",
    0x62: "PitToken", 0x0320: "Nack", 0x0321: "NackReason", 0x032c: "IncomingFaceId",
    0x0330: "NextHopFaceId", 0x0334: "CachePolicy", 0x0340: "CongestionMark",
    0x0344: "Ack", 0x0348: "TxSequence", 0x034c: "NonDiscovery", 0x0350: "PrefixAnnouncement",
    # NFD management
    0x65: "ControlResponse", 0x66: "StatusCode", 0x67: "StatusText", 0x68: "ControlParameters",
    0x69: "FaceId", 0x6f: "Origin", 0x6a: "Cost", 0x6c: "Flags", 0x6d: "ExpirationPeriod",
    0x6b: "Strategy", 0x72: "Uri", 0x81: "LocalUri",
}

NACK_REASONS = {0: "None", 50: "Congestion", 100: "Duplicate", 150: "NoRoute"}


def read_varnum(buf, off):
    """Returns (value, new_offset) or None if buf is too short."""
    if off >= len(buf):
        return None
    first = buf[off]
    if first < 0xfd:
        return first, off + 1
    size = {0xfd: 2, 0xfe: 4, 0xff: 8}[first]
    if off + 1 + size > len(buf):
        return None
    return int.from_bytes(buf[off + 1:off + 1 + size], "big"), off + 1 + size


def split_frames(buf):
    """Splits a byte buffer into complete TLVs. Returns (frames, rest)."""
    frames = []
    off = 0
    while True:
        t = read_varnum(buf, off)
        if t is None:
            break
        ln = read_varnum(buf, t[1])
        if ln is None:
            break
        end = ln[1] + ln[0]
        if end > len(buf):
            break
        frames.append(bytes(buf[off:end]))
        off = end
    return frames, buf[off:]


def elements(buf):
    """Yields (type, value bytes, whole TLV bytes) for each TLV in buf."""
    off = 0
    while off < len(buf):
        t, o = read_varnum(buf, off)
        ln, o = read_varnum(buf, o)
        yield t, buf[o:o + ln], buf[off:o + ln]
        off = o + ln


def nni(b):
    return int.from_bytes(b, "big") if b else 0


def name_uri(name_value):
    """URI of a Name given its TLV-VALUE (python-ndn's formatting)."""
    from ndn.encoding import Name
    name_tlv = bytes([0x07]) + _enc_len(len(name_value)) + bytes(name_value)
    return Name.to_str(Name.from_bytes(name_tlv))


def _enc_len(n):
    if n < 0xfd:
        return bytes([n])
    if n <= 0xffff:
        return b"\xfd" + n.to_bytes(2, "big")
    return b"\xfe" + n.to_bytes(4, "big")


def summarize(frame):
    """A dict describing one top-level TLV (Interest, Data or LpPacket)."""
    t, v, _ = next(elements(frame))
    out = {"type": TLV_NAMES.get(t, hex(t)), "len": len(frame)}
    if t == 0x64:
        lp = {}
        for et, ev, _w in elements(v):
            if et == 0x50:
                out["fragment"] = summarize(bytes(ev))
            elif et == 0x0320:
                reason = 0
                for nt, nv, _ in elements(ev):
                    if nt == 0x0321:
                        reason = nni(nv)
                lp["Nack"] = NACK_REASONS.get(reason, reason)
            elif et == 0x62:
                lp["PitToken"] = bytes(ev).hex()
            else:
                lp[TLV_NAMES.get(et, hex(et))] = bytes(ev).hex()
        out["lp"] = lp
        return out
    if t in (0x05, 0x06):
        fields = []
        for et, ev, _w in elements(v):
            nm = TLV_NAMES.get(et, hex(et))
            if et == 0x07:
                out["name"] = name_uri(ev)
                out["name_components"] = sum(1 for _ in elements(ev))
            elif et == 0x0c or et == 0x19:
                out[nm] = nni(ev)
            elif et == 0x14:
                for mt, mv, _ in elements(ev):
                    out[TLV_NAMES.get(mt, hex(mt))] = nni(mv) if mt in (0x18, 0x19) else bytes(mv).hex()
            elif et in (0x16, 0x2c):
                sig = {}
                for st, sv, _ in elements(ev):
                    sig[TLV_NAMES.get(st, hex(st))] = nni(sv) if st in (0x1b, 0x28, 0x2a) else bytes(sv).hex()
                out[nm] = sig
            elif et == 0x15:
                out["content_len"] = len(ev)
                try:
                    ct, cv, _ = next(elements(ev))
                    if ct == 0x65:
                        cr = {}
                        for rt, rv, _ in elements(cv):
                            if rt == 0x66:
                                cr["StatusCode"] = nni(rv)
                            elif rt == 0x67:
                                cr["StatusText"] = bytes(rv).decode("utf-8", "replace")
                            elif rt == 0x68:
                                cr["ControlParameters"] = control_parameters(rv)
                        out["ControlResponse"] = cr
                except (StopIteration, TypeError, KeyError, IndexError):
                    pass
            fields.append(nm)
        out["fields"] = fields
    return out


def control_parameters(v):
    cp = {}
    for t, val, _ in elements(v):
        nm = TLV_NAMES.get(t, hex(t))
        cp[nm] = name_uri(val) if t == 0x07 else (nni(val) if t in (0x69, 0x6f, 0x6a, 0x6c, 0x6d) else bytes(val).hex())
    return cp


# --- proxy -------------------------------------------------------------------

class Proxy:
    def __init__(self, listen, upstream, log_path):
        self.listen = listen
        self.upstream = upstream
        self.log = open(log_path, "a", buffering=1)
        self.t0 = time.monotonic()
        self.nconn = 0

    def record(self, conn, direction, frame):
        try:
            summary = summarize(frame)
        except Exception as e:  # never let decoding break forwarding
            summary = {"error": repr(e)}
        self.log.write(json.dumps({"t": round(time.monotonic() - self.t0, 6), "conn": conn,
                                   "dir": direction, "hex": frame.hex(), "summary": summary}) + "\n")

    async def pump(self, conn, direction, reader, writer):
        buf = b""
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                writer.write(chunk)
                buf += chunk
                frames, buf = split_frames(buf)
                for f in frames:
                    self.record(conn, direction, f)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def handle(self, creader, cwriter):
        self.nconn += 1
        conn = self.nconn
        try:
            freader, fwriter = await asyncio.open_unix_connection(self.upstream)
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(self.pump(conn, "c2f", creader, fwriter),
                             self.pump(conn, "f2c", freader, cwriter))


async def amain(args):
    proxy = Proxy(args.listen, args.upstream, args.log)
    server = await asyncio.start_unix_server(proxy.handle, path=args.listen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    print("READY", flush=True)
    try:
        await asyncio.wait_for(stop.wait(), timeout=args.max_seconds)
    except asyncio.TimeoutError:
        print("max-seconds reached, exiting", file=sys.stderr)
    server.close()


def main():
    p = argparse.ArgumentParser(description="logging NDN Unix-socket proxy")
    p.add_argument("--listen", required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--max-seconds", type=float, default=300)
    args = p.parse_args()
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
