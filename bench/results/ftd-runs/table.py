# Issue #12's table at each notice delay, side by side: runs `npx tsx bench/sim-tables.ts targets F` for the
# record (after-first-token, d = 0) and each ftd-<label>/merged/ (merge-peers.py first), and lays the per-group
# p99 against the best peer and the hit of the oracle in one row per group, the three counts below.
#   python3 bench/results/ftd-runs/table.py 5 20 50 50-nofirst
import re, subprocess, sys
cols = [("d = 0 (record)", "after-first-token")] + [(f"ftd-{l}", f"ftd-{l}/merged") for l in sys.argv[1:]]
rows, counts, hitmet = {}, {}, {}
for name, folder in cols:
    out = subprocess.run(["npx", "tsx", "bench/sim-tables.ts", "targets", folder], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\| (.+?) \| ([+−-][\d.]+%) vs (\w+)[^|]*\| ([^|]*)\|", line)
        if m and not line.startswith("| workload"):
            g = m.group(1).replace(" (8 backends)", " 8").replace(" (16 backends)", " 16")
            hit = re.match(r"\s*([\d.]+%|\(no sharing\))", m.group(4)).group(1)
            rows.setdefault(g, {})[name] = f"{m.group(2)} {m.group(3)}; {hit}"
            if "met" in m.group(4) or "missed" in m.group(4):
                hitmet.setdefault(name, []).append("missed" not in m.group(4))
    ahead = re.search(r"better than the best peer on (\d+) of (\d+).*more than 3% worse on (\d+)", out)
    counts[name] = f"{ahead.group(1)} ahead / {ahead.group(3)} > 3% worse" if ahead else "?"
    met = hitmet.get(name, [])
    counts[name] += f" / hit ≥ 90% {sum(met)} of {len(met)}"
names = [c[0] for c in cols]
print("| group (p99 vs best peer; hit of oracle) | " + " | ".join(names) + " |")
print("| --- |" + " --- |" * len(names))
for g, v in rows.items():
    print(f"| {g} | " + " | ".join(v.get(n, "–") for n in names) + " |")
print("| **counts** (ahead / > 3% worse / hit ≥ 90%) | " + " | ".join(counts[n] for n in names) + " |")
