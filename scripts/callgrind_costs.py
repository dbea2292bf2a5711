"""Reading a callgrind profile made with `--dump-instr=yes`, for the scripts that
look at the engine's instructions one address at a time (copy_stalls.py,
instructions_by_function.py).

Callgrind writes a function's own costs and, after each `calls=` line, the
inclusive cost of that call at the call's address; only the former are what ran
at an address. Names and positions may be compressed (the default: `fn=(12)`
refers to a name given once, `+3` to an address relative to the last) or not
(`--compress-strings=no --compress-pos=no`); both are read.
"""
import collections
import re

_NAMED = re.compile(r"(c?ob|c?fn)=(?:\((\d+)\))?\s*(.*)")


def self_costs(path):
    """Instructions executed at each address, as a Counter keyed by (object file,
    function, address): each function's own, not its callees'."""
    costs = collections.Counter()
    names = {"ob": {}, "fn": {}}
    current = {"ob": None, "fn": None}
    addr, skip_next = 0, False
    with open(path) as f:
        for line in f:
            m = _NAMED.match(line)
            if m:
                kind, ident, name = m.group(1), m.group(2), m.group(3).strip()
                table = names[kind[-2:]]
                if ident is not None and name:
                    table[ident] = name
                resolved = table.get(ident, name) if ident is not None else name
                if not kind.startswith("c"):
                    current[kind] = resolved
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            fields = line.split()
            tok = fields[0]
            if tok.startswith(("+", "-")):
                addr += int(tok, 0)
            elif tok != "*":
                addr = int(tok, 0)
            if skip_next:
                skip_next = False
            elif len(fields) > 2:
                costs[(current["ob"], current["fn"], addr)] += int(fields[2])
    return costs
