/**
 * Memory of one cell's affinity index, measured: the V8 heap and array
 * buffers a routing-core Router holds once its index is full, per kept key.
 * The RouterDO holds one such index per A/B arm and one for the shadow;
 * src/routing/defaults.ts's INDEX_BYTES_PER_KEY and CELL_INDEX_BUDGET_BYTES
 * turn this figure into the largest fleet one cell holds (cells.ts).
 *
 * For each fleet (16 backends × KV tokens each): build a Router
 * (prefix_aware, 16-token blocks, the default stride: one key per 64
 * tokens), route + complete 8k-token requests with unique prefixes until
 * every backend's index has been filled three times over (so it is at its
 * capacity and evicting), then measure heapUsed + arrayBuffers after a full
 * GC against the same before the Router existed. Under Node (the same V8
 * as workerd; workerd exposes no heap figure to a Worker).
 *
 *   npm run bench:micro:index-memory     (runs node --expose-gc)
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { reproduceLines } from "../../sim/format";
import { CELL_INDEX_BUDGET_BYTES, CELL_MAX_BACKENDS, INDEX_BYTES_PER_KEY } from "../../src/routing/defaults";
import { Router } from "../../src/routing/router";
import { seededRandom } from "../../src/routing/seeded-random";
import type { BackendSpec } from "../../src/routing/types";

const BLOCK_TOKENS = 16;
const PROMPT_BLOCKS = 512;
const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

interface Row {
  readonly backends: number;
  readonly kvTokens: number;
  readonly keys: number;
  readonly measuredBytes: number;
  readonly bytesPerKey: number;
  readonly typedArrayBytesPerKey: number;
}

function measure(backends: number, kvTokens: number): Row {
  const specs: BackendSpec[] = Array.from({ length: backends }, (_, i) => ({
    id: `gpu-${i}`,
    weight: 1,
    kvCacheTokens: kvTokens,
  }));
  const random = seededRandom(backends * 7 + kvTokens);
  const before = heap();
  const router = new Router(specs, { policy: "prefix_aware", blockTokens: BLOCK_TOKENS });
  const ctx = { now: 0, random };
  const stride = router.stats(0).indexStride;
  const capacityKeys = (backends * kvTokens) / (BLOCK_TOKENS * stride);
  const requests = Math.ceil((3 * capacityKeys) / (PROMPT_BLOCKS / stride));
  for (let r = 0; r < requests; r++) {
    const base = Math.floor(random() * 2 ** 52);
    // A new array per request: the router caches per-request work by the array's identity.
    const blocks = Array.from({ length: PROMPT_BLOCKS }, (_, b) => base + b);
    ctx.now = r;
    const { ticket } = router.route({ blocks, promptTokens: PROMPT_BLOCKS * BLOCK_TOKENS }, ctx);
    router.complete(ticket, { ok: true }, ctx);
  }
  const stats = router.stats(requests);
  const after = heap();
  const keys = stats.indexBlocks / stats.indexStride;
  const measuredBytes = after - before;
  // Keep the router alive past the measurement.
  if (stats.backends.length !== backends) throw new Error("router lost backends");
  return {
    backends,
    kvTokens,
    keys,
    measuredBytes,
    bytesPerKey: measuredBytes / keys,
    typedArrayBytesPerKey: stats.indexBytes / keys,
  };
}

/** One fleet per process: a fresh heap, so nothing of an earlier fleet's Router is in the figure. */
function measureInChild(backends: number, kvTokens: number): Row {
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--fleet", `${backends},${kvTokens}`],
    { encoding: "utf8" },
  );
  return JSON.parse(out) as Row;
}

function main(): void {
  if (gc === undefined) throw new Error("run with node --expose-gc (npm run bench:micro:index-memory)");
  const fleetArg = process.argv.indexOf("--fleet");
  if (fleetArg >= 0) {
    const [b, t] = process.argv[fleetArg + 1]!.split(",").map(Number) as [number, number];
    process.stdout.write(JSON.stringify(measure(b, t)));
    return;
  }
  const fleets: [number, number][] = [
    [16, 442_368],
    [16, 1_000_000],
    [16, 4_000_000],
  ];
  const rows = fleets.map(([b, t]) => {
    const row = measureInChild(b, t);
    console.error(
      `${b} × ${t}: ${row.keys} keys, ${(row.measuredBytes / 2 ** 20).toFixed(1)} MiB, ${row.bytesPerKey.toFixed(1)} B/key`,
    );
    return row;
  });
  // The budget binds at large indexes: judge the planning figure against the largest one measured.
  const largest = rows.reduce((x, r) => (r.keys > x.keys ? r : x));
  const budgetKeys = CELL_INDEX_BUDGET_BYTES / INDEX_BYTES_PER_KEY;
  const md = [
    "# Memory per RouterDO cell: the affinity index, measured",
    "",
    ...reproduceLines("npm run bench:micro:index-memory", "sh"),
    `${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version} (the V8 that workerd also runs).`,
    "A routing-core Router (prefix_aware, 16-token blocks, one index key per 64 tokens) over the fleet, filled",
    "three times over with unique 8k-token prompts (so every backend's index is at capacity and evicting);",
    "bytes = heapUsed + arrayBuffers after a full GC, minus the same before the Router was built.",
    "",
    "| backends | KV tokens each | keys kept | measured MiB | bytes per kept key | typed arrays' bytes per key |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.backends} | ${r.kvTokens} | ${r.keys} | ${(r.measuredBytes / 2 ** 20).toFixed(1)} | ${r.bytesPerKey.toFixed(1)} | ${r.typedArrayBytesPerKey.toFixed(1)} |`,
    ),
    "",
    `Budget: CELL_INDEX_BUDGET_BYTES = ${CELL_INDEX_BUDGET_BYTES / 2 ** 20} MiB of index per cell (all its copies: A/B arms, shadow);`,
    `cellCount plans with INDEX_BYTES_PER_KEY = ${INDEX_BYTES_PER_KEY} (measured ${largest.bytesPerKey.toFixed(1)} at ${largest.keys.toLocaleString("en")} keys, where`,
    `the budget binds; small indexes cost more per key for fixed per-backend overhead, but little in all). The budget holds`,
    `${Math.floor(budgetKeys).toLocaleString("en")} keys = ${((budgetKeys * 64) / 1e6).toFixed(1)} M KV tokens of fleet per index copy,`,
    `e.g. ${CELL_MAX_BACKENDS} backends × ${((budgetKeys * 64) / CELL_MAX_BACKENDS / 1e6).toFixed(2)} M tokens each; with an A/B split and the shadow (3 copies), a third of that.`,
    "",
  ].join("\n");
  const out = join(dirname(fileURLToPath(import.meta.url)), "../results/index-memory.md");
  writeFileSync(out, md);
  console.log(md);
}

main();
