#!/usr/bin/env python3
"""Where the engine's instructions per exchange go, by the function of ours that runs them.

`callgrind_annotate` credits an inlined standard-library line (a bounds check, an
Option match, a pointer write) to the library's file, so about a third of an
exchange shows up under `slice/index.rs`, `option.rs` or `ptr/mod.rs` with no owner.
This credits every executed instruction instead to the innermost inlined frame
that lies in this repository's crates (from `addr2line -i`), so each is counted
against the Trajan function or line whose code it is.

It runs `trajan bench engine` under callgrind twice, at ROUNDS_A and ROUNDS_B rounds
of 64 exchanges (collecting only inside `Forwarder::process_burst` and `tick`), and
reports the difference per exchange: the marginal cost of the timed loop, without
the set-up and the stage measurements that run once per run.

usage:
  scripts/instructions_by_function.py [--by function|line] [--top N] [--rounds A B] [BINARY] [-- BENCH OPTIONS]

defaults: --by function --top 40 --rounds 3000 5000, BINARY target/release/trajan,
bench options `--workload worst --fib-prefixes 1K --pool 200K`. The two callgrind
runs take about a minute each. Needs valgrind and binutils (addr2line).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

import callgrind_costs

EXCHANGES_PER_ROUND = 64
DEFAULT_BENCH = ["--workload", "worst", "--fib-prefixes", "1K", "--pool", "200K"]


def run_callgrind(binary, rounds, bench, out):
    cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}",
           "--toggle-collect=*Forwarder*process_burst*", "--toggle-collect=*Forwarder*tick*",
           binary, "bench", "engine", *bench, "--rounds", str(rounds), "--warmup", "0"]
    try:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except FileNotFoundError:
        sys.exit("valgrind not found: install it (apt-get install valgrind)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"callgrind run failed ({' '.join(cmd[-12:])}):\n{e.stderr.decode(errors='replace')[-2000:]}")


def object_costs(path, object_name):
    """Instructions executed at each address of `object_name` (calls' inclusive costs left out)."""
    costs = collections.Counter()
    for (obj, _, addr), n in callgrind_costs.self_costs(path).items():
        if obj and os.path.basename(obj) == object_name:
            costs[addr] += n
    return costs


def inline_frames(binary, addrs):
    """addr -> [(function, file:line)], innermost first."""
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-C", "-e", binary, *map(hex, addrs)],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    frames, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = int(out[i], 16)
            frames[cur] = []
            i += 1
        else:
            frames[cur].append((out[i], out[i + 1]))
            i += 2
    return frames


def main():
    argv = sys.argv[1:]
    bench = DEFAULT_BENCH
    if "--" in argv:
        k = argv.index("--")
        argv, bench = argv[:k], argv[k + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--by", choices=["function", "line"], default="function")
    p.add_argument("--top", type=int, default=40)
    p.add_argument("--rounds", type=int, nargs=2, default=[3000, 5000], metavar=("A", "B"))
    p.add_argument("binary", nargs="?", default="target/release/trajan")
    args = p.parse_args(argv)
    a_rounds, b_rounds = args.rounds
    if b_rounds <= a_rounds:
        sys.exit("--rounds: B must be more than A")
    with tempfile.TemporaryDirectory() as tmp:
        outs = [os.path.join(tmp, f"cg.{r}") for r in (a_rounds, b_rounds)]
        for r, out in zip((a_rounds, b_rounds), outs):
            run_callgrind(args.binary, r, bench, out)
        name = os.path.basename(args.binary)
        a, b = (object_costs(o, name) for o in outs)
    exchanges = (b_rounds - a_rounds) * EXCHANGES_PER_ROUND
    marginal = {k: (b[k] - a.get(k, 0)) / exchanges for k in b if b[k] > a.get(k, 0)}
    frames = inline_frames(args.binary, sorted(marginal))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # Paths of this repository's crates (absolute, or relative as rustc records
    # a workspace member's), not the standard library's `stdarch/crates/`.
    ours = re.compile(rf"^({re.escape(repo)}/)?crates/")
    totals = collections.Counter()
    for addr, n in marginal.items():
        owner = next((fr for fr in frames.get(addr, []) if ours.search(fr[1])), None)
        if owner is None:
            key = "(outside the repository's crates)"
        elif args.by == "function":
            key = owner[0]
        else:
            key = ours.sub("crates/", owner[1]).split(" ")[0]
        totals[key] += n
    print(f"{sum(marginal.values()):.1f} instructions per exchange in {name} "
          f"(marginal, {a_rounds} -> {b_rounds} rounds; library code such as libc's memcmp is not counted)")
    for key, n in totals.most_common(args.top):
        print(f"{n:8.1f}  {key}")


if __name__ == "__main__":
    main()
