# Gate 2's tables: prefix_aware of main (g2-main, which also holds llm-d's and Dynamo's runs) against each patch's
# prefix_aware (g2-fallback, g2-memory, g2-union), arrival seeds 25-32, the four Mooncake groups.
# Means over seeds as bench/sim-tables.ts takes them: best peer = the lower mean p99 of llm-d and Dynamo; hit of
# the oracle = mean over seeds of hit / oracle hit.   python3 bench/results/rescore-mc/gate2-table.py
import glob, json, os, re
base = "bench/results/rescore-mc"
variants = ["fallback", "memory", "union"]
groups = [("8B 8 x2.5", "8b-x2.5", "llama-3.1-8b-h100-vllm"), ("8B 16 x5", "16b-x5", "llama-3.1-8b-h100-vllm"),
          ("MoE 8 x2", "8b-x2", "qwen3-30b-a3b-h100-vllm"), ("MoE 16 x4", "16b-x4", "qwen3-30b-a3b-h100-vllm")]
mean = lambda xs: sum(xs) / len(xs)
def load(folder, name):
    r = json.load(open(f"{base}/{folder}/{name}"))
    return {p["policy"]: p for p in r["policies"]}, r["oracle"]["hitRate"]
print("| group (seeds 25–32) | policy | mean p99 | Δ vs main | vs best peer (mean) | per seed vs best peer | behind it on | hit of oracle (mean) [min–max] | maxLoadRatio (max) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for label, fleet, preset in groups:
    files = sorted(glob.glob(f"{base}/g2-main/mooncake-{fleet}-scoring-s*-{preset}.json"),
                   key=lambda p: int(re.search(r"-s(\d+)-", p).group(1)))
    names = [os.path.basename(f) for f in files]
    main = [load("g2-main", n) for n in names]
    peer = min(["llmd", "dynamo"], key=lambda p: mean([m[0][p]["ttftP99Ms"] for m in main]))
    peer_p99 = [m[0][peer]["ttftP99Ms"] for m in main]
    base_p99 = mean([m[0]["prefix_aware"]["ttftP99Ms"] for m in main])
    rows = [("main", main)] + [(v, [load(f"g2-{v}", n) for n in names]) for v in variants]
    for v, rs in rows:
        p99 = [r[0]["prefix_aware"]["ttftP99Ms"] for r in rs]
        per = [a / b - 1 for a, b in zip(p99, peer_p99)]
        hit = [r[0]["prefix_aware"]["hitRate"] / r[1] for r in rs]
        ml = max(r[0]["prefix_aware"]["maxLoadRatio"] for r in rs)
        print(f"| {label} | {v} | {mean(p99):,.0f} ms | {100*(mean(p99)/base_p99-1):+.1f}% | "
              f"{100*(mean(p99)/mean(peer_p99)-1):+.1f}% ({peer} {mean(peer_p99):,.0f}) | "
              f"{100*min(per):+.1f}% .. {100*max(per):+.1f}% | {sum(1 for x in per if x > 0)} of {len(per)} | "
              f"{100*mean(hit):.1f}% [{100*min(hit):.1f}–{100*max(hit):.1f}] | {ml:.2f} |")
