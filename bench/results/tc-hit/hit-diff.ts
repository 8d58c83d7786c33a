// Where one tree's hit differs from another's, request by request: two DUMP files of hit-gauge.ts (same run),
// the cached tokens each request was served, split by whether the Worker's key window cut the request (the
// only requests a recount of text past the window can touch) or not. Audit only.
//   MOONCAKE_TRACE=… npx tsx bench/results/tc-hit/hit-diff.ts BASE.json NEW.json mooncake 16 4 tuning 1 qwen3-30b-a3b-h100-vllm
import { readFileSync } from "node:fs";
import { cutByWindow } from "../../../src/routing/window-extents";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const [baseFile, newFile] = process.argv.splice(2, 2);
if (baseFile === undefined || newFile === undefined) throw new Error("usage: hit-diff.ts BASE.json NEW.json RUN…");
const base = JSON.parse(readFileSync(baseFile, "utf8")) as number[];
const next = JSON.parse(readFileSync(newFile, "utf8")) as number[];
const { w } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const n = w.requests.length;
if (base.length !== n || next.length !== n) throw new Error(`dumps of ${base.length} / ${next.length} requests, run has ${n}`);
let total = 0;
const rows = { cut: { n: 0, gained: 0, lost: 0, delta: 0 }, within: { n: 0, gained: 0, lost: 0, delta: 0 } };
for (let i = 0; i < n; i++) {
  const req = w.requests[i]!;
  total += req.promptTokens;
  const d = next[i]! - base[i]!;
  const row = cutByWindow(w.gatewayPromptTokens[i]!, w.gatewayBlocks[i]!.length, w.blockTokens) ? rows.cut : rows.within;
  row.n++;
  row.delta += d;
  if (d > 0) row.gained++;
  if (d < 0) row.lost++;
}
const pts = (v: number) => `${((v / total) * 100).toFixed(3)} pt of hit`;
for (const [name, r] of Object.entries(rows))
  console.log(`${name === "cut" ? "cut by the window" : "within the window"}: ${r.n} requests, ${r.gained} cached more, ${r.lost} less; Δ cached ${(r.delta / 1000).toFixed(0)}k tokens (${pts(r.delta)})`);
