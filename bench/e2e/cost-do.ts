/**
 * RouterDO decisions per second inside workerd, without HTTP: the fixture
 * Worker workerd/do-driver.js hosts the real RouterDO class (bundled by
 * wrangler from durable-objects/) and calls route + complete over RPC from
 * C concurrent callers, as the gateway does once per request. Served by
 * workerd (or wrangler dev) like the product; workerd CPU per decision from /proc.
 */
import { fixtureConfig, type GatewayRuntime, startGateway } from "./gateway";
import { groupCpuByCommand } from "./proc-cpu";

export interface DoRate {
  /** RouterDO objects driven at once (cells of one pool, 16 backends each); 1: the one object. */
  readonly cells: number;
  readonly clients: number;
  /** A new stub per decision (as per request in the gateway) instead of one stub for the whole run. */
  readonly freshStub: boolean;
  readonly decisions: number;
  readonly ms: number;
  readonly perSecond: number;
  /** CPU of the Worker runtime process (caller Worker + RouterDO) per decision, ms. */
  readonly workerdCpuMsPerDecision: number;
}

/** The RouterDO (and NullRouterDO) bindings and SQLite migration the do-driver fixture needs (wrangler TOML). */
export const DO_BINDING = `
[[durable_objects.bindings]]
name = "ROUTER"
class_name = "RouterDO"

[[durable_objects.bindings]]
name = "NULL_ROUTER"
class_name = "NullRouterDO"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["RouterDO", "NullRouterDO"]
`;

export async function routerDoRates(
  projectDir: string,
  runs: readonly (readonly [clients: number, decisions: number, freshStub: boolean, cells?: number])[],
  runtime: GatewayRuntime,
): Promise<DoRate[]> {
  const cfg = await fixtureConfig("e2e-do-driver", "bench/e2e/workerd/do-driver.js", DO_BINDING, projectDir);
  const gw = await startGateway({
    backends: [],
    policy: "prefix_aware",
    apiKey: "unused-gateway-key-0",
    configPath: cfg.configPath,
    runtime,
  });
  try {
    // Warm-up: hydrate the DO, fill the affinity index, let V8 optimise.
    await (await fetch(`${gw.url}/drive?clients=1&decisions=500`)).text();
    const out: DoRate[] = [];
    for (const [clients, decisions, freshStub, cells = 1] of runs) {
      // Hydrate this run's objects first (their spec, V8 warm on their code): the run times decisions only.
      if (cells > 1)
        await (await fetch(`${gw.url}/drive?clients=${cells}&decisions=${cells * 50}&cells=${cells}`)).text();
      const c0 = groupCpuByCommand(gw.pgid);
      const res = await fetch(
        `${gw.url}/drive?clients=${clients}&decisions=${decisions}${freshStub ? "&fresh=1" : ""}&cells=${cells}`,
      );
      if (!res.ok) throw new Error(`do-driver: ${res.status} ${await res.text()}`);
      const r = (await res.json()) as { decisions: number; ms: number };
      const cpu = (groupCpuByCommand(gw.pgid)["workerd:worker"] ?? 0) - (c0["workerd:worker"] ?? 0);
      out.push({
        cells,
        clients,
        freshStub,
        decisions: r.decisions,
        ms: r.ms,
        perSecond: (r.decisions / r.ms) * 1000,
        workerdCpuMsPerDecision: cpu / r.decisions,
      });
    }
    return out;
  } finally {
    await gw.close();
    await cfg.dispose();
  }
}
