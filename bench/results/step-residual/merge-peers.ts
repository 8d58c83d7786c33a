// One folder `bench/sim-tables.ts targets` can read for a prefix_aware-only run: each of BASE's reports
// (the peers, unchanged) with prefix_aware's entry replaced by NEW's report of the same name.
//   npx tsx bench/results/step-residual/merge-peers.ts after-issue-12 step-residual-scoring step-residual/scoring-with-peers
// A scrape run (`SCRAPE_MS=… POLICIES=prefix_aware npm run bench:sim:all -- scoring NEW`: `-scrapeN` in its
// name) goes into the BASE report it stands beside, under that report's name.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { peerFileOf } from "../../compare-folders";

interface Report {
  policies: { policy: string }[];
}

const [base, next, out] = process.argv.slice(2);
if (!base || !next || !out) throw new Error("usage: merge-peers.ts BASE NEW OUT (folders under bench/results/)");
const root = "bench/results";
mkdirSync(join(root, out), { recursive: true });
let merged = 0;
for (const name of readdirSync(join(root, next)).filter((f) => f.endsWith(".json"))) {
  const baseName = peerFileOf(name);
  const basePath = join(root, base, baseName);
  if (!existsSync(basePath)) throw new Error(`no ${basePath} for ${name}`);
  const ours = (JSON.parse(readFileSync(join(root, next, name), "utf8")) as Report).policies.filter(
    (p) => p.policy === "prefix_aware",
  );
  if (ours.length !== 1) throw new Error(`${name}: expected one prefix_aware entry, got ${ours.length}`);
  const report = JSON.parse(readFileSync(basePath, "utf8")) as Report;
  report.policies = report.policies.map((p) => (p.policy === "prefix_aware" ? ours[0]! : p));
  writeFileSync(join(root, out, baseName), `${JSON.stringify(report, null, 1)}\n`);
  merged++;
}
console.log(`${merged} reports merged into ${join(root, out)}`);
