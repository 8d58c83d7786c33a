# Gauge of gate 3 for the near-line groups: per group and tolerance, the mean p99 over scoring seeds 3-5 against the
# record's best peer (PEERS of bench/sim-tables.ts, best by mean p99), and the mean hit of the oracle; main's from
# count-gauge/gauge-1a7c4899.jsonl, the branch's from gauge3-{a,b}.jsonl (0.8, 1.2) and g3-scoring/ (1 ms).
#   python3 bench/results/noshare-moe/gauge3-summary.py > bench/results/noshare-moe/gauge3-summary.md
import glob, json, os
here = os.path.dirname(os.path.abspath(__file__))
res = os.path.dirname(here)
PEERS = ["sglang", "llmd", "dynamo", "sagemaker"]
MOE = "qwen3-30b-a3b-h100-vllm"
def name(w, b, load, preset):
    x = f"x{load:g}" if w == "mooncake" else f"r{load:g}"
    suf = f"-{MOE}" if preset == MOE else ""
    return lambda s: f"{w}-{b}b-{x}-scoring-s{s}{suf}.json"
def load_json(p): return json.load(open(p))
def rows(path):
    out = []
    if os.path.exists(path):
        for l in open(path):
            l = l.strip()
            if l.startswith("{"): out.append(json.loads(l))
    return out
main = rows(os.path.join(res, "count-gauge", "gauge-1a7c4899.jsonl"))
br = rows(os.path.join(here, "gauge3-a.jsonl")) + rows(os.path.join(here, "gauge3-b.jsonl"))
groups = [("no-shared-prefix", 8, 25, MOE), ("zipf", 8, 65, MOE), ("mooncake", 8, 2, MOE), ("mooncake", 16, 4, MOE),
          ("burst-mooncake", 8, 28, "llama-3.1-8b-h100-vllm"), ("multi-turn", 8, 45, MOE)]
print("| group (scoring 3-5) | best peer | tie | main: p99 vs peer; hit of oracle | branch: p99 vs peer; hit of oracle |")
print("| --- | --- | --- | --- | --- |")
for w, b, load, preset in groups:
    f = name(w, b, load, preset)
    recs = [load_json(os.path.join(res, "after-rescore", f(s))) for s in (3, 4, 5)]
    peer = min(PEERS, key=lambda p: sum(next(q["ttftP99Ms"] for q in r["policies"] if q["policy"] == p) for r in recs))
    pm = sum(next(q["ttftP99Ms"] for q in r["policies"] if q["policy"] == peer) for r in recs) / 3
    orc = {s: recs[k]["oracle"]["hitRate"] for k, s in enumerate((3, 4, 5))}
    for tie in (0.8, 1.0, 1.2):
        def fig(rs):
            sel = {r["seed"]: r for r in rs if r["workload"] == w and r["backends"] == b and r["load"] == load and r["preset"] == preset and abs(r["tie"] - tie) < 1e-9}
            if len(sel) < 3: return f"({len(sel)} of 3 seeds)"
            p99 = sum(sel[s]["ttftP99Ms"] for s in (3, 4, 5)) / 3
            hit = sum(sel[s]["hitRate"] / orc[s] for s in (3, 4, 5)) / 3 if orc[3] > 0 else None
            return f"{100 * (p99 / pm - 1):+.1f}%" + (f"; {100 * hit:.1f}%" if hit is not None else "")
        if tie == 1.0:
            g3 = []
            for s in (3, 4, 5):
                p = os.path.join(here, "g3-scoring", f(s))
                if os.path.exists(p):
                    q = next(q for q in load_json(p)["policies"] if q["policy"] == "prefix_aware")
                    g3.append({"workload": w, "backends": b, "load": load, "preset": preset, "tie": 1.0, "seed": s, "ttftP99Ms": q["ttftP99Ms"], "hitRate": q["hitRate"]})
            bfig = fig(g3)
        else:
            bfig = fig(br)
        print(f"| {w} {b}, {'MoE' if preset == MOE else '8B'} | {peer} | {tie:g} | {fig(main)} | {bfig} |")
