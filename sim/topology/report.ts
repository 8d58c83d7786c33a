/**
 * The topology model's report: for clients in a few regions and a fleet in
 * one, what the gateway adds to the time to first token under each deploy
 * setting (deployments.ts), on warm connections and on new ones, with the
 * inputs and their sources stated. Markdown, as bench/results/scale.md
 * carries it.
 */
import { table } from "../format";
import { compareDeployment, DEPLOYMENTS, type Deployment, LIMITER_DEPLOYMENTS, labelOf } from "./deployments";
import { type Connections, GATEWAY_HOPS, type PathInputs, WARM } from "./path-model";
import { REGIONS, type Region, RTT_SOURCE, rttBetween, SITES } from "./regions";

export interface TopologyReportOptions {
  readonly inputs: PathInputs;
  readonly fleet: Region;
  readonly clients: readonly Region[];
  /** Where a far first request comes from, for the deployments without a hint. */
  readonly far: Region;
  /** The command that reproduces the report, printed with it. */
  readonly command: string;
}

const ms = (x: number): string => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(0)}`;

/** Added TTFT (gateway − direct), one row per client region, one column per deployment. */
function addedTable(o: TopologyReportOptions, deployments: readonly Deployment[], conn: Connections): string {
  const head = ["client in", "direct RTT", ...deployments.map((d) => labelOf(d, o.far))];
  const rows = o.clients.map((client) => [
    client,
    `${(o.inputs.accessMs + rttBetween(o.inputs.rtts, client, o.fleet, o.inputs.localMs)).toFixed(0)} ms`,
    ...deployments.map((d) => {
      const c = compareDeployment(o.inputs, d, { client, fleet: o.fleet, far: o.far }, conn);
      return c.gateway.routedBy === "local" ? `${ms(c.addedMs)} local` : ms(c.addedMs);
    }),
  ]);
  return table(head, rows);
}

/** The hops of one client's request under a few deployments, side by side. */
function legsTable(o: TopologyReportOptions, client: Region, deployments: readonly Deployment[]): string {
  const paths = deployments.map((d) =>
    compareDeployment(o.inputs, d, { client, fleet: o.fleet, far: o.far }, WARM),
  );
  const hops = GATEWAY_HOPS.filter((hop) => paths.some((p) => p.gateway.legs.some((l) => l.hop === hop)));
  const cell = (i: number, hop: string): string => {
    const leg = paths[i]!.gateway.legs.find((l) => l.hop === hop);
    if (leg === undefined) return "–";
    return `${leg.roundTrips} × ${leg.rttMs.toFixed(1)}${leg.cut ? " (deadline)" : ""}`;
  };
  const rows = hops.map((hop) => [hop, ...paths.map((_, i) => cell(i, hop))]);
  rows.push(["gateway path", ...paths.map((p) => p.gateway.ms.toFixed(1))]);
  rows.push(["direct client", ...paths.map((p) => p.direct.ms.toFixed(1))]);
  rows.push(["added", ...paths.map((p) => ms(p.addedMs))]);
  rows.push([
    "routed by",
    ...paths.map((p) => (p.gateway.routedBy === "router" ? "RouterDO" : "the isolate alone")),
  ]);
  return table(["hop (ms)", ...deployments.map((d) => labelOf(d, o.far))], rows);
}

/** What to set for a fleet in each region the model knows. */
function settingsTable(): string {
  return table(
    ["fleet in", "measured at", "ROUTER_LOCATION_HINT", '[placement] region (or mode = "smart")'],
    REGIONS.map((r) => [r, `${SITES[r].aws} (${SITES[r].city})`, SITES[r].hint, SITES[r].placement]),
  );
}

export function topologyReport(o: TopologyReportOptions): string {
  const { inputs } = o;
  const byId = (id: string): Deployment => DEPLOYMENTS.find((d) => d.id === id)!;
  const farthest = o.clients.reduce((a, b) =>
    rttBetween(inputs.rtts, b, o.fleet, inputs.localMs) > rttBetween(inputs.rtts, a, o.fleet, inputs.localMs)
      ? b
      : a,
  );
  const site = SITES[o.fleet];
  const rtts = o.clients
    .filter((c) => c !== o.fleet)
    .map((c) => `${c} ↔ ${o.fleet} ${rttBetween(inputs.rtts, c, o.fleet, inputs.localMs).toFixed(1)} ms`);
  return [
    "```sh",
    o.command,
    "```",
    "",
    `Fleet in ${o.fleet} (${site.aws}, ${site.city}); clients in ${o.clients.join(", ")}. ` +
      `Inputs: ${rtts.join(", ")} (${RTT_SOURCE}); within a region ${inputs.localMs} ms; ` +
      `client ↔ nearest colo ${inputs.accessMs} ms (paid by a direct client too, so it cancels); ` +
      `the gateway's own work ${inputs.gatewayMs} ms per request; ROUTER_TIMEOUT_MS ${inputs.routerTimeoutMs}, ` +
      `the KeyLimiterDO's deadline ${inputs.limiterTimeoutMs} ms. ` +
      `A RouterDO without a hint lives where the pool's first request was served; "far" is ${o.far}.`,
    "",
    `"local": the RouterDO is farther than ROUTER_TIMEOUT_MS, so the Worker waits that long, then picks the ` +
      "backend alone by consistent hashing (no pool-wide load or affinity view: prefix-aware routing is lost) " +
      "and skips the RouterDO for the next second, when its requests add only the gateway's own work.",
    "",
    "**Added time to first token over a direct client, ms** (steady state: client and backend connections reused):",
    "",
    addedTable(o, DEPLOYMENTS, WARM),
    "",
    "The first request on a new client connection (backend connection reused). The handshakes end at the " +
      "nearby colo instead of at the backend, so for far clients the gateway is faster than going direct " +
      "(negative figures):",
    "",
    addedTable(o, DEPLOYMENTS, { client: "cold", upstream: "warm" }),
    "",
    "A new backend connection from the Worker (client connection reused): what a colo pays the first time " +
      "it reaches the fleet, or after the connection idled out. Edge Workers keep one per colo that clients " +
      "use; a placed Worker keeps them in the one place near the fleet, where they stay warm:",
    "",
    addedTable(o, DEPLOYMENTS, { client: "warm", upstream: "cold" }),
    "",
    "With per-key concurrency limits on (KEY_MAX_CONCURRENT > 0), one more call before routing, " +
      "to the key's KeyLimiterDO (steady state):",
    "",
    addedTable(o, LIMITER_DEPLOYMENTS, WARM),
    "",
    `Hop by hop for a client in ${farthest} (steady state; round trips × ms):`,
    "",
    legsTable(o, farthest, [byId("edge"), byId("edge-patient"), byId("placed")]),
    "",
    "Settings for a fleet in each region the model knows (a Worker placement region names the cloud region; " +
      'a fleet outside AWS, GCP and Azure is probed with `hostname`, or found by `mode = "smart"`):',
    "",
    settingsTable(),
    "",
  ].join("\n");
}
