# Gate 1 before after-arrivals landed: the tuning set's Mooncake (first half, seeds 1-2) and multi-turn runs, main's
# prefix_aware and peers (pre1-main; multi-turn's peers: bench/results/after-resweep, whose multi-turn tuning runs are the
# same) against each candidate's prefix_aware (pre1-fallback, pre1-memory, pre1-union).
#   python3 bench/results/rescore-mc/pre1-table.py [BASE_FOLDER_WITH_PEERS]
import glob, json, os, re, sys
base = "bench/results/rescore-mc"
PEERS = ["sglang", "llmd", "dynamo", "sagemaker"]
variants = ["fallback", "memory", "union"]
mean = lambda xs: sum(xs) / len(xs)
def load(path):
    r = json.load(open(path))
    return {p["policy"]: p for p in r["policies"]}, r["oracle"]["hitRate"]
groups = {}
for f in glob.glob(f"{base}/pre1-main/*.json"):
    n = os.path.basename(f)
    groups.setdefault(re.sub(r"-s\d+", "", n.replace(".json", "")), []).append(n)
print("| tuning group (seeds 1–2) | policy | mean p99 | Δ vs main | vs best peer (mean) | hit of oracle (mean) | maxLoadRatio (max) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for g in sorted(groups):
    names = sorted(groups[g])
    main = [load(f"{base}/pre1-main/{n}") for n in names]
    peerrep = main if "mooncake" in g else [load(f"bench/results/after-resweep/{n}") for n in names]
    peer = min(PEERS, key=lambda p: mean([m[0][p]["ttftP99Ms"] for m in peerrep]))
    pp = mean([m[0][peer]["ttftP99Ms"] for m in peerrep])
    b = mean([m[0]["prefix_aware"]["ttftP99Ms"] for m in main])
    for v in ["main"] + variants:
        rs = main if v == "main" else [load(f"{base}/pre1-{v}/{n}") for n in names]
        p99 = mean([r[0]["prefix_aware"]["ttftP99Ms"] for r in rs])
        hit = mean([r[0]["prefix_aware"]["hitRate"] / r[1] for r in rs])
        ml = max(r[0]["prefix_aware"]["maxLoadRatio"] for r in rs)
        per = ", ".join(f"{r[0]['prefix_aware']['ttftP99Ms']:,.0f}" for r in rs)
        print(f"| {g} | {v} | {p99:,.0f} ms ({per}) | {100*(p99/b-1):+.1f}% | {100*(p99/pp-1):+.1f}% ({peer} {pp:,.0f}) | {100*hit:.1f}% | {ml:.2f} |")
