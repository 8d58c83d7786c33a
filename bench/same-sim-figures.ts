/**
 * Do two folders of simulator reports hold the same figures? For a change meant to leave every routing
 * decision alone (a speed-up), the reports it re-runs must match the old ones in everything but the
 * time the machine took. Compares each JSON report present in both folders, the given policies only
 * (all when none are given), field by field; exits 1 on the first difference it prints.
 *
 *   npx tsx bench/same-sim-figures.ts bench/results/FOLDER_A bench/results/FOLDER_B [policy ...]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Fields that measure this machine, not the simulation: they differ on every run. */
const MACHINE_FIELDS = new Set(["command", "machine", "prepareMs", "simulateMs", "wallMs"]);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function differences(a: Json, b: Json, path: string, out: string[]): void {
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (MACHINE_FIELDS.has(k)) continue;
      differences(
        (a as Record<string, Json>)[k] ?? null,
        (b as Record<string, Json>)[k] ?? null,
        `${path}.${k}`,
        out,
      );
    }
    return;
  }
  if (!Object.is(a, b)) out.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

const [dirA, dirB, ...policies] = process.argv.slice(2);
if (dirA === undefined || dirB === undefined) {
  console.error("usage: npx tsx bench/same-sim-figures.ts DIR_A DIR_B [policy ...]");
  process.exit(2);
}
const inB = new Set(readdirSync(dirB).filter((f) => f.endsWith(".json")));
const shared = readdirSync(dirA).filter((f) => f.endsWith(".json") && inB.has(f));
let compared = 0;
let differing = 0;
for (const file of shared) {
  const a = JSON.parse(readFileSync(join(dirA, file), "utf8")) as Record<string, Json>;
  const b = JSON.parse(readFileSync(join(dirB, file), "utf8")) as Record<string, Json>;
  const pick = (r: Record<string, Json>) =>
    (r.policies as { policy: string }[]).filter((p) => policies.length === 0 || policies.includes(p.policy));
  const pa = pick(a);
  const pb = pick(b);
  const out: string[] = [];
  const { policies: _a, ...restA } = a;
  const { policies: _b, ...restB } = b;
  differences(restA, restB, "", out);
  differences(pa as unknown as Json, pb as unknown as Json, ".policies", out);
  compared += pa.length;
  if (out.length > 0) {
    differing++;
    console.log(`DIFFERENT ${file}\n  ${out.slice(0, 10).join("\n  ")}`);
  } else console.log(`same      ${file} (${pa.map((p) => p.policy).join(", ")})`);
}
console.log(
  `${shared.length} reports in both folders, ${compared} policy runs compared, ${differing} differ`,
);
process.exit(differing > 0 || shared.length === 0 ? 1 : 0);
