"""Compares prefix_aware between two folders of simulator reports (same file names).

python3 bench/results/evict-age/compare.py BASE_FOLDER NEW_FOLDER
Prints per report: hit (and of the oracle's), TTFT p99, maxLoadRatio, base -> new, p99 change.
"""
import json
import os
import sys

base, new = sys.argv[1], sys.argv[2]


def pa(path):
    d = json.load(open(path))
    p = next(x for x in d["policies"] if x["policy"] == "prefix_aware")
    o = d["oracle"]
    oh = o.get("hitRate") if isinstance(o, dict) else None
    return p, oh


print("| report | hit base -> new (of oracle) | p99 ms base -> new (change) | maxLoadRatio base -> new |")
print("| --- | --- | --- | --- |")
for f in sorted(os.listdir(new)):
    if not f.endswith(".json") or not os.path.exists(os.path.join(base, f)):
        continue
    b, ob = pa(os.path.join(base, f))
    n, on = pa(os.path.join(new, f))

    def h(p, o):
        s = f"{100 * p['hitRate']:.1f}%"
        return s + (f" ({100 * p['hitRate'] / o:.1f}%)" if o else "")

    ch = 100 * (n["ttftP99Ms"] / b["ttftP99Ms"] - 1)
    print(
        f"| {f[:-5]} | {h(b, ob)} -> {h(n, on)} | {b['ttftP99Ms']:.1f} -> {n['ttftP99Ms']:.1f} ({ch:+.1f}%) "
        f"| {b['maxLoadRatio']:.2f} -> {n['maxLoadRatio']:.2f} |"
    )
