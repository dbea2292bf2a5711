#!/usr/bin/env python3
"""Lists the likely store-forwarding stalls of the engine's hot functions.

A load wider than the stores it reads (a 32-byte copy of a struct whose fields
were just written one by one) cannot be served from the store buffer: it waits
until those stores reach the cache. This guest has no performance counters to
show such stalls, so this reads them from the code: in each function named,
every 16- or 32-byte load from the stack that overlaps a narrower store among
the 60 executed instructions before it (in address order), with how often it
ran per exchange (from a callgrind profile). A row is a place to look, not a verdict.

usage:
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
      target/release/trajan bench engine --workload worst \\
      --fib-prefixes 1K --warmup 0 --pool 200K --rounds 1000 --json
  scripts/copy_stalls.py cg.out target/release/trajan 64000 [FUNCTION...]

64000 is the rounds times the 64 exchanges of a round; a row's count per
exchange also counts the runs of the stage measurement after the timed loop. Without FUNCTION, every
function of the engine, table and wire crates is read; rows that ran less than
once per 20 exchanges are left out.
"""
import collections
import re
import signal
import subprocess
import sys

import callgrind_costs

WINDOW = 60
CRATES = ("trajan_engine::", "trajan_tables::", "trajan_wire::")
STORE_WIDTH = {"b": 1, "w": 2, "l": 4, "q": 8}
REG_WIDTH = [(r"%(r\d+b|[a-d]l|sil|dil|bpl)$", 1), (r"%(r\d+w|[a-d]x|si|di|bp)$", 2), (r"%(r\d+d|e[a-z]{2})$", 4)]


def function_costs(profile):
    """Instructions executed at each address (a function's own, not its callees'),
    by function, for the functions of the engine, table and wire crates."""
    costs = collections.defaultdict(collections.Counter)
    for (_, function, addr), n in callgrind_costs.self_costs(profile).items():
        if function and function.startswith(CRATES):
            costs[function][addr] += n
    return costs


def disassemble(binary, lo, hi):
    """(address, mnemonic, operands) of the instructions in [lo, hi)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={lo}", f"--stop-address={hi}", binary],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            ops = [o.strip() for o in re.split(r",(?![^()]*\))", m.group(3).split("#")[0]) if o.strip()]
            yield int(m.group(1), 16), m.group(2), ops


def stack_offset(operand):
    m = re.fullmatch(r"(-?0x[0-9a-f]+)?\(%rsp\)", operand)
    return None if m is None else int(m.group(1) or "0", 16)


def store_width(mnemonic, source):
    for pattern, width in REG_WIDTH:
        if re.match(pattern, source):
            return width
    return STORE_WIDTH.get(mnemonic[-1], 8)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    profile, binary, exchanges = sys.argv[1], sys.argv[2], float(sys.argv[3])
    by_function = function_costs(profile)
    for function in sys.argv[4:] or sorted(by_function):
        cost = by_function.get(function)
        if not cost:
            print(f"{function}: not in the profile")
            continue
        # Only what ran: the stores that precede a load on the path taken.
        code = [i for i in disassemble(binary, min(cost), max(cost) + 16) if cost[i[0]]]
        header = f"{function}:"
        for i, (addr, mnemonic, ops) in enumerate(code):
            wide = len(ops) == 2 and mnemonic.startswith("vmov") and re.match(r"%[xy]mm", ops[1])
            start = stack_offset(ops[0]) if wide else None
            if start is None or cost[addr] / exchanges < 0.05:
                continue
            width = 32 if "ymm" in ops[1] else 16
            narrow = []
            for _, m2, ops2 in code[max(0, i - WINDOW):i]:
                at = stack_offset(ops2[1]) if len(ops2) == 2 and m2.startswith("mov") and "mm" not in ops2[0] else None
                if at is not None and at < start + width and start < at + store_width(m2, ops2[0]) and store_width(m2, ops2[0]) < width:
                    narrow.append(f"{m2} {','.join(ops2)}")
            if narrow:
                if header:
                    print(header)
                    header = None
                where = subprocess.run(["addr2line", "-i", "-C", "-e", binary, hex(addr)], capture_output=True, text=True).stdout.split()
                print(f"  {cost[addr] / exchanges:5.2f}/exchange {addr:x} {mnemonic} {','.join(ops)}: over {len(narrow)} narrower stores"
                      f" (last: {narrow[-1]}) at {' < '.join(w.split('/')[-1] for w in where[:3])}")


if __name__ == "__main__":
    main()
