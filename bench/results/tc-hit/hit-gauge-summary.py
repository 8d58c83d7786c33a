#!/usr/bin/env python3
"""Summarise hit-gauge.sh outputs: per Mooncake group and seed, the hit as a share of the oracle's (after-rescore's
tuning report of that run), median and range over the tie tolerances; then the group means at tie 1.
  python3 bench/results/tc-hit/hit-gauge-summary.py bench/results/tc-hit/hit-gauge-main.txt [more.txt]"""
import json, re, statistics, sys

LINE = re.compile(r"mooncake (\d+)b x([\d.]+) s(\d) (\S+) tie ([\d.]+) ms: hit ([\d.]+)%, p99 (\d+) ms")


def oracle(b, x, s, preset):
    suffix = "" if preset.startswith("llama") else f"-{preset}"
    path = f"bench/results/after-rescore/mooncake-{b}b-x{x}-tuning-s{s}{suffix}.json"
    return json.load(open(path))["oracle"]["hitRate"] * 100


for f in sys.argv[1:]:
    runs = {}
    for m in LINE.finditer(open(f).read()):
        b, x, s, preset, tie, hit, p99 = m.groups()
        runs.setdefault((b, x, preset), {}).setdefault(s, []).append((float(tie), float(hit) / oracle(b, x, s, preset) * 100, int(p99)))
    print(f"== {f}")
    for (b, x, preset), seeds in runs.items():
        parts, at1 = [], []
        for s, rows in sorted(seeds.items()):
            hits = [h for _, h, _ in rows]
            one = [h for t, h, _ in rows if t == 1.0]
            at1 += one
            parts.append(f"s{s} median {statistics.median(hits):.1f}% ({min(hits):.1f}-{max(hits):.1f}), tie 1 {one[0]:.1f}%" if one else f"s{s} ?")
        mean = f"{sum(at1) / len(at1):.1f}%" if len(at1) == len(seeds) else "?"
        print(f"mooncake {b}b x{x} {preset}: hit of oracle {'; '.join(parts)}; mean at tie 1 {mean}")
