"""Compare two report folders byte for byte once what measures this machine is taken out: the JSON's command,
machine, prepareMs, simulateMs and wallMs, and the markdown's Machine line, command line and wall-ms column.
    python3 bench/results/model-len/wall-free-diff.py A B"""
import json, os, re, sys
a, b = sys.argv[1:3]
MACHINE = {"command", "machine", "prepareMs", "simulateMs", "wallMs"}
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in MACHINE}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
def md(text):
    out = []
    for line in text.splitlines():
        if line.startswith("Machine:") or line.startswith("Command:") or "npx tsx" in line or "npm run" in line: continue
        if line.startswith("|"):  # the wall-ms column is the last cell of the per-policy cost table
            cells = line.split("|")
            if len(cells) > 3 and re.fullmatch(r"\s*[\d.]+\s*", cells[-2]): cells[-2] = " W "
            line = "|".join(cells)
        out.append(line)
    return "\n".join(out)
bad = 0
names = sorted(set(os.listdir(a)) & set(os.listdir(b)))
for n in names:
    ta, tb = open(os.path.join(a, n)).read(), open(os.path.join(b, n)).read()
    same = (json.dumps(strip(json.loads(ta))) == json.dumps(strip(json.loads(tb)))) if n.endswith(".json") else md(ta) == md(tb)
    bad += not same
    print(("same " if same else "DIFF ") + n)
print(f"{len(names)} files, {bad} differ")
sys.exit(1 if bad else 0)
