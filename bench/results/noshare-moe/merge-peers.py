# Gate 3's table: after-rescore's scoring reports with prefix_aware's figures replaced by this branch's (g3-scoring/, all
# 48 runs), written to noshare-moe/scoring-merged/ (not committed) for sim-tables.ts targets (adapted from moe16-bound's):
#   python3 bench/results/noshare-moe/merge-peers.py && npx tsx bench/sim-tables.ts targets noshare-moe/scoring-merged
import glob, json, os, shutil
here = os.path.dirname(os.path.abspath(__file__))
rec = os.path.join(os.path.dirname(here), "after-rescore")
out = os.path.join(here, "scoring-merged")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
n = 0
for f in glob.glob(os.path.join(rec, "*-scoring-*.json")):
    r = json.load(open(f))
    mine = os.path.join(here, "g3-scoring", os.path.basename(f))
    if os.path.exists(mine):
        b = json.load(open(mine))
        ours = next(p for p in b["policies"] if p["policy"] == "prefix_aware")
        r["policies"] = [ours if p["policy"] == "prefix_aware" else p for p in r["policies"]]
        assert b["oracle"]["hitRate"] == r["oracle"]["hitRate"], f
        n += 1
    json.dump(r, open(os.path.join(out, os.path.basename(f)), "w"))
print(f"{n} reports with this branch's prefix_aware")
