# p99 TTFT of prefix_aware, Dynamo and llm-d per arrival seed, and the means, from arrivals.sh's reports.
#   python3 bench/results/moe16-tail/arrivals-table.py FOLDER [FOLDER_WITH_PEERS]
# With a second folder, prefix_aware comes from the first, the peers from the second (same seeds).
import json, sys, glob, re, os
pa_dir = sys.argv[1]
peer_dir = sys.argv[2] if len(sys.argv) > 2 else pa_dir
for fleet in ["16b-x4", "8b-x2"]:
    rows = []
    for f in sorted(glob.glob(f"{pa_dir}/mooncake-{fleet}-scoring-s*-qwen3-30b-a3b-h100-vllm.json"),
                    key=lambda p: int(re.search(r"-s(\d+)-", p).group(1))):
        seed = int(re.search(r"-s(\d+)-", f).group(1))
        pa = {p["policy"]: p for p in json.load(open(f))["policies"]}["prefix_aware"]
        peers = {p["policy"]: p for p in json.load(open(os.path.join(peer_dir, os.path.basename(f))))["policies"]}
        oracle = json.load(open(f))["oracle"]
        rows.append((seed, pa["ttftP99Ms"], peers["dynamo"]["ttftP99Ms"], peers["llmd"]["ttftP99Ms"],
                     pa["hitRate"], peers["dynamo"]["hitRate"], pa["maxLoadRatio"]))
    if not rows: continue
    print(f"\n### Mooncake MoE {fleet}, scoring half, arrival seeds {rows[0][0]}-{rows[-1][0]}\n")
    print("| seed | prefix_aware p99 | Dynamo p99 | llm-d p99 | vs Dynamo | hit (pa / Dynamo) | maxLoadRatio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for s, a, d, l, h, hd, m in rows:
        print(f"| {s} | {a:.0f} | {d:.0f} | {l:.0f} | {100*(a/d-1):+.1f}% | {100*h:.1f}% / {100*hd:.1f}% | {m:.2f} |")
    n = len(rows)
    ma = sum(r[1] for r in rows) / n; md = sum(r[2] for r in rows) / n; ml = sum(r[3] for r in rows) / n
    wins = sum(1 for r in rows if r[1] < r[2])
    print(f"| mean | {ma:.0f} | {md:.0f} | {ml:.0f} | {100*(ma/md-1):+.1f}% | | |")
    print(f"\nprefix_aware below Dynamo on {wins} of {n} seeds; per-seed gap range "
          f"{min(100*(r[1]/r[2]-1) for r in rows):+.1f}% .. {max(100*(r[1]/r[2]-1) for r in rows):+.1f}%")
