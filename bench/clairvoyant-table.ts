/**
 * The clairvoyant reference beside the race (bench/results/clairvoyant/README.md), read from the
 * reports' JSON: per workload, backends and preset on the scoring set, mean over seeds of TTFT p99 and
 * p50 and hit of the oracle, for prefix_aware, the best peer (after-issue-12's reports: the race) and
 * the clairvoyant greedy reference's two objectives (clairvoyant/'s reports of the same name: the same
 * workload, fleet and seed, checked by the oracle's figures).
 *
 *   npx tsx bench/clairvoyant-table.ts [REF_FOLDER] [RACE_FOLDER]     (default clairvoyant after-issue-12)
 *   npx tsx bench/clairvoyant-table.ts info ...                          (the knowledge table: infoTable below)
 *
 * The queue-free floor: every request alone on an idle engine with the hit clairvoyant_ttft got (mean of
 * the seeds' p99): what is left of the tail with no queue at all. Any router's floor: the same with the
 * longest prefix any earlier request had (no engine can hold more): no router's p99 is below it.
 *
 * "Best peer" as in sim-tables.ts: the peer with the lowest mean p99. Δ = mean p99 ÷ the best peer's − 1.
 */

import { WORKLOAD_NAMES } from "../sim/workloads/index";
import { bestPeer, type Report, reports } from "./sim-tables";

const REFS = ["clairvoyant_ttft", "clairvoyant_total"] as const;
/** clairvoyant_ttft within the bounded-load cap (clairvoyant-main.ts --balance-factor). */
const CAPPED = "clairvoyant_ttft_capped";
const SHORT: Record<string, string> = { "llama-3.1-8b-h100-vllm": "8B", "qwen3-30b-a3b-h100-vllm": "MoE" };
const ORDER: readonly string[] = WORKLOAD_NAMES;

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)}%`;
const abs = (x: number) => `${Math.abs(x * 100).toFixed(1)}%`;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x >= 100 ? 0 : 1)} ms`);

function fig(r: Report, policy: string) {
  const p = r.policies.find((x) => x.policy === policy);
  if (p === undefined) throw new Error(`${r.file}: no ${policy}`);
  return { p99: p.ttftP99Ms, p50: p.ttftP50Ms, ofOracle: p.hitRate / r.oracle.hitRate };
}

/** clairvoyant-main.ts's queue-free floor: every request alone on an idle engine, with the reference's hit. */
interface WithFloor {
  readonly queueFreeFloor?: { readonly ttftP99Ms: number };
  /** The same with the longest prefix any earlier request had: a lower bound on any router's p99. */
  readonly anyRouterFloor?: { readonly ttftP99Ms: number };
}

interface Pair {
  readonly race: Report;
  readonly ref: Report;
}

function pairs(refFolder: string, raceFolder: string): Map<string, Pair[]> {
  const race = new Map(reports(raceFolder).map((r) => [r.file, r]));
  const groups = new Map<string, Pair[]>();
  for (const ref of reports(refFolder)) {
    if (!REFS.every((p) => ref.policies.some((x) => x.policy === p))) continue;
    const r = race.get(ref.file);
    if (r === undefined) throw new Error(`${ref.file}: no report of that name in ${raceFolder}/`);
    if (
      r.oracle.hitRate !== ref.oracle.hitRate ||
      r.workload !== ref.workload ||
      r.fleet.seed !== ref.fleet.seed
    )
      throw new Error(
        `${ref.file}: not the race's workload (oracle ${r.oracle.hitRate} vs ${ref.oracle.hitRate})`,
      );
    const key = `${ref.workload}|${ref.fleet.backends}|${ref.fleet.preset}`;
    groups.set(key, [...(groups.get(key) ?? []), { race: r, ref }]);
  }
  return groups;
}

export function table(refFolder = "clairvoyant", raceFolder = "after-issue-12"): string {
  const groups = pairs(refFolder, raceFolder);
  const keys = [...groups.keys()].sort((a, b) => {
    const rank = (k: string) => {
      const [w, n, p] = k.split("|");
      return ORDER.indexOf(w!) * 1000 + Number(n) * 10 + (SHORT[p!] === "MoE" ? 1 : 0);
    };
    return rank(a) - rank(b);
  });
  const lines = [
    "| run | seeds | p99: prefix_aware | best peer | ref ttft (maxLoad) | ref total | ref ttft capped (vs peer; maxLoad) | queue-free floor | we vs peer | best ref vs peer [per seed] | floor vs peer | any router's floor (vs peer) | p50: ours / peer / ref ttft / ref total | hit of oracle: ours / peer / ref ttft / ref total | a 10% lead by a better decision per request? |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const key of keys) {
    const ps = groups.get(key)!.sort((a, b) => a.ref.fleet.seed - b.ref.fleet.seed);
    const races = ps.map((p) => p.race);
    const m = (rs: readonly Report[], policy: string, f: "p99" | "p50" | "ofOracle") =>
      mean(rs.map((r) => fig(r, policy)[f]));
    const peer = bestPeer(races);
    const refs = ps.map((p) => p.ref);
    const ours = m(races, "prefix_aware", "p99");
    const theirs = m(races, peer, "p99");
    const [t, s] = REFS.map((p) => m(refs, p, "p99")) as [number, number];
    const hasCapped = refs.every((r) => r.policies.some((x) => x.policy === CAPPED));
    const load = (rs: readonly Report[], policy: string) =>
      mean(rs.map((r) => r.policies.find((x) => x.policy === policy)!.maxLoadRatio)).toFixed(2);
    const capped = hasCapped
      ? `${ms(m(refs, CAPPED, "p99"))} (${pct(m(refs, CAPPED, "p99") / theirs - 1)}; maxLoad ${load(refs, CAPPED)})`
      : "–";
    const best = Math.min(t, s);
    const floorOf = (which: keyof WithFloor) => {
      const xs = refs.map((r) => (r as Report & WithFloor)[which]?.ttftP99Ms);
      return xs.every((x) => x !== undefined) ? mean(xs as number[]) : undefined;
    };
    const q = floorOf("queueFreeFloor");
    const a = floorOf("anyRouterFloor");
    const floor = q === undefined ? "–" : ms(q);
    const floorLead = q === undefined ? "–" : pct(q / theirs - 1);
    const bound =
      a === undefined
        ? "–"
        : `${ms(a)} (${pct(a / theirs - 1)})${a > 0.9 * theirs ? ": a 10% lead is impossible" : ""}`;
    const lead = best / theirs - 1;
    // Per seed: the better objective's p99 ÷ the best peer's − 1 (the peer chosen on the mean).
    const leads = ps.map((p) => Math.min(...REFS.map((x) => fig(p.ref, x).p99)) / fig(p.race, peer).p99 - 1);
    const range = leads.length > 1 ? ` [${pct(Math.min(...leads))}…${pct(Math.max(...leads))}]` : "";
    const verdict =
      lead <= -0.1
        ? `yes: the reference is ${abs(lead)} ahead`
        : lead < 0
          ? `no: the reference itself is only ${abs(lead)} ahead`
          : `no: the reference is ${abs(lead)} behind (greedy: it pays for arrivals it cannot see)`;
    const [w, n, preset] = key.split("|");
    const trio = (f: "p50" | "ofOracle", fmt: (x: number) => string) =>
      [m(races, "prefix_aware", f), m(races, peer, f), ...REFS.map((p) => m(refs, p, f))]
        .map(fmt)
        .join(" / ");
    lines.push(
      `| ${w} (${n} backends), ${SHORT[preset!] ?? preset} | ${refs[0]!.command.includes("--seed") ? refs.map((r) => r.fleet.seed).join(",") : "trace"} | ${ms(ours)} | ${ms(theirs)} (${peer}) | ${ms(t)} (${load(refs, REFS[0])}) | ${ms(s)} | ${capped} | ${floor} | ${pct(ours / theirs - 1)} | ${pct(lead)}${range} | ${floorLead} | ${bound} | ${trio("p50", ms)} | ${trio("ofOracle", (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : "–"))} | ${verdict} |`,
    );
  }
  return lines.join("\n");
}

/**
 * One cut-down reference in the knowledge table: `suffix` names its report beside the exact one's
 * (clairvoyant-main.ts: <name>-knows-<knows>[-mt-<model>]), `policy` its uncapped run in it (+ "_capped").
 */
interface Variant {
  readonly label: string;
  readonly suffix: string;
  readonly policy: string;
}

/** The cut-down knowledges (sim/clairvoyant-knowledge.ts), as clairvoyant-info.sh runs them. */
const VARIANTS: readonly Variant[] = [
  ["lagged", "-knows-lagged", "_lagged"],
  ["max-tokens", "-knows-max-tokens", "_maxtok"],
  ["max-tokens+lagged", "-knows-max-tokens+lagged", "_maxtok_lagged"],
  ["max-tokens, every client sends a cap (--max-tokens capped)", "-knows-max-tokens-mt-capped", "_maxtok"],
  [
    "max-tokens, every cap the rung above the answer (--max-tokens tight)",
    "-knows-max-tokens-mt-tight",
    "_maxtok",
  ],
  ["learned", "-knows-learned", "_learned"],
  ["learned+lagged", "-knows-learned+lagged", "_learned_lagged"],
].map(([label, suffix, tag]) => ({ label: label!, suffix: suffix!, policy: `clairvoyant_ttft${tag}` }));

/**
 * The knowledge table (bench/results/clairvoyant-info/): per run (a column), mean TTFT p99 over the
 * seeds every row has, of prefix_aware and the best peer (the race), the exact reference (REF_FOLDER) and
 * each cut-down one (INFO_FOLDER), uncapped / within the 1.25 request cap, each with its Δ against the
 * best peer. A row none of whose reports is there is left out; a cell without every seed of its run is "–".
 *
 *   npx tsx bench/clairvoyant-table.ts info [INFO_FOLDER] [REF_FOLDER] [RACE_FOLDER]
 *   (default clairvoyant-info clairvoyant after-issue-12)
 */
export function infoTable(
  infoFolder = "clairvoyant-info",
  refFolder = "clairvoyant",
  raceFolder = "after-issue-12",
): string {
  const byFile = (folder: string) => new Map(reports(folder).map((r) => [r.file, r]));
  const race = byFile(raceFolder);
  const ref = byFile(refFolder);
  const info = byFile(infoFolder);
  const variantFile = (f: string, v: Variant) => f.replace(/\.json$/, `${v.suffix}.json`);
  const present = VARIANTS.filter((v) => [...info.keys()].some((f) => f.endsWith(`${v.suffix}.json`)));
  const runs = new Map<string, string[]>();
  for (const [file, r] of ref) {
    if (!present.some((v) => info.has(variantFile(file, v)))) continue;
    const key = `${r.workload}|${r.fleet.backends}|${r.fleet.preset}`;
    runs.set(key, [...(runs.get(key) ?? []), file]);
  }
  const keys = [...runs.keys()].sort(
    (a, b) => ORDER.indexOf(a.split("|")[0]!) - ORDER.indexOf(b.split("|")[0]!) || a.localeCompare(b),
  );
  const head = ["knowledge (p99 uncapped / capped, Δ vs the best peer)"];
  const SCRAPED = "prefix_aware, scrape every 1,000 ms";
  const rows = new Map<string, string[]>([
    ["prefix_aware", []],
    ["best peer", []],
    ["exact (the reference as built)", []],
    ...present.map((v): [string, string[]] => [v.label, []]),
  ]);
  for (const key of keys) {
    // A variant's cell only when it has every seed of the run: each mean is over the same requests.
    const files = runs
      .get(key)!
      .filter((f) => race.has(f))
      .sort();
    if (files.length === 0) continue;
    for (const f of files) {
      const [a, b] = [race.get(f)!, ref.get(f)!];
      if (a.oracle.hitRate !== b.oracle.hitRate || a.fleet.seed !== b.fleet.seed)
        throw new Error(`${f}: the reference's workload is not the race's`);
    }
    const races = files.map((f) => race.get(f)!);
    const p99 = (rs: readonly Report[], policy: string) => mean(rs.map((r) => fig(r, policy).p99));
    const peer = bestPeer(races);
    const theirs = p99(races, peer);
    const cell = (x: number) => `${ms(x)} (${pct(x / theirs - 1)})`;
    const pair = (rs: readonly Report[], policy: string) =>
      `${cell(p99(rs, policy))} / ${cell(p99(rs, `${policy}_capped`))}`;
    const refs = files.map((f) => ref.get(f)!);
    rows.get("prefix_aware")!.push(cell(p99(races, "prefix_aware")));
    // engine-signals' runs with the gateway's scrape on (sim-all.sh signals: -scrape1000 in the name).
    const scraped = files.map((f) => race.get(f.replace(/-(tuning|scoring)/, "-scrape1000-$1")));
    if (scraped.every((r) => r !== undefined)) {
      if (!rows.has(SCRAPED)) rows.set(SCRAPED, []);
      rows.get(SCRAPED)!.push(cell(p99(scraped as Report[], "prefix_aware")));
    }
    rows.get("best peer")!.push(`${ms(theirs)} (${peer})`);
    rows.get("exact (the reference as built)")!.push(pair(refs, "clairvoyant_ttft"));
    for (const v of present) {
      const vs = files.map((f) => info.get(variantFile(f, v)));
      rows.get(v.label)!.push(vs.every((r) => r !== undefined) ? pair(vs as Report[], v.policy) : "–");
    }
    const [w, n, preset] = key.split("|");
    const seeds = refs[0]!.command.includes("--seed")
      ? `seeds ${refs.map((r) => r.fleet.seed).join(",")}`
      : "trace";
    head.push(`${w} (${n}), ${SHORT[preset!] ?? preset}; ${seeds}`);
  }
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...[...rows].map(([label, cells]) => `| ${label} | ${cells.join(" | ")} |`),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(
    process.argv[2] === "info"
      ? infoTable(process.argv[3], process.argv[4], process.argv[5])
      : table(process.argv[2], process.argv[3]),
  );
