#!/usr/bin/env python3
"""Lists the functions defined in C++ files with their length in lines, from the first line of the
signature to the closing brace, longest first: scripts/function-lengths.py [--over=N] FILE...

Brace counting over clang-formatted code (strings and comments skipped); a heuristic, not a parser."""
import re
import sys

def strip(line, state):
    # remove strings, chars and comments; state carries block comments
    out = []
    i = 0
    while i < len(line):
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out)
            state['block'] = False; i = j + 2; continue
        c = line[i]
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'] = True; i += 2; continue
        if c in '"\'':
            q = c; i += 1
            while i < len(line) and line[i] != q:
                i += 2 if line[i] == '\\' else 1
            i += 1; out.append(q + q); continue
        out.append(c); i += 1
    return ''.join(out)

def functions(path):
    lines = open(path).read().split('\n')
    state = {'block': False}
    depth = 0
    scopes = []  # stack of ('ns'|'class'|'fn'|'other', start_line, name)
    pending = []  # recent lines of a possible signature
    res = []
    for n, raw in enumerate(lines, 1):
        s = strip(raw, state)
        for ch_i, ch in enumerate(s):
            if ch == '{':
                head = (' '.join(pending) + ' ' + s[:ch_i]).strip()
                in_fn = any(k == 'fn' for k, _, _ in scopes)
                kind = 'other'
                if not in_fn:
                    if re.search(r'\bnamespace\b', head) or head.startswith('extern "'):
                        kind = 'ns'
                    elif re.search(r'\b(class|struct|union|enum)\b[^()]*$', head):
                        kind = 'class'
                    elif ')' in head and not head.rstrip().endswith('='):
                        kind = 'fn'
                m = re.search(r'([~\w:]+(?:operator\S*)?)\s*\(', head)
                name = m.group(1) if m else head[-40:]
                # start line: first pending line
                start = n - len(pending) if pending else n
                scopes.append((kind, start, name))
                pending = []
            elif ch == '}':
                if scopes:
                    kind, start, name = scopes.pop()
                    if kind == 'fn':
                        res.append((n - start + 1, start, name))
                pending = []
            elif ch == ';':
                pending = []
        rest = s.strip()
        if rest and not rest.endswith(('{', '}', ';')) and not rest.startswith('#'):
            pending.append(rest)
        elif rest.endswith(('{', '}', ';')):
            pending = []
    return res

limit = 0
args = sys.argv[1:]
if args and args[0].startswith('--over='):
    limit = int(args[0][7:]); args = args[1:]
rows = [(length, path, start, name) for path in args for length, start, name in functions(path)]
for length, path, start, name in sorted(rows, key=lambda r: (-r[0], r[1], r[2])):
    if length > limit:
        print(f'{length:5d}  {path}:{start}  {name}')
