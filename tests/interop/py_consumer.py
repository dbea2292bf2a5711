#!/usr/bin/env python3
"""python-ndn consumer for Trajan's interoperability tests.

Usage: py_consumer.py NAME [--can-be-prefix] [--must-be-fresh] [--lifetime MS]

Connects to the forwarder named by NDN_CLIENT_TRANSPORT, expresses one Interest
(ndn.appv2.NDNApp) and prints, on Data:

    NAME <data name URI>
    CONTENT <content as UTF-8, undecodable bytes escaped>
    FRESHNESS <FreshnessPeriod ms or "none">

and exits 0. Exit codes otherwise: 2 Nack (prints "NACK <reason>"), 3 timeout
(prints "TIMEOUT"), 4 cannot connect, 5 validation failure, 1 anything else.
"""
import argparse
import asyncio
import logging
import sys

from ndn import encoding as enc
from ndn import types


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("name")
    p.add_argument("--can-be-prefix", action="store_true")
    p.add_argument("--must-be-fresh", action="store_true")
    p.add_argument("--lifetime", type=int, default=4000, help="InterestLifetime in ms")
    p.add_argument("--debug", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from ndn.appv2 import NDNApp, pass_all

    app = NDNApp()
    result = {"code": 1}

    async def fetch():
        try:
            name, content, ctx = await app.express(
                args.name, validator=pass_all,
                can_be_prefix=args.can_be_prefix, must_be_fresh=args.must_be_fresh,
                lifetime=args.lifetime)
            meta = ctx.get("meta_info")
            fresh = meta.freshness_period if meta is not None and meta.freshness_period is not None else "none"
            text = bytes(content).decode("utf-8", "backslashreplace") if content is not None else ""
            print(f"NAME {enc.Name.to_str(name)}", flush=True)
            print(f"CONTENT {text}", flush=True)
            print(f"FRESHNESS {fresh}", flush=True)
            result["code"] = 0
        except types.InterestNack as e:
            print(f"NACK {e.reason}", flush=True)
            print(f"ERROR Nack reason={e.reason} for {args.name}", file=sys.stderr, flush=True)
            result["code"] = 2
        except types.InterestTimeout:
            print("TIMEOUT", flush=True)
            print(f"ERROR Interest timeout for {args.name}", file=sys.stderr, flush=True)
            result["code"] = 3
        except types.ValidationFailure:
            print(f"ERROR validation failure for {args.name}", file=sys.stderr, flush=True)
            result["code"] = 5
        finally:
            app.shutdown()

    try:
        asyncio.run(app.main_loop(fetch()))
    except (FileNotFoundError, ConnectionError, OSError) as e:
        print(f"ERROR cannot connect to forwarder: {e!r}", file=sys.stderr, flush=True)
        sys.exit(4)
    sys.exit(result["code"])


if __name__ == "__main__":
    main()
