# Gate 2's table: the branch's prefix_aware (mt-moe/gate2/) against main's (mt-moe/gate2-main/, with peers).
#   python3 bench/results/mt-moe/gate2-table.py
import glob, json, os
base = "bench/results/mt-moe"
print("| run | main p99 | branch p99 | Δ | best peer p99 (main's run) | branch vs peer | hit main → branch | maxLoadRatio main → branch |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
groups = {}
for f in sorted(glob.glob(f"{base}/gate2/*.json")):
    b = os.path.basename(f)
    new = {p["policy"]: p for p in json.load(open(f))["policies"]}["prefix_aware"]
    old_all = {p["policy"]: p for p in json.load(open(f"{base}/gate2-main/{b}"))["policies"]}
    old = old_all["prefix_aware"]
    peer = min((p for k, p in old_all.items() if k != "prefix_aware"), key=lambda p: p["ttftP99Ms"])
    d = new["ttftP99Ms"] / old["ttftP99Ms"] - 1
    g = b.split("-s")[0] + "-" + b.split("-", 5)[-1].split("-", 1)[-1].replace(".json", "")
    groups.setdefault(b.replace(".json", "").rsplit("-s", 1)[0] if False else b.split("-s")[0] + (" MoE" if "qwen" in b else " 8B"), []).append((old["ttftP99Ms"], new["ttftP99Ms"], peer["ttftP99Ms"]))
    print(f"| {b.replace('.json','')} | {old['ttftP99Ms']:.1f} ms | {new['ttftP99Ms']:.1f} ms | {100*d:+.1f}% | {peer['policy']} {peer['ttftP99Ms']:.1f} ms | {100*(new['ttftP99Ms']/peer['ttftP99Ms']-1):+.1f}% | {100*old['hitRate']:.1f}% → {100*new['hitRate']:.1f}% | {old['maxLoadRatio']:.2f} → {new['maxLoadRatio']:.2f} |")
print()
print("| group (seeds 9–11) | main mean p99 | branch mean p99 | Δ | mean of each run's best peer p99 (main's runs) |")
print("| --- | --- | --- | --- | --- |")
for g, xs in groups.items():
    o = sum(x[0] for x in xs) / len(xs); n = sum(x[1] for x in xs) / len(xs); p = sum(x[2] for x in xs) / len(xs)
    print(f"| {g} | {o:.1f} ms | {n:.1f} ms | {100*(n/o-1):+.1f}% | {p:.1f} ms |")
