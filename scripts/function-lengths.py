#!/usr/bin/env python3
"""Lists functions longer than a limit in the given source folders (default: src/place, src/sim
and src/exec, 150 lines), counting from the line that opens the body to the closing brace.

A function is a brace block opened after a parameter list: `) {`, `) const {`, `) override {` and
the like (lambdas inside a function count towards it). Exits 1 when a function over the limit is
not listed in ALLOWED (with its reason in docs/design.md). Usage:
    scripts/function-lengths.py [--limit N] [--all] [DIR ...]
"""
import argparse
import os
import re
import sys

# file:function -> reason (docs/design.md, "Functions over 150 lines").
ALLOWED = {}

OPENER = re.compile(r"\)\s*(const\s*)?(override\s*)?(final\s*)?(noexcept\s*)?(->\s*[\w:<>, *&]+\s*)?\{\s*$")
NAME = re.compile(r"([A-Za-z_][\w:~]*)\s*\([^()]*$|([A-Za-z_][\w:~]*)\s*\(")


def strip(line):
    """The line without string literals and // comments (enough for brace counting)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def functions(path):
    lines = [strip(l) for l in open(path, encoding="utf-8", errors="replace")]
    i = 0
    while i < len(lines):
        line = lines[i]
        if OPENER.search(line) and not re.match(r"\s*(if|for|while|switch|catch)\b", line) \
                and "[" not in line.split("(")[0]:
            # The name: the identifier before the first '(' of the signature (maybe lines above).
            j, sig = i, line
            while j > 0 and "(" not in sig:
                j -= 1
                sig = lines[j] + sig
            m = re.search(r"([A-Za-z_][\w:~]*)\s*\(", sig)
            name = m.group(1) if m else "?"
            depth, k = 0, i
            while k < len(lines):
                depth += lines[k].count("{") - lines[k].count("}")
                if depth <= 0:
                    break
                k += 1
            yield name, j + 1, k - j + 1
            i = k + 1
            continue
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--all", action="store_true", help="list every function, longest first")
    ap.add_argument("dirs", nargs="*", default=["src/place", "src/sim", "src/exec"])
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = []
    for d in args.dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith(".cc"):
                    path = os.path.join(base, f)
                    for name, line, length in functions(path):
                        found.append((length, os.path.relpath(path, root), line, name))
    found.sort(reverse=True)
    bad = 0
    for length, path, line, name in found:
        if not args.all and length <= args.limit:
            continue
        allowed = ALLOWED.get(f"{path}:{name}")
        mark = "" if length <= args.limit else (" (allowed: " + allowed + ")" if allowed else " OVER")
        bad += length > args.limit and not allowed
        print(f"{length:5d}  {path}:{line}  {name}{mark}")
    if bad:
        print(f"function-lengths: {bad} function(s) over {args.limit} lines", file=sys.stderr)
        return 1
    print(f"function-lengths: none over {args.limit} lines in {', '.join(args.dirs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
