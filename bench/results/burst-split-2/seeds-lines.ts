// The runs of a seeds.txt written by burst-split-2/seeds.sh: per "seed | workload preset", each version's (and
// llm-d's) summary line of bench/results/burst-tail/audit.ts. Read by burst-split-2/seeds-table.ts and
// fresh-seeds/table.ts; it reads only the audit's own summary lines.
import { readFileSync } from "node:fs";

export interface Line {
  p99: number;
  hit: string;
  perBurst: string;
  cold: string;
}

/** "seed | workload 8B|MoE" → version (or "llmd") → its summary line. */
export function readSeedLines(file: string): Map<string, Map<string, Line>> {
  const rows = new Map<string, Map<string, Line>>();
  let key = "";
  let version = "";
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const cmd = /^\$ \((\w+)\) npx tsx \S+ (\S+) 8 (\d+) none (\d+) (\S+) llmd$/.exec(line);
    if (cmd) {
      version = cmd[1]!;
      key = `${cmd[4]} | ${cmd[2]} ${cmd[5]!.startsWith("qwen") ? "MoE" : "8B"}`;
      if (!rows.has(key)) rows.set(key, new Map());
      continue;
    }
    const m =
      /^(prefix_aware|llmd): TTFT p50 \d+ ms p99 (\d+) ms hit ([\d.]+%); backends per burst mean ([\d.]+).*cold prefills (\d+)/.exec(
        line,
      );
    if (!m) continue;
    const who = m[1] === "llmd" ? "llmd" : version;
    rows.get(key)!.set(who, { p99: Number(m[2]), hit: m[3]!, perBurst: m[4]!, cold: m[5]! });
  }
  return rows;
}

/** Runs by their group ("workload preset"), by preset ("all 8B", "all MoE") and all together ("all"). */
export function groupRuns<R extends { group: string }>(runs: readonly R[]): Map<string, R[]> {
  const groups = new Map<string, R[]>();
  const add = (g: string, r: R) => groups.set(g, [...(groups.get(g) ?? []), r]);
  for (const r of runs) {
    add(r.group, r);
    add(`all ${r.group.split(" ")[1]}`, r);
    add("all", r);
  }
  return groups;
}
