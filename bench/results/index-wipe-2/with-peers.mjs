// Puts prefix_aware's figures of OURS into copies of BASE's reports (the peers' figures kept), so sim-tables targets can read them:
//   mkdir -p bench/results/index-wipe-2/scoring-with-peers
//   node bench/results/index-wipe-2/with-peers.mjs bench/results/after-rescore bench/results/index-wipe-2/scoring bench/results/index-wipe-2/scoring-with-peers
//   npx tsx bench/sim-tables.ts targets index-wipe-2/scoring-with-peers   (targets-scoring.md; the folder is not kept: its peers are after-rescore's)
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
const [base, ours, out] = process.argv.slice(2);
for (const f of readdirSync(ours).filter((f) => f.endsWith(".json"))) {
  const b = JSON.parse(readFileSync(`${base}/${f}`, "utf8"));
  const o = JSON.parse(readFileSync(`${ours}/${f}`, "utf8"));
  const mine = o.policies.find((p) => p.policy === "prefix_aware");
  b.policies = b.policies.map((p) => (p.policy === "prefix_aware" ? mine : p));
  writeFileSync(`${out}/${f}`, JSON.stringify(b, null, 2));
}
