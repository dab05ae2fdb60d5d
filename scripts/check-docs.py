#!/usr/bin/env python3
"""Docs that stay true: reruns the commands written beside the numbers the docs quote.

  scripts/check-docs.py --hexplan build/release/hexplan            # every cheap check
  scripts/check-docs.py --hexplan build/release/hexplan --all      # the slow ones too
  scripts/check-docs.py --hexplan build/release/hexplan --first-look   # README's "A first look"
  scripts/check-docs.py --list                                     # the checks, not run

The convention (docs/design.md, "Numbers in the docs"). A number a doc quotes stands beside the
command that printed it, in one of three forms, each marked by an HTML comment (invisible on GitHub):

1. A transcript: `<!-- check -->` on the line before a fenced block whose lines starting with
   `$ ` are commands (a trailing `\\` continues one) and whose other lines are what the command
   before them prints on stdout.
2. An output: `<!-- check: COMMAND -->` before a fenced block or a Markdown table that is exactly
   what COMMAND prints (a script that writes the table, `... | grep ...`, `... | sed -n 2,5p`).
3. A sentence: `<!-- check: COMMAND => OUTPUT -->` inside a paragraph: COMMAND prints the one line
   OUTPUT, and every number of OUTPUT must also appear in the paragraph's text (or in the table
   right after the paragraph).

Options go between `check` and the colon, space-separated: `slow` (run only with --all: over about
5 s in a release build, a planner's time limit, a measurement), `rel=X` (relative tolerance for
numbers with a decimal point; default 1e-6), `ignore=REGEX` (lines matching it, expected or
printed, are not compared: planning times, wall-clock figures, paths), `cols=N,M` (a table
check compares only those columns, 1-based, of the body rows, printed as `a | b` lines, so a
command can check the measured columns of a table that also quotes sources). In the expected text a line
`...` stands for any number of printed lines. Integers compare exactly; a decimal also matches when
the printed value rounds to it (a doc may quote 36.1 for 36.12); every other word compares exactly
(whitespace runs are one space).

Commands run with bash from a scratch copy of the repository root (its entries linked, so
`../shared/...` and `docs/...` paths work and written files land in the scratch directory), with
`hexplan` on PATH and `build/release/hexplan` both meaning --hexplan, and HX_REPO naming the
checkout itself (for the benchmark binaries a slow check may run). Exit status: 0 when every
check that ran passed, 1 otherwise, 2 for a malformed marker or a bad argument.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"<!--\s*check\b(?P<opts>[^:>]*?)(?::\s*(?P<body>.*?))?\s*-->", re.S)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
CHEAP_SECONDS = 5.0


class Check:
    def __init__(self, path, line, opts, commands, paragraph=None):
        self.path, self.line, self.opts = path, line, opts
        self.commands = commands  # [(command, expected lines)]
        self.paragraph = paragraph  # a sentence check's paragraph, which must quote its numbers

    def where(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"


def parse_opts(text, where):
    opts = {"slow": False, "rel": 1e-6, "ignore": [], "cols": None}
    for word in text.split():
        if word == "slow":
            opts["slow"] = True
        elif word.startswith("rel="):
            opts["rel"] = float(word[4:])
        elif word.startswith("cols="):
            opts["cols"] = [int(c) for c in word[5:].split(",")]
        elif word.startswith("ignore="):
            opts["ignore"].append(re.compile(word[7:]))
        else:
            raise ValueError(f"{where}: unknown check option '{word}' "
                             "(slow, rel=X, ignore=REGEX, cols=N,M)")
    return opts


def following_block(lines, i, where):
    """The fenced block or table starting at the first non-blank line from i: (lines, end)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].lstrip().startswith("```"):
        fence = lines[i].lstrip()[:3]
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith(fence):
            j += 1
        return lines[i + 1:j], j
    if i < len(lines) and lines[i].lstrip().startswith("|"):
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        return lines[i:j], j
    raise ValueError(f"{where}: a check marker must precede a fenced block or a table")


def transcript(block, where):
    """[(command, expected output lines)] of a console block."""
    out, cmd, cont = [], None, False
    for line in block:
        if cont:
            cmd += "\n" + line
            cont = line.rstrip().endswith("\\")
        elif line.startswith("$ "):
            cmd = line[2:]
            out.append([cmd, []])
            cont = line.rstrip().endswith("\\")
        elif out:
            out[-1][1].append(line)
        else:
            raise ValueError(f"{where}: a transcript starts with a `$ ` command line")
        if out:
            out[-1][0] = cmd
    return [(c, e) for c, e in out]


def paragraph_at(lines, i):
    """The paragraph around line i, with the table right after it if there is one."""
    start, end = i, i
    while start > 0 and lines[start - 1].strip():
        start -= 1
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    nxt = end + 1
    while nxt < len(lines) and not lines[nxt].strip():
        nxt += 1
    while nxt < len(lines) and lines[nxt].lstrip().startswith("|"):
        end = nxt
        nxt += 1
    return "\n".join(lines[start:end + 1])


def checks_in(path):
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    found = []
    for m in MARKER.finditer(text):
        if m.start() > 0 and text[m.start() - 1] == "`":
            continue  # quoted in a code span (the convention's own description)
        line = text.count("\n", 0, m.start())
        where = f"{os.path.relpath(path, ROOT)}:{line + 1}"
        opts = parse_opts(m.group("opts") or "", where)
        body = m.group("body")
        last = text.count("\n", 0, m.end())
        if body is None:
            block, _ = following_block(lines, last + 1, where)
            found.append(Check(path, line + 1, opts, transcript(block, where)))
        elif "=>" in body:
            cmd, expected = (s.strip() for s in body.split("=>", 1))
            para = MARKER.sub("", paragraph_at(lines, line))
            found.append(Check(path, line + 1, opts, [(cmd, [expected])], para))
        else:
            block, _ = following_block(lines, last + 1, where)
            if opts["cols"]:
                block = table_columns(block, opts["cols"])
            found.append(Check(path, line + 1, opts, [(body.strip(), block)]))
    return found


def sandbox(hexplan):
    """A scratch directory standing in for the repository root (see the module doc)."""
    top = tempfile.mkdtemp(prefix="hx-docs-")
    repo = os.path.join(top, "repo")
    os.makedirs(os.path.join(repo, "build", "release"))
    for name in os.listdir(ROOT):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(ROOT, name), os.path.join(repo, name))
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(top, "shared"))
    os.symlink(os.path.abspath(hexplan), os.path.join(repo, "build", "release", "hexplan"))
    bindir = os.path.join(top, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(hexplan), os.path.join(bindir, "hexplan"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HX_REPO=ROOT)
    return top, repo, env


def table_columns(block, cols):
    """The body rows of a Markdown table, only the given (1-based) columns, joined by ` | `."""
    rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in block]
    body = rows[2:] if len(rows) > 1 and set("".join(rows[1])) <= set("-: ") else rows
    return [" | ".join(r[c - 1] for c in cols) for r in body]


def tokens(line):
    """(words, numbers) of a line: the text with each number replaced by #, and the numbers
    (thousands separators dropped: 18,853 is 18853)."""
    line = re.sub(r"(?<=\d),(?=\d{3}\b)", "", line)
    nums = NUMBER.findall(line)
    words = " ".join(NUMBER.sub("#", line).split())
    return words, nums


def number_matches(expected, got, rel):
    if re.fullmatch(r"[-+]?\d+", expected):
        return re.fullmatch(r"[-+]?\d+", got) is not None and int(expected) == int(got)
    e, g = float(expected), float(got)
    if abs(e - g) <= rel * max(abs(e), abs(g)):
        return True
    decimals = len(expected.split(".", 1)[1].split("e")[0].split("E")[0]) if "." in expected else 0
    return "e" not in expected.lower() and round(g, decimals) == round(e, decimals)


def line_matches(expected, got, rel):
    (ew, en), (gw, gn) = tokens(expected), tokens(got)
    if ew != gw or len(en) != len(gn):
        return False
    return all(number_matches(e, g, rel) for e, g in zip(en, gn))


def lines_match(expected, got, rel):
    """Expected lines (with `...` elisions) against printed lines; (ok, first mismatch)."""
    def match(i, j):
        if i == len(expected):
            return j == len(got), ("(end of the quoted output)", got[j] if j < len(got) else None)
        if expected[i].strip() == "...":
            for k in range(j, len(got) + 1):
                ok, miss = match(i + 1, k)
                if ok:
                    return True, miss
            return False, (expected[i + 1] if i + 1 < len(expected) else None, None)
        if j < len(got) and line_matches(expected[i], got[j], rel):
            return match(i + 1, j + 1)
        return False, (expected[i], got[j] if j < len(got) else "(end of output)")
    return match(0, 0)


def clean(lines, opts):
    out = [l.rstrip() for l in lines]
    out = [l for l in out if not any(r.search(l) for r in opts["ignore"])]
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out


def run_command(cmd, repo, env, timeout):
    start = time.time()
    try:
        proc = subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s", time.time() - start
    return proc, None, time.time() - start


def run_check(check, repo, env, timeout):
    """Problems found (empty: the check passed) and the seconds it took."""
    problems, total = [], 0.0
    for cmd, expected in check.commands:
        proc, err, secs = run_command(cmd, repo, env, timeout)
        total += secs
        short = " ".join(cmd.split())
        if err:
            problems.append(f"`{short}`: {err}")
            continue
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            problems.append(f"`{short}`: exit {proc.returncode}: {tail}")
            continue
        ok, (want, got) = lines_match(clean(expected, check.opts),
                                      clean(proc.stdout.split("\n"), check.opts), check.opts["rel"])
        if not ok:
            problems.append(f"`{short}`:\n      doc says: {want}\n      it prints: {got}")
        if check.paragraph is not None:
            quoted = set(NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3}\b)", "", check.paragraph)))
            missing = [n for n in NUMBER.findall(expected[0]) if n not in quoted]
            if missing:
                problems.append(f"`{short}`: the paragraph does not quote {', '.join(missing)}")
    return problems, total


def all_checks(files):
    checks = []
    for path in files:
        checks += checks_in(path)
    return checks


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def run_checks(args, checks):
    top, repo, env = sandbox(args.hexplan)
    failed = ran = 0
    try:
        for check in checks:
            if check.opts["slow"] and not args.all:
                continue
            ran += 1
            problems, secs = run_check(check, repo, env, args.timeout)
            slow_note = ""
            if not check.opts["slow"] and secs > CHEAP_SECONDS:
                slow_note = f" (over {CHEAP_SECONDS:g} s: mark it slow)"
            print(f"{'ok  ' if not problems else 'FAIL'} {check.where()} {secs:.1f} s{slow_note}",
                  flush=True)
            for p in problems:
                print("    " + p)
            failed += bool(problems)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print(f"check-docs: {ran - failed} of {ran} checks passed ({len(checks) - ran} marked slow, "
          "not run)" if not args.all else f"check-docs: {ran - failed} of {ran} checks passed")
    return 1 if failed else 0


def first_look_commands():
    """The commands of README's "A first look" (continuations joined, comments dropped)."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## A first look", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    commands, current = [], ""
    for line in block.split("\n"):
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        cmd = strip_comment(current).strip()
        current = ""
        if cmd:
            commands.append(" ".join(cmd.split()))
    return commands


def strip_comment(line):
    """The line without a trailing `# comment` (a # outside quotes, after a blank)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def first_look(args):
    commands = first_look_commands()
    top, repo, env = sandbox(args.hexplan)
    script = ["fails=0"]
    for n, cmd in enumerate(commands):
        log = os.path.join(top, f"cmd{n}.log")
        script += ["start=$EPOCHREALTIME",
                   f"{{ {cmd} ; }} >{log} 2>&1",
                   "rc=$?",
                   "secs=$(awk \"BEGIN{print $EPOCHREALTIME - $start}\")",
                   f"if [ $rc -eq 0 ]; then printf 'ok   %6.1f s  %s\\n' \"$secs\" {shell_quote(cmd)};"
                   f" else printf 'FAIL %6.1f s  exit %s: %s\\n' \"$secs\" \"$rc\" {shell_quote(cmd)};"
                   f" tail -n 5 {log} | sed 's/^/    /'; fails=$((fails+1)); fi"]
    script += [f"echo \"first-look: $(( {len(commands)} - fails )) of {len(commands)} commands"
               " exited 0\"", "[ $fails -eq 0 ]"]
    try:
        proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=repo, env=env)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0 if proc.returncode == 0 else 1


SELF_TEST_GOOD = """Quoted 42 and 3.14. <!-- check: echo 42 3.1415 => 42 3.14 -->

<!-- check -->
```console
$ printf 'a 1\\nb 2.5\\nc 3\\nd 4\\n'
a 1
...
d 4.0
$ echo 18853 \\
    done
18,853 done
```

<!-- check cols=1,3 ignore=^skip: printf 'x | 1000\\nskip | 7\\ny | 2.000001\\n' -->

| name | source | n |
|---|---|---|
| x | s | 1,000 |
| y | s | 2.000 |
"""

# Each must fail: a wrong integer, a decimal off by more than rel and its digits, a word changed,
# a number the paragraph does not quote, a failing command, a line too many.
SELF_TEST_BAD = """<!-- check: echo 193 places => 257 places --> 257

<!-- check: echo 1.26 => 1.2 --> 1.2

<!-- check: echo 5 devices => 5 nodes --> 5

<!-- check: echo 5 => 5 --> no number here

<!-- check: false => 1 --> 1

<!-- check: printf '1\\n2\\n' -->
```
1
```
"""


def self_test():
    """The checker against fixtures (no hexplan needed): the good checks pass, every bad one fails."""
    top = tempfile.mkdtemp(prefix="hx-docs-selftest-")
    try:
        results = {}
        for name, text in (("good", SELF_TEST_GOOD), ("bad", SELF_TEST_BAD)):
            path = os.path.join(top, name + ".md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            sb_top, repo, env = sandbox(sys.executable)
            try:
                results[name] = [run_check(c, repo, env, 30)[0] for c in checks_in(path)]
            finally:
                shutil.rmtree(sb_top, ignore_errors=True)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    ok = len(results["good"]) == 3 and not any(results["good"])
    ok = ok and len(results["bad"]) == 6 and all(results["bad"])
    for name, problems in results.items():
        for i, p in enumerate(problems):
            print(f"{name} check {i + 1}: {'; '.join(p) if p else 'passed'}")
    print(f"check-docs self-test: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    sys.setrecursionlimit(100000)  # lines_match recurses once per quoted line
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hexplan", default=os.path.join(ROOT, "build", "release", "hexplan"),
                    help="the binary to rerun the commands with (a release build)")
    ap.add_argument("--all", action="store_true", help="run the checks marked slow too")
    ap.add_argument("--first-look", action="store_true",
                    help="run every command of README's 'A first look' instead, expecting exit 0")
    ap.add_argument("--list", action="store_true", help="list the checks and their commands")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker on built-in fixtures (needs no hexplan)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per command, seconds")
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    try:
        checks = all_checks([os.path.abspath(f) for f in args.files] or doc_files())
    except (ValueError, OSError) as e:
        print(f"check-docs: {e}", file=sys.stderr)
        return 2
    if args.list:
        for c in checks:
            for cmd, _ in c.commands:
                print(f"{c.where()}{' (slow)' if c.opts['slow'] else ''}: {' '.join(cmd.split())}")
        return 0
    if not os.access(args.hexplan, os.X_OK):
        print(f"check-docs: --hexplan {args.hexplan}: not an executable (make release)",
              file=sys.stderr)
        return 2
    return first_look(args) if args.first_look else run_checks(args, checks)


if __name__ == "__main__":
    sys.exit(main())
