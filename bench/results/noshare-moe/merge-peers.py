# The race with this branch's prefix_aware: after-rescore's reports (every peer, the oracle) with prefix_aware's
# figures replaced by this branch's (g3-scoring/: all 48 scoring runs; g1-tuning/: all 24 tuning runs). Peers'
# reports do not depend on our policy, so they are after-rescore's as run. Written to noshare-moe/scoring-merged/
# (gate 3's table, not committed) or to the folder named as the first argument, under bench/results/:
#   python3 bench/results/noshare-moe/merge-peers.py && npx tsx bench/sim-tables.ts targets noshare-moe/scoring-merged
#   python3 bench/results/noshare-moe/merge-peers.py after-first-token   (the record since first-token; both sets)
import glob, json, os, shutil, sys
here = os.path.dirname(os.path.abspath(__file__))
results = os.path.dirname(here)
rec = os.path.join(results, "after-rescore")
record = len(sys.argv) > 1
out = os.path.join(results, sys.argv[1]) if record else os.path.join(here, "scoring-merged")
sets = {"scoring": "g3-scoring", "tuning": "g1-tuning"} if record else {"scoring": "g3-scoring"}
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
n = 0
for s, mine_dir in sets.items():
    for f in sorted(glob.glob(os.path.join(rec, f"*-{s}-*.json"))):
        r = json.load(open(f))
        mine = os.path.join(here, mine_dir, os.path.basename(f))
        b = json.load(open(mine))
        ours = next(p for p in b["policies"] if p["policy"] == "prefix_aware")
        r["policies"] = [ours if p["policy"] == "prefix_aware" else p for p in r["policies"]]
        assert b["oracle"]["hitRate"] == r["oracle"]["hitRate"], f
        n += 1
        json.dump(r, open(os.path.join(out, os.path.basename(f)), "w"), indent=1)
print(f"{n} reports with this branch's prefix_aware in {os.path.relpath(out, results)}")
