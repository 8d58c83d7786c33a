/**
 * Whether prefix_aware's figures in every report of FOLDER equal those of the same report in after-rescore,
 * every field but wallMs (p50/p90/p99, e2e, hit, load, share, prefill seconds, preemptions, reasons, ...).
 * Run: npx tsx bench/results/est-bound-2/same-figures.ts est-bound-2/tuning [est-bound-2/scoring ...]
 */
import { readdirSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const ours = (folder: string, file: string): Record<string, unknown> => {
  const report = JSON.parse(readFileSync(`bench/results/${folder}/${file}`, "utf8")) as {
    policies: { policy: string; wallMs?: number }[];
  };
  const { wallMs: _, ...figures } = report.policies.find((p) => p.policy === "prefix_aware")!;
  return figures;
};
for (const folder of process.argv.slice(2)) {
  const files = readdirSync(`bench/results/${folder}`).filter((f) => f.endsWith(".json"));
  const differ = files.filter((f) => !isDeepStrictEqual(ours(folder, f), ours("after-rescore", f)));
  console.log(`${folder}: ${files.length} reports, ${differ.length} differ from after-rescore${differ.length > 0 ? `: ${differ.join(", ")}` : ""}`);
}
