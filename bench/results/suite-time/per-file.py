"""Per-file times from a vitest JSON report (--reporter=json --outputFile.json=F): the files by time, each project's
sum of file times, and the time between files (a worker's start and its imports, not in any file's time).
Usage: python3 per-file.py REPORT.json [N]"""
import json
import sys

d = json.load(open(sys.argv[1]))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
files = sorted(d["testResults"], key=lambda f: f["startTime"])
rows, between, prev = [], {"node": 0.0, "workers": 0.0}, d["startTime"]
for f in files:
    project = "workers" if "/test/worker/" in f["name"] else "node"
    between[project] += (f["startTime"] - prev) / 1000
    prev = f["endTime"]
    failed = sum(1 for a in f["assertionResults"] if a["status"] == "failed")
    rows.append(((f["endTime"] - f["startTime"]) / 1000, project, f["name"], len(f["assertionResults"]), failed))
print("| # | file | project | tests | failed | s |\n|---|------|---------|-------|--------|---|")
for i, (s, project, name, tests, failed) in enumerate(sorted(rows, reverse=True)[:n], 1):
    short = name[name.find("/", name.find("/wt/") + 4) + 1 :] if "/wt/" in name else name
    print(f"| {i} | `{short}` | {project} | {tests} | {failed} | {s:.1f} |")
for project in ("node", "workers"):
    sel = [r for r in rows if r[1] == project]
    print(f"\n{project}: {len(sel)} files, file times {sum(r[0] for r in sel):.0f} s, between files {between[project]:.0f} s")
wall = (max(f["endTime"] for f in files) - d["startTime"]) / 1000
print(f"tests {d['numTotalTests']}, passed {d['numPassedTests']}, failed {d['numFailedTests']}; first start to last end {wall:.0f} s")
