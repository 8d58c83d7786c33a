/**
 * npm run bench:decision-cpu -- [--rounds 5] [--clients 16] [--decisions 2000]
 *
 * CPU per decision of one RouterDO in workerd, and how much of it is ours:
 * the do-driver fixture (workerd/do-driver.js, frozen once) calls, with a
 * fresh stub per decision as the gateway does,
 *   - router:        the real RouterDO, route() then complete() (two RPCs);
 *   - router, carry: the real RouterDO, each lease ended on the caller's next
 *                    route() (RouteInput.completes: one RPC per decision);
 *   - router, carry + first token: as carry, and each lease's first token told
 *                    (RouterDO.firstToken, a stub of its own) before its end, as
 *                    the Worker does for a streamed answer: two RPCs per decision;
 *   - null:          NullRouterDO (answers at once, routes nothing), route()
 *                    then complete(): the RPCs alone (and carry + first token).
 * The variants alternate within each round (their order rotating), so a
 * change in the shared machine's load falls on all of them. CPU is the
 * workerd process's (caller Worker and object together) from /proc, so
 * (router − null) is our decision's CPU apart from the RPCs. Clocks inside
 * workerd do not advance during synchronous work, so the object cannot time
 * itself: this difference is the measurement.
 */
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { summarize } from "../latency-summary";
import { frozenDoDriver } from "./do-driver-bundle";
import { startGateway } from "./gateway";
import { groupCpuByCommand } from "./proc-cpu";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const VARIANTS = [
  { name: "router (route + complete)", query: "" },
  { name: "router, carry (route carries the last end)", query: "&carry=1" },
  { name: "router, carry + first token (route, firstToken)", query: "&carry=1&first=1" },
  { name: "null object (route + complete)", query: "&object=null" },
  { name: "null object, carry + first token", query: "&object=null&carry=1&first=1" },
] as const;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "5" },
      clients: { type: "string", default: "16" },
      decisions: { type: "string", default: "2000" },
    },
  });
  const rounds = Number(values.rounds);
  const clients = Number(values.clients);
  const decisions = Number(values.decisions);
  if (![rounds, clients, decisions].every((x) => Number.isInteger(x) && x > 0))
    throw new Error("--rounds, --clients, --decisions: positive integers");
  const driver = await frozenDoDriver(root);
  const gw = await startGateway({
    backends: [],
    policy: "prefix_aware",
    apiKey: "unused-gateway-key-0",
    configPath: driver.configPath,
    runtime: "workerd",
  });
  const cpu = VARIANTS.map((): number[] => []);
  const rate = VARIANTS.map((): number[] => []);
  const load0 = loadavg()[0]!;
  try {
    const drive = async (query: string, n: number) => {
      const res = await fetch(`${gw.url}/drive?clients=${clients}&decisions=${n}&fresh=1${query}`);
      if (!res.ok) throw new Error(`do-driver: ${res.status} ${await res.text()}`);
      return (await res.json()) as { decisions: number; ms: number };
    };
    // Warm-up: hydrate both objects, fill the affinity index, let V8 optimise every path.
    for (const v of VARIANTS) await drive(v.query, 500);
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < VARIANTS.length; j++) {
        const v = (round + j) % VARIANTS.length;
        const c0 = groupCpuByCommand(gw.pgid)["workerd:worker"] ?? 0;
        const r = await drive(VARIANTS[v]!.query, decisions);
        const c1 = groupCpuByCommand(gw.pgid)["workerd:worker"] ?? 0;
        cpu[v]!.push((c1 - c0) / r.decisions);
        rate[v]!.push((r.decisions / r.ms) * 1000);
      }
    }
  } finally {
    await gw.close();
    await driver.dispose();
  }
  const out: string[] = [
    `${new Date().toISOString()}, load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; ` +
      `${rounds} rounds × ${decisions} decisions per variant, ${clients} callers, fresh stub per decision`,
    "",
    "| variant | CPU ms/decision, median | min–max | decisions/s, median | min–max |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [v, { name }] of VARIANTS.entries()) {
    const c = summarize(cpu[v]!);
    const r = summarize(rate[v]!);
    out.push(
      `| ${name} | ${c.p50.toFixed(3)} | ${Math.min(...cpu[v]!).toFixed(3)}–${Math.max(...cpu[v]!).toFixed(3)} | ` +
        `${r.p50.toFixed(0)} | ${Math.min(...rate[v]!).toFixed(0)}–${Math.max(...rate[v]!).toFixed(0)} |`,
    );
  }
  out.push("", "Per round (CPU ms/decision): ");
  for (const [v, { name }] of VARIANTS.entries())
    out.push(`- ${name}: ${cpu[v]!.map((x) => x.toFixed(3)).join(", ")}`);
  process.stdout.write(`${out.join("\n")}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
