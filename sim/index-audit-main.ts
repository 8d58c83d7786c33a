/**
 * npm run bench:index-audit -- --workload W --backends N (--rate R | --speed X) [--set S] [--seed S]
 *   [--preset NAME] [--kv-tokens T] [--kv-allocation A] [--prefix-tokens P] [--requests N] [--duration-s D] [--policy P]
 *   [--name NAME] [--out DIR]
 *
 * One operation = one run of a routing-core policy (prefix_aware by
 * default) with the affinity index compared, request by request, with the
 * engine model's true caches (index-audit.ts says what each gap means).
 * The figures that matter: the index's believed tokens against the engines'
 * hits, over- and under-belief by cause, and cache held elsewhere but
 * unused. Writes <out>/<name>.md and .json (default out: bench/results).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isPolicyName } from "../src/routing/registry";
import { describeSet, loadSetData } from "./eval-sets";
import {
  engineFlags,
  FLEET_OPTIONS,
  failure,
  maxTokensFlag,
  parseFlags,
  positiveFlag,
  UsageError,
  WORKLOAD_OPTIONS,
  workloadFlags,
} from "./flags";
import { fmtMs, fmtNum, fmtPct, reproduceLines, table } from "./format";
import { auditIndex, type GapSplit, type IndexAudit } from "./index-audit";
import { DEFAULT_PRESET } from "./model/presets";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "./prepare";
import { machine } from "./report";

const HELP = `usage: npm run bench:index-audit -- --workload W --backends N (--rate R | --speed X) [options]
  --workload       as bench:sim (generated-shared-prefix, multi-turn, zipf, no-shared-prefix, burst,
                   burst-mooncake, mooncake, file:PATH)
  --backends       simulated engines (default 8)
  --rate / --speed requests/s (synthetic) / replay speed (traces)
  --set, --seed, --preset, --kv-tokens, --kv-allocation, --requests, --max-tokens: as bench:sim
                   (--kv-allocation: default incremental, as vLLM V1; reserve: the default before)
  --prefix-tokens  tokens the gateway keys (default ${DEFAULT_PREFIX_TOKENS})
  --duration-s D   traces: the first D seconds of recorded time
  --policy         a routing-core policy (default prefix_aware)
  --name, --out    report name and directory (default bench/results)`;

function share(part: number, whole: number): string {
  return whole > 0 ? fmtPct(part / whole) : "-";
}

function gapRow(label: string, g: GapSplit, a: IndexAudit): string[] {
  return [label, String(g.requests), fmtNum(g.tokens, 0), share(g.tokens, a.reusableTokens)];
}

export function renderAudit(a: IndexAudit, command: string, set: string): string {
  const r = a.result;
  return [
    `# Index audit: ${a.policy}, ${r.requests} requests`,
    "",
    ...reproduceLines(command),
    `Machine: ${machine()}. Set: ${set}.`,
    "",
    `Run: hit rate ${fmtPct(r.hitRate)}, TTFT p50 ${fmtMs(r.ttftP50Ms)} p99 ${fmtMs(r.ttftP99Ms)}, maxLoadRatio ${fmtNum(r.maxLoadRatio)}. ` +
      `Index: one entry per ${a.indexStride} block(s); ${fmtNum(a.correctedBlocks, 0)} entries evicted by corrections, ${fmtNum(a.forgottenBlocks, 0)} forgotten.`,
    "",
    "Tokens a hit could cover (prompt minus its last token), summed over requests; shares are of that sum.",
    "",
    table(
      ["quantity", "tokens", "share"],
      [
        ["reusable", fmtNum(a.reusableTokens, 0), "100%"],
        [
          "believed by the index (chosen backend)",
          fmtNum(a.believedTokens, 0),
          share(a.believedTokens, a.reusableTokens),
        ],
        [
          "present on the chosen engine at the decision",
          fmtNum(a.presentTokens, 0),
          share(a.presentTokens, a.reusableTokens),
        ],
        ["hit on the chosen engine", fmtNum(a.hitTokens, 0), share(a.hitTokens, a.reusableTokens)],
        [
          "present on the best engine at the decision",
          fmtNum(a.bestPresentTokens, 0),
          share(a.bestPresentTokens, a.reusableTokens),
        ],
      ],
    ),
    "",
    table(
      ["gap", "requests", "tokens", "share"],
      [
        gapRow("over-belief: believed > hit", a.over.total, a),
        gapRow("  … held at the decision, evicted before the request ran", a.over.presentAtDecision, a),
        gapRow("  … not held at the decision (the index kept what the engine lost)", a.over.absent, a),
        gapRow("under-belief: hit > believed", a.under.total, a),
        gapRow("  … past the key window", a.under.pastWindow, a),
        gapRow("  … within one index stride", a.under.stride, a),
        gapRow("  … unknown to the index", a.under.unknown, a),
        gapRow("elsewhere: best engine held more than the chosen one hit", a.elsewhere.total, a),
        gapRow("  … the index knew (a cost/load choice)", a.elsewhere.known, a),
        gapRow("  … the index did not know", a.elsewhere.unknown, a),
      ],
    ),
    "",
  ].join("\n");
}

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    ...FLEET_OPTIONS,
    ...WORKLOAD_OPTIONS,
    "prefix-tokens": { type: "string" },
    "duration-s": { type: "string" },
    policy: { type: "string" },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { workload, isTrace, backends, rate, speed, seed, setData } = workloadFlags(values, 8);
  const engine = engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]);
  const prefixTokens = positiveFlag("prefix-tokens", values["prefix-tokens"], DEFAULT_PREFIX_TOKENS);
  const maxTokens = maxTokensFlag(values["max-tokens"]);
  const policy = values.policy ?? "prefix_aware";
  if (!isPolicyName(policy)) throw new UsageError(`--policy: not a routing-core policy: "${policy}"`);
  const durationS =
    values["duration-s"] === undefined ? undefined : positiveFlag("duration-s", values["duration-s"]);
  const data = await loadSetData(workload, setData);
  let w = data.workload;
  if (durationS !== undefined) {
    const endMs = (durationS * 1000) / speed;
    w = { ...w, requests: w.requests.filter((r) => r.arrivalMs < endMs) };
  }
  const prepared = prepareWorkload(w, { prefixTokens, maxTokens, seed });
  const audit = auditIndex(prepared, { backends, seed, ...engine }, policy);
  const base = workload.startsWith("file:") ? "trace" : workload;
  const presetTag = engine.preset === DEFAULT_PRESET ? "" : `-${engine.preset}`;
  const name =
    values.name ??
    `index-audit-${base}-${backends}b${isTrace ? `-x${speed}` : `-r${rate}`}-p${prefixTokens}${presetTag}`;
  const outDir = values.out ?? resolve(dirname(fileURLToPath(import.meta.url)), "../bench/results");
  const command = `npm run bench:index-audit -- ${argv.join(" ")}`;
  const setLine = describeSet(data.run);
  const md = renderAudit(audit, command, setLine);
  console.log(md);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, `${name}.md`), md);
  const { result, ...rest } = audit;
  await writeFile(
    join(outDir, `${name}.json`),
    `${JSON.stringify({ command, set: setLine, machine: machine(), ...rest, run: { ...result } }, null, 2)}\n`,
  );
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.exitCode = failure(e, "bench:index-audit", HELP, (s) => console.error(s));
});
