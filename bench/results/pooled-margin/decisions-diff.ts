// Compares two files written by decisions.ts (same run, two checkouts): requests whose chosen backend
// differs, and the first request where they part (after it, every later decision sees a different fleet).
//   npx tsx bench/results/pooled-margin/decisions-diff.ts A.json B.json
import { readFileSync } from "node:fs";

const [a, b] = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f!, "utf8")) as { withMargin: { chosen: string[] } });
if (a === undefined || b === undefined) throw new Error("usage: decisions-diff.ts A.json B.json");
const ca = a.withMargin.chosen;
const cb = b.withMargin.chosen;
if (ca.length !== cb.length) throw new Error(`different runs: ${ca.length} against ${cb.length} requests`);
const differ = ca.filter((x, k) => x !== cb[k]).length;
console.log(`requests whose backend differs: ${differ} of ${ca.length}; first at request ${ca.findIndex((x, k) => x !== cb[k])}`);
