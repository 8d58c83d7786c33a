# Extra gate-2 evidence on Mooncake MoE (scoring half, arrival seeds 17-24, 16 x4 and 8 x2): main's prefix_aware and
# fallback-by-cost's (moe16-tail/arrivals2-main, arrivals2-branch, from moe16-tail's gate 2; routing src unchanged since),
# memory-held's and the union's (rescore-mc/a17-memory, a17-union); Dynamo from arrivals2-branch.
#   python3 bench/results/rescore-mc/a17-table.py
import json, os
R = "bench/results"
folders = {"main": f"{R}/moe16-tail/arrivals2-main", "fallback": f"{R}/moe16-tail/arrivals2-branch",
           "memory": f"{R}/rescore-mc/a17-memory", "union": f"{R}/rescore-mc/a17-union"}
mean = lambda xs: sum(xs) / len(xs)
print("| group (seeds 17–24) | policy | mean p99 | Δ vs main | vs Dynamo (mean) | hit of oracle (mean) | maxLoadRatio (max) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for fleet in ["8b-x2", "16b-x4"]:
    names = [f"mooncake-{fleet}-scoring-s{s}-qwen3-30b-a3b-h100-vllm.json" for s in range(17, 25)]
    dyn = mean([{p["policy"]: p for p in json.load(open(f"{folders['fallback']}/{n}"))["policies"]}["dynamo"]["ttftP99Ms"] for n in names])
    b = None
    for v, d in folders.items():
        rs = [json.load(open(f"{d}/{n}")) for n in names]
        pa = [{p["policy"]: p for p in r["policies"]}["prefix_aware"] for r in rs]
        p99 = mean([p["ttftP99Ms"] for p in pa]); b = b or p99
        hit = mean([p["hitRate"] / r["oracle"]["hitRate"] for p, r in zip(pa, rs)])
        print(f"| MoE {fleet} | {v} | {p99:,.0f} ms | {100*(p99/b-1):+.1f}% | {100*(p99/dyn-1):+.1f}% ({dyn:,.0f}) | {100*hit:.1f}% | {max(p['maxLoadRatio'] for p in pa):.2f} |")
