/**
 * The deploy settings the topology model compares, and where each puts the
 * Worker and the Durable Objects for a given client. A Durable Object starts
 * near the Worker whose `get` creates it unless ROUTER_LOCATION_HINT says
 * otherwise, and never moves (Cloudflare: "Durable Objects do not currently
 * change locations after they are created"); so without a hint, where the
 * RouterDO lives depends on where the pool's first request came from.
 */
import { type Comparison, type Connections, compare, type PathInputs, type Topology } from "./path-model";
import type { Region } from "./regions";

export interface Deployment {
  readonly id: string;
  /** Column heading; `{far}` stands for the region of a far first request. */
  readonly label: string;
  /** `[placement]` off (the Worker runs at the client's colo) or on (near the fleet). */
  readonly worker: "edge" | "fleet";
  /** The RouterDO near the fleet (hint, or a first request from there), or near a far first request. */
  readonly routerDo: "fleet" | "far";
  /** The KeyLimiterDO near the fleet (hint, or made by a placed Worker) or near the key's clients; absent: limits off. */
  readonly limiterDo?: "fleet" | "clients";
  /** ROUTER_TIMEOUT_MS when the deployment raises it above the default. */
  readonly routerTimeoutMs?: number;
}

/** Per-key concurrency limits off: where the RouterDO ends up, with and without placement. */
export const DEPLOYMENTS: readonly Deployment[] = [
  {
    id: "edge",
    label: "no placement, RouterDO near the fleet (hint)",
    worker: "edge",
    routerDo: "fleet",
  },
  {
    id: "edge-patient",
    label: "no placement, hint, ROUTER_TIMEOUT_MS = 300",
    worker: "edge",
    routerDo: "fleet",
    routerTimeoutMs: 300,
  },
  {
    id: "edge-far",
    label: "no placement, no hint, first request from {far}",
    worker: "edge",
    routerDo: "far",
  },
  {
    id: "placed",
    label: "placement + hint (recommended)",
    worker: "fleet",
    routerDo: "fleet",
  },
  {
    id: "placed-far",
    label: "placement, no hint, first request from {far} before placement applied",
    worker: "fleet",
    routerDo: "far",
  },
];

/** Per-key concurrency limits on (KEY_MAX_CONCURRENT > 0): the KeyLimiterDO is one more call before routing. */
export const LIMITER_DEPLOYMENTS: readonly Deployment[] = [
  {
    id: "edge-nohint",
    label: "no placement, no hint: KeyLimiterDO near the key's clients",
    worker: "edge",
    routerDo: "fleet",
    limiterDo: "clients",
  },
  {
    id: "edge-hint",
    label: "no placement, hint: KeyLimiterDO near the fleet",
    worker: "edge",
    routerDo: "fleet",
    limiterDo: "fleet",
  },
  {
    id: "placed-hint",
    label: "placement + hint (recommended)",
    worker: "fleet",
    routerDo: "fleet",
    limiterDo: "fleet",
  },
];

/** Where `d` puts everything for a client in `client`, the fleet in `fleet`, a far first request from `far`. */
export function topologyOf(d: Deployment, client: Region, fleet: Region, far: Region): Topology {
  const base: Topology = {
    client,
    fleet,
    worker: d.worker,
    routerDo: d.routerDo === "fleet" ? fleet : far,
  };
  if (d.limiterDo === undefined) return base;
  return { ...base, limiterDo: d.limiterDo === "fleet" ? fleet : client };
}

/** What `d` adds for one client, on connections in state `conn`. */
export function compareDeployment(
  inputs: PathInputs,
  d: Deployment,
  where: { readonly client: Region; readonly fleet: Region; readonly far: Region },
  conn: Connections,
): Comparison {
  const own = d.routerTimeoutMs === undefined ? inputs : { ...inputs, routerTimeoutMs: d.routerTimeoutMs };
  return compare(own, topologyOf(d, where.client, where.fleet, where.far), conn);
}

export function labelOf(d: Deployment, far: Region): string {
  return d.label.replace("{far}", far);
}
