# The race at one notice delay: after-first-token's scoring reports (every peer, the oracle) with prefix_aware's
# figures replaced by those of bench/results/ftd-<label>/ (that run's own reports, prefix_aware only). Peers'
# reports do not depend on our policy (and their notices are never delayed). Written to ftd-<label>/merged/:
#   python3 bench/results/ftd-runs/merge-peers.py 20 && npx tsx bench/sim-tables.ts targets ftd-20/merged
# A run not yet in ftd-<label>/ is skipped and named (the table then lacks its group).
import glob, json, os, shutil, sys
results = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rec = os.path.join(results, "after-first-token")
mine_dir = os.path.join(results, f"ftd-{sys.argv[1]}")
out = os.path.join(mine_dir, "merged")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
n, missing = 0, []
for f in sorted(glob.glob(os.path.join(rec, "*-scoring-*.json"))):
    mine = os.path.join(mine_dir, os.path.basename(f))
    if not os.path.exists(mine):
        missing.append(os.path.basename(f))
        continue
    r = json.load(open(f))
    b = json.load(open(mine))
    ours = next(p for p in b["policies"] if p["policy"] == "prefix_aware")
    r["policies"] = [ours if p["policy"] == "prefix_aware" else p for p in r["policies"]]
    assert b["oracle"]["hitRate"] == r["oracle"]["hitRate"], f
    r["fleet"] = b["fleet"]
    n += 1
    json.dump(r, open(os.path.join(out, os.path.basename(f)), "w"), indent=1)
print(f"{n} reports in {os.path.relpath(out, results)}; missing {len(missing)}: {' '.join(missing)}")
