/**
 * npm run bench:topology: the topology model's report (report.ts) on
 * stdout, for bench/results/scale.md "Geography". Every input is a flag, so
 * the figures can be re-run with your own fleet region and measurements.
 */
import { fileURLToPath } from "node:url";
import { KEY_LIMITER_DEADLINE_MS, SETTINGS } from "../../src/routing/defaults";
import { failure, parseFlags, positiveFlag, UsageError } from "../flags";
import { isRegion, publishedRtts, REGIONS, type Region, withRtts } from "./regions";
import { topologyReport } from "./report";

/**
 * The gateway's own time per request, ms: prefix_aware's added latency p50
 * over a direct client with every hop on loopback
 * (bench/results/e2e-overhead-4k.md, "Gateway-added latency"). It includes
 * a loopback RouterDO round trip, which the model also counts as a hop: a
 * slight overcount.
 */
export const MEASURED_GATEWAY_MS = 5.1;
/** Colo ↔ cloud region nearby: Cloudflare's placement docs quote 1 to 3 ms once a Worker runs next to its back end. */
export const DEFAULT_LOCAL_MS = 2;
/** Client ↔ its nearest colo; paid by a direct client too, so it moves no "added" figure. */
export const DEFAULT_ACCESS_MS = 10;

const USAGE = `npm run bench:topology -- [options]

What the gateway adds to time to first token over a direct client, for
clients in several regions, under each deploy setting (placement, location
hint), on warm and new connections. Prints Markdown.

  --fleet R          the GPU fleet's region (default us-east)
  --clients R,R,…    client regions (default us-east,eu-west,ap-southeast)
  --far R            where a pool's first request came from, for deployments without a hint (default ap-southeast)
  --access-ms MS     client ↔ nearest Cloudflare colo (default ${DEFAULT_ACCESS_MS})
  --local-ms MS      round trip within a region (default ${DEFAULT_LOCAL_MS})
  --gateway-ms MS    the gateway's own work per request (default ${MEASURED_GATEWAY_MS}, measured)
  --router-timeout-ms MS  ROUTER_TIMEOUT_MS (default ${SETTINGS.ROUTER_TIMEOUT_MS.default}, the var's default)
  --rtt A:B=MS,…     replace published inter-region round trips with your own
  -h, --help

Regions: ${REGIONS.join(", ")}
`;

const OPTIONS = {
  fleet: { type: "string" },
  clients: { type: "string" },
  far: { type: "string" },
  "access-ms": { type: "string" },
  "local-ms": { type: "string" },
  "gateway-ms": { type: "string" },
  "router-timeout-ms": { type: "string" },
  rtt: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function regionFlag(name: string, v: string): Region {
  if (!isRegion(v)) throw new UsageError(`--${name}: unknown region "${v}" (one of ${REGIONS.join(", ")})`);
  return v;
}

/** --rtt us-east:eu-west=70,us-east:oc=200 */
function rttFlag(v: string | undefined): [Region, Region, number][] {
  if (v === undefined) return [];
  return v.split(",").map((item) => {
    const m = /^([a-z-]+):([a-z-]+)=([0-9.]+)$/.exec(item.trim());
    if (m === null) throw new UsageError(`--rtt: expected A:B=MS, got "${item}"`);
    return [regionFlag("rtt", m[1]!), regionFlag("rtt", m[2]!), Number(m[3])];
  });
}

export function topologyCommand(argv: readonly string[], out: (s: string) => void): number {
  try {
    const v = parseFlags(argv, OPTIONS);
    if (v.help) {
      out(USAGE);
      return 0;
    }
    let rtts: ReturnType<typeof publishedRtts>;
    try {
      rtts = withRtts(publishedRtts(), rttFlag(v.rtt));
    } catch (e) {
      if (e instanceof UsageError) throw e;
      throw new UsageError(`--rtt: ${e instanceof Error ? e.message : String(e)}`);
    }
    const clients = (v.clients ?? "us-east,eu-west,ap-southeast")
      .split(",")
      .map((c) => regionFlag("clients", c));
    out(
      topologyReport({
        inputs: {
          rtts,
          accessMs: positiveFlag("access-ms", v["access-ms"], DEFAULT_ACCESS_MS),
          localMs: positiveFlag("local-ms", v["local-ms"], DEFAULT_LOCAL_MS),
          gatewayMs: positiveFlag("gateway-ms", v["gateway-ms"], MEASURED_GATEWAY_MS),
          routerTimeoutMs: positiveFlag(
            "router-timeout-ms",
            v["router-timeout-ms"],
            SETTINGS.ROUTER_TIMEOUT_MS.default,
          ),
          limiterTimeoutMs: KEY_LIMITER_DEADLINE_MS,
        },
        fleet: regionFlag("fleet", v.fleet ?? "us-east"),
        clients,
        far: regionFlag("far", v.far ?? "ap-southeast"),
        command: ["npm run bench:topology", ...(argv.length > 0 ? ["--", ...argv] : [])].join(" "),
      }),
    );
    return 0;
  } catch (e) {
    return failure(e, "bench:topology", USAGE, (s) => process.stderr.write(s));
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = topologyCommand(process.argv.slice(2), (s) => process.stdout.write(s));
