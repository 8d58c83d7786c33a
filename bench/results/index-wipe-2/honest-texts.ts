/**
 * What the runs rule (src/prefix/run-excess.ts) claims of honest texts, against their true o200k count: the
 * Worker's estimate ceil(chars / 4) over the truth, and the same less the unconfirmed part (what the index
 * evicts for at route on this branch, the rest waiting for the engine's count). And the cost of the check's one
 * pass over the largest body the Worker reads (16 MiB of characters). Output: honest-texts.txt.
 * Run: npx tsx bench/results/index-wipe-2/honest-texts.ts
 */
import { readFileSync } from "node:fs";
import { runExcessTokens } from "../../../src/prefix/run-excess";
import { encodeO200k } from "../../../src/prefix/tokenizer";

const files = [
  "README.md",
  "src/routing/router.ts",
  "bench/results/red-team.md",
  "bench/results/token-estimate.md",
  "node_modules/typescript/lib/lib.dom.d.ts",
  "node_modules/hono/README.md",
];
for (const f of files) {
  const t = readFileSync(f, "utf8");
  const truth = encodeO200k(t, 10_000_000).tokens.length;
  const est = Math.ceil(t.length / 4);
  const un = runExcessTokens(t);
  console.log(
    `${f}: ${t.length} chars, o200k ${truth}, estimate ${est} (${(est / truth).toFixed(2)}× the truth), ` +
      `unconfirmed ${un}, estimate less it ${est - un} (${((est - un) / truth).toFixed(2)}×)`,
  );
}
const big = `${"ordinary text ".repeat(600_000)}${" ".repeat(8_000_000)}`;
const t0 = performance.now();
const n = runExcessTokens(big);
const ms = performance.now() - t0;
// A wall time on a shared machine: its order, not its figure.
console.log(`the check over ${big.length} characters: ${n} unconfirmed, ${Math.round(ms)} ms`);
