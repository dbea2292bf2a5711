#!/usr/bin/env python3
"""python-ndn producer for Trajan's interoperability tests.

Usage: py_producer.py PREFIX [--content TEXT] [--freshness MS] [--api v2|v1] [--final-block]

Connects to the forwarder named by NDN_CLIENT_TRANSPORT (python-ndn's default
client configuration), registers PREFIX with rib/register and answers every
Interest under it with a Data whose name is the Interest name. The content is
TEXT, or "python-ndn:<interest name>" when no --content is given. Prints READY
(flushed) once the registration succeeded, one "INTEREST <name>" line per
Interest served, and exits 0 on SIGTERM/SIGINT.

--api v2 (default) uses ndn.appv2.NDNApp, whose rib/register is a signed
Interest in the NDN 0.3 format (ApplicationParameters + InterestSignatureInfo,
DigestSha256). --api v1 uses the legacy ndn.app.NDNApp, whose rib/register is a
"command Interest" in the old format (timestamp, nonce, SignatureInfo and
SignatureValue appended as name components). A forwarder must accept both.

--final-block sets FinalBlockId to the last name component when that component
is a segment number, so that a segment fetcher (ndnd cat) sees a one-segment
object.
"""
import argparse
import asyncio
import logging
import signal
import sys

from ndn import encoding as enc
from ndn.security import DigestSha256Signer, KeychainDigest


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("prefix")
    p.add_argument("--content", default=None)
    p.add_argument("--freshness", type=int, default=None, help="FreshnessPeriod in ms")
    p.add_argument("--api", choices=["v1", "v2"], default="v2")
    p.add_argument("--final-block", action="store_true")
    p.add_argument("--debug", action="store_true")
    return p.parse_args()


def content_for(args, name) -> bytes:
    if args.content is not None:
        return args.content.encode()
    return f"python-ndn:{enc.Name.to_str(name)}".encode()


def meta_for(args, name) -> dict:
    meta = {}
    if args.freshness is not None:
        meta["freshness_period"] = args.freshness
    if args.final_block and name and enc.Component.get_type(name[-1]) == enc.Component.TYPE_SEGMENT:
        meta["final_block_id"] = bytes(name[-1])
    return meta


def say(line: str):
    print(line, flush=True)


def fail(msg: str, code: int = 1):
    print(f"ERROR {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def run_v2(args) -> bool:
    from ndn.appv2 import NDNApp

    app = NDNApp()
    prefix = enc.Name.normalize(args.prefix)
    signer = DigestSha256Signer()
    state = {"registered": False}

    def on_interest(name, _app_param, reply, _context):
        say(f"INTEREST {enc.Name.to_str(name)}")
        reply(app.make_data(name, content_for(args, name), signer, **meta_for(args, name)))

    app.attach_handler(prefix, on_interest)

    async def after_start():
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, app.shutdown)
        if not await app.register(prefix):
            print(f"ERROR rib/register {args.prefix} failed", file=sys.stderr, flush=True)
            app.shutdown()
            return
        state["registered"] = True
        say("READY")

    try:
        asyncio.run(app.main_loop(after_start()))
    except (FileNotFoundError, ConnectionError, OSError) as e:
        fail(f"cannot connect to forwarder: {e!r}", 4)
    return state["registered"]


def run_v1(args) -> bool:
    from ndn.app import NDNApp

    app = NDNApp(keychain=KeychainDigest())
    prefix = enc.Name.normalize(args.prefix)
    state = {"registered": False}

    def on_interest(name, _param, _app_param):
        say(f"INTEREST {enc.Name.to_str(name)}")
        app.put_data(name, content_for(args, name), **meta_for(args, name))

    async def after_start():
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, app.shutdown)
        if not await app.register(prefix, on_interest):
            print(f"ERROR rib/register {args.prefix} failed", file=sys.stderr, flush=True)
            app.shutdown()
            return
        state["registered"] = True
        say("READY")

    try:
        asyncio.run(app.main_loop(after_start()))
    except (FileNotFoundError, ConnectionError, OSError) as e:
        fail(f"cannot connect to forwarder: {e!r}", 4)
    return state["registered"]


def main():
    args = parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    ok = run_v2(args) if args.api == "v2" else run_v1(args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
