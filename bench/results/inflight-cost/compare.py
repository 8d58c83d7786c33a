#!/usr/bin/env python3
"""prefix_aware in two folders of simulator reports, run by run: TTFT p50/p99, hit rate, maxLoadRatio, and
the best peer's p99 (sglang, llmd, dynamo, sagemaker, as bench/sim-tables.ts) from PEER_FOLDER (default
BASE_FOLDER; the peers are unchanged by a policy variant).
  python3 bench/results/inflight-cost/compare.py BASE_FOLDER NEW_FOLDER [PEER_FOLDER]   (under bench/results/)"""
import json, os, sys

base, new = (os.path.join("bench/results", f) for f in sys.argv[1:3])
peer_dir = os.path.join("bench/results", sys.argv[3]) if len(sys.argv) > 3 else base
PEERS = ("sglang", "llmd", "dynamo", "sagemaker")
print(f"| run | p50 before → after (ms) | p99 before → after (ms) | Δp99 | hit before → after | maxLoadRatio after | best peer p99 (who) | after vs peer |")
print("|---|---|---|---|---|---|---|---|")
for name in sorted(os.listdir(new)):
    if not name.endswith(".json") or not os.path.exists(os.path.join(base, name)):
        continue
    b = json.load(open(os.path.join(base, name)))
    a = json.load(open(os.path.join(new, name)))
    pb = next(p for p in b["policies"] if p["policy"] == "prefix_aware")
    pa = next(p for p in a["policies"] if p["policy"] == "prefix_aware")
    pj = os.path.join(peer_dir, name)
    peers = [p for p in json.load(open(pj))["policies"] if p["policy"] in PEERS] if os.path.exists(pj) else []
    best = min(peers, key=lambda p: p["ttftP99Ms"]) if peers else None
    d = 100 * (pa["ttftP99Ms"] / pb["ttftP99Ms"] - 1)
    vs = f"{100 * (pa['ttftP99Ms'] / best['ttftP99Ms'] - 1):+.1f}%" if best else "—"
    print(
        f"| {name[:-5]} | {pb['ttftP50Ms']:.1f} → {pa['ttftP50Ms']:.1f} | {pb['ttftP99Ms']:.1f} → {pa['ttftP99Ms']:.1f} | {d:+.1f}% "
        f"| {100 * pb['hitRate']:.1f}% → {100 * pa['hitRate']:.1f}% | {pa['maxLoadRatio']:.2f} "
        + (f"| {best['ttftP99Ms']:.1f} ({best['policy']}) | {vs} |" if best else "| — | — |")
    )
