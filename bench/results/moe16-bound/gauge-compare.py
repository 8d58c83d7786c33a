# (from moe16-hit/gauge-compare.py) Sets this branch's tie gauge (gauge-branch.jsonl) beside main's re-run now
# (gauge-main.jsonl), count-gauge's main (gauge-1a7c4899.jsonl) and moe16-hit's unbounded exemption, and the record's
# peers and oracle (after-rescore): per group and tolerance, the mean p99 of seeds 3-5 against the best peer's and
# the mean hit of the oracle, as sim-tables.ts targets computes them.
#   python3 bench/results/moe16-bound/gauge-compare.py
import glob, json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
res = os.path.dirname(here)
def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]
branch = load(os.path.join(here, "gauge-branch.jsonl"))
main = load(os.path.join(here, "gauge-main.jsonl"))
old = load(os.path.join(res, "count-gauge", "gauge-1a7c4899.jsonl"))
hit = load(os.path.join(res, "moe16-hit", "gauge-branch.jsonl"))
def rec(w, b, load_, seed, preset):
    pat = f"{w}-{b}b-{'x' if w == 'mooncake' else 'r'}{load_:g}-scoring-s{seed}"
    for f in glob.glob(os.path.join(res, "after-rescore", pat + "*.json")):
        r = json.load(open(f))
        if r["fleet"].get("preset", preset) == preset or preset in f or (preset.startswith("llama") and "qwen" not in f):
            return r
    raise SystemExit(f"no after-rescore report {pat} {preset}")
groups = sorted({(r["workload"], r["backends"], r["load"], r["preset"]) for r in branch})
print("| group | tie | p99 vs best peer: main | 1a7c4899 | moe16-hit | branch | hit of oracle: main | 1a7c4899 | moe16-hit | branch |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (w, b, l, p) in groups:
    for tie in sorted({r["tie"] for r in branch if (r["workload"], r["backends"], r["load"], r["preset"]) == (w, b, l, p)}):
        rows = {}
        for name, src in (("main", main), ("old", old), ("hit", hit), ("branch", branch)):
            rs = [r for r in src if (r["workload"], r["backends"], r["load"], r["preset"], r["tie"]) == (w, b, l, p, tie)]
            if len(rs) < 3: rows[name] = None; continue
            p99 = sum(r["ttftP99Ms"] for r in rs) / len(rs)
            hits = []; peers = {}
            for r in rs:
                rep = rec(w, b, l, r["seed"], p)
                hits.append(r["hitRate"] / rep["oracle"]["hitRate"])
                for q in rep["policies"]:
                    if q["policy"] in ("sglang", "llmd", "dynamo"):
                        peers.setdefault(q["policy"], []).append(q["ttftP99Ms"])
            best = min(sum(v) / len(v) for v in peers.values())
            rows[name] = (p99 / best - 1, sum(hits) / len(hits))
        if rows["branch"] is None: continue
        f = lambda x: "–" if x is None else f"{100*x[0]:+.1f}%"
        g = lambda x: "–" if x is None else f"{100*x[1]:.1f}%"
        ks = ("main", "old", "hit", "branch")
        print(f"| {w} {b} ×{l:g} {p.split('-')[0]} | {tie} | " + " | ".join(f(rows[k]) for k in ks) + " | " + " | ".join(g(rows[k]) for k in ks) + " |")
