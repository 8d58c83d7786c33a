# gauge-hold.jsonl → per group, tie and delay: mean p99 over scoring seeds 3–5 against the record's Dynamo (mean of
# its p99s), as sim-tables.ts reads a group.
#   python3 bench/results/ftd-runs/gauge-hold-summary.py bench/results/ftd-runs/gauge-hold.jsonl
import json, sys, collections
recs = {"no-shared-prefix": "no-shared-prefix-8b-r25-scoring-s{}-qwen3-30b-a3b-h100-vllm.json",
        "zipf": "zipf-8b-r65-scoring-s{}-qwen3-30b-a3b-h100-vllm.json"}
dyn = {}
for k, f in recs.items():
    ps = [next(p for p in json.load(open("bench/results/after-first-token/" + f.format(s)))["policies"] if p["policy"] == "dynamo")["ttftP99Ms"] for s in (3, 4, 5)]
    dyn[k] = sum(ps) / 3
g = collections.defaultdict(list)
for line in open(sys.argv[1]):
    x = json.loads(line)
    g[(x["run"].split()[0], x["tie"], x["delay"])].append(x["p99"])
print("| group | tie | delay | p99 mean (ms) | vs Dynamo |")
print("| --- | --- | --- | --- | --- |")
for (grp, tie, d), v in sorted(g.items()):
    p = sum(v) / len(v)
    print(f"| {grp} MoE | {tie} | {d} | {p:.1f} | {100*(p/dyn[grp]-1):+.1f}% |")
