#!/usr/bin/env python3
"""Side-by-side of et and ggml's CPU backend on testcases/perf/llama3-8b.txt.

    compare.py [--by-n] ET.json... -- GGML.txt...
    compare.py NEW.json... -- OLD.json...

ET.json are `et run-op --test-file llama3-8b.txt --perf -o json` reports,
GGML.txt the console output of `test-backend-ops perf -b CPU --test-file
llama3-8b.txt`, from alternated rounds. Each op's figure is the median over
the rounds of each round's time (et: the launch's median; ggml: us/run), and
the table gives both and et/ggml, as Markdown. With --by-n, one row per op
and a column per token count n (the names' -nN suffix), the ratios over the
issue's targets (1.2 for MUL_MAT, 1.5 for the rest) in bold: one build's table
(docs/performance.md puts the release and plain builds' tables into one).
Given et reports on both sides (two builds or commits of et, alternated),
the table gives both and their ratio. The last line is the ratios'
geometric mean. The script only reads; it is not part of et.
"""
import math
import json
import re
import statistics
import sys


def et_times(path):
    out = {}
    for p in json.load(open(path)).get('perf', []):
        name = p['case'].rsplit(' ', 1)[-1]
        out[name] = p['median_ns'] / 1e3
    return out


GGML = re.compile(r'\(name=([^,]+),.*?([0-9.]+) us/run')


def ggml_times(path):
    out = {}
    for line in open(path, errors='replace'):
        m = GGML.search(line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def times(path):
    """et's report (.json) or ggml's console output."""
    return et_times(path) if path.endswith('.json') else ggml_times(path)


def fmt(us):
    if us >= 1000:
        return f'{us / 1000:.2f} ms'
    return f'{us:.1f} µs'


NAME_N = re.compile(r'^(.*?)(?:-m\d+-k\d+)?-n(\d+)$')


def by_n(rows):
    """rows: (name, et µs, ggml µs) -> the op x n table."""
    ops, cols = {}, []
    for name, e, g in rows:
        m = NAME_N.match(name)
        if not m:
            continue
        op, n = m.group(1), int(m.group(2))
        ops.setdefault(op, {})[n] = (e, g)
        if n not in cols:
            cols.append(n)
    cols.sort()
    print('| op | ' + ' | '.join(f'n = {n}' + (': et / ggml (ratio)' if i == 0 else '')
                                  for i, n in enumerate(cols)) + ' |')
    print('|---|' + '---|' * len(cols))
    for op, cells in ops.items():
        target = 1.2 if op.startswith('mul_mat_') and not op.startswith('mul_mat_id') else 1.5
        out = []
        for n in cols:
            if n not in cells:
                out.append('')
                continue
            e, g = cells[n]
            r = f'{e / g:.2f}'
            out.append(f'{fmt(e)} / {fmt(g)} (' + (f'**{r}**' if e / g > target else r) + ')')
        print(f'| {op} | ' + ' | '.join(out) + ' |')


def main(argv):
    pivot = '--by-n' in argv
    argv = [a for a in argv if a != '--by-n']
    if '--' not in argv:
        sys.exit('usage: compare.py [--by-n] ET.json... -- GGML.txt...')
    i = argv.index('--')
    ets = [et_times(p) for p in argv[:i]]
    ggs = [times(p) for p in argv[i + 1:]]
    right = 'B' if argv[i + 1].endswith('.json') else 'ggml CPU'
    left = 'A' if right == 'B' else 'et'
    names = [n for n in ggs[0] if all(n in e for e in ets)]
    if pivot:
        by_n([(n, statistics.median(x[n] for x in ets), statistics.median(x[n] for x in ggs if n in x))
              for n in names])
        return
    print(f'| op (test-file name) | {left} median | {right} median | {left} / {right} |')
    print('|---|---|---|---|')
    logs = []
    for n in names:
        e = statistics.median(x[n] for x in ets)
        g = statistics.median(x[n] for x in ggs if n in x)
        logs.append(math.log(e / g))
        print(f'| {n} | {fmt(e)} | {fmt(g)} | {e / g:.2f} |')
    if logs:
        print(f'\ngeometric mean of {left} / {right}: {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)} ops')
    missing = [n for n in ggs[0] if n not in names]
    if missing:
        print('\nnot timed by et:', ', '.join(missing))


if __name__ == '__main__':
    main(sys.argv[1:])
