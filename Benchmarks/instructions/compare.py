#!/usr/bin/env python3
"""Where two servers' instructions per request differ, from two callgrind files.

Usage: compare.py A.callgrind REQUESTS_A B.callgrind REQUESTS_B [ROWS]

The counts include what the servers did besides the requests while the file was recorded
(timers, a configuration file's polling): server-instructions.sh subtracts that, this does not.

Prints, per request and A - B: the instructions by module (a Swift module of the server's
binary, or a shared library: the Swift runtime, libc), the functions that differ most by
their own instructions (callees excluded), and the calls of the runtime entry points that
server-counts.sh counts. Self costs only: Swift's async functions return by tail calls, which
callgrind records as calls, so its inclusive costs do not nest as the source does.
server-instructions.sh keeps the files with KEEP=DIR.
"""
import collections
import re
import subprocess
import sys

RUNTIME_CALLS = [
    "swift_retain", "swift_release", "swift_allocObject", "malloc", "swift_task_alloc",
    "swift_task_switch", "swift_task_create", "swift_getGenericMetadata", "swift_task_localValueGet",
    "swift_beginAccess", "swift_dynamicCast",
]


def parse(path):
    """Self cost per function, and call counts per callee, from a callgrind file.

    Functions are keyed by name, with the server binary's object left out so that two servers'
    copies of a function compare; names and objects are compressed as `(id) name` once.
    """
    objects, functions = {}, {}
    self_cost, calls = collections.Counter(), collections.Counter()
    obj = fn = callee = None
    pending = None

    def expand(table, text):
        match = re.match(r"^\((\d+)\)(?: (.*))?$", text)
        if not match:
            return re.sub(r"'\d+$", "", text)
        if match.group(2) is not None:
            # `name'2` is callgrind's name for a second activation in a call cycle.
            table[match.group(1)] = re.sub(r"'\d+$", "", match.group(2))
        return table[match.group(1)]

    with open(path) as lines:
        for line in lines:
            line = line.rstrip("\n")
            if not line:
                continue
            if line[0].isdigit() or line[0] in "+-*":
                parts = line.split()
                if len(parts) < 2:
                    continue
                if pending is None:
                    self_cost[fn] += int(parts[1])
                else:
                    calls[callee] += pending
                    pending = None
            elif line.startswith("ob="):
                obj = expand(objects, line[3:])
            elif line.startswith("fn="):
                fn = (library(obj), expand(functions, line[3:]))
            elif line.startswith("cob="):
                expand(objects, line[4:])
            elif line.startswith("cfn="):
                callee = expand(functions, line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
    return self_cost, calls


def library(obj):
    """The shared library's file name, or None for the server's own binary."""
    name = obj.split("/")[-1]
    return name if ".so" in name else None


def module(key):
    lib, name = key
    if lib:
        return lib
    match = re.match(r"^\$s(\d+)([A-Za-z_0-9]+)", name)
    if match and not re.match(r"^\$s[sS]", name):
        return match.group(2)[: int(match.group(1))]
    return "(other code in the binary)"


def demangled(names):
    mangled = [name for name in names if name.startswith("$s")]
    output = subprocess.run(
        ["swift", "demangle", "--compact", "--simplified"], input="\n".join(mangled), capture_output=True, text=True
    ).stdout.splitlines()
    table = dict(zip(mangled, output))
    return {name: table.get(name, name) for name in names}


def main():
    a_path, a_requests, b_path, b_requests = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    rows = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    a_self, a_calls = parse(a_path)
    b_self, b_calls = parse(b_path)

    def per_request(counter, requests, key):
        result = collections.Counter()
        for k, v in counter.items():
            result[key(k)] += v / requests
        return result

    print(f"instructions per request: A {sum(a_self.values()) / a_requests:.0f}, B {sum(b_self.values()) / b_requests:.0f}")
    print("\n| module | A | B | A - B |\n|---|---:|---:|---:|")
    a_modules, b_modules = per_request(a_self, a_requests, module), per_request(b_self, b_requests, module)
    for name in sorted(set(a_modules) | set(b_modules), key=lambda k: -abs(a_modules[k] - b_modules[k]))[:rows]:
        print(f"| {name} | {a_modules[name]:.0f} | {b_modules[name]:.0f} | {a_modules[name] - b_modules[name]:+.0f} |")
    a_functions = per_request(a_self, a_requests, lambda k: k[1])
    b_functions = per_request(b_self, b_requests, lambda k: k[1])
    a_count = per_request(a_calls, a_requests, lambda k: k)
    b_count = per_request(b_calls, b_requests, lambda k: k)
    top = sorted(set(a_functions) | set(b_functions), key=lambda k: -abs(a_functions[k] - b_functions[k]))[:rows]
    names = demangled(top)
    print("\n| function (own instructions) | A | B | A - B | calls A - B |\n|---|---:|---:|---:|---:|")
    for name in top:
        print(
            f"| {names[name][:110]} | {a_functions[name]:.0f} | {b_functions[name]:.0f} | "
            f"{a_functions[name] - b_functions[name]:+.0f} | {a_count[name] - b_count[name]:+.1f} |"
        )
    print("\n| runtime calls per request | A | B | A - B |\n|---|---:|---:|---:|")
    for name in RUNTIME_CALLS:
        print(f"| `{name}` | {a_count[name]:.1f} | {b_count[name]:.1f} | {a_count[name] - b_count[name]:+.1f} |")


if __name__ == "__main__":
    main()
