# gauge-moe8.jsonl → per tie and delay: mean p99 over seeds 3–5 against the record's Dynamo (mean of its p99s),
# and hit against the record's oracle (Σ hit ÷ Σ oracle over the seeds), as sim-tables.ts reads a group.
#   python3 bench/results/ftd-runs/gauge-summary.py bench/results/ftd-runs/gauge-moe8.jsonl
import json, sys, collections
rec = "bench/results/after-first-token/mooncake-8b-x2-scoring-s{}-qwen3-30b-a3b-h100-vllm.json"
dyn, orc = {}, {}
for s in (3, 4, 5):
    r = json.load(open(rec.format(s)))
    dyn[s] = next(p for p in r["policies"] if p["policy"] == "dynamo")["ttftP99Ms"]
    orc[s] = r["oracle"]["hitRate"] * 100
g = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    x = json.loads(line)
    g[(x["tie"], x["delay"])][int(x["run"].split()[4][1:])] = x
print("| tie | delay | p99 mean (s) | vs Dynamo | hit of oracle |")
print("| --- | --- | --- | --- | --- |")
for (tie, d), runs in sorted(g.items()):
    if len(runs) < 3: continue
    p = sum(runs[s]["p99"] for s in runs) / 3
    dy = sum(dyn.values()) / 3
    hit = sum(runs[s]["hit"] for s in runs) / sum(orc.values()) * 100
    print(f"| {tie} | {d} | {p/1000:.3f} | {100*(p/dy-1):+.1f}% | {hit:.1f}% |")
