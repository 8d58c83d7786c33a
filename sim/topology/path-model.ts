/**
 * The network path of one streamed request, through the gateway and
 * directly, as round trips over hops: what the gateway adds to the time to
 * first token (TTFT) for a client somewhere, given where the Worker, the
 * RouterDO and the KeyLimiterDO run. Pure arithmetic over its inputs; the
 * backend's own queueing and prefill are the same on both paths and left out.
 *
 * Round trips per hop, to the first token of the answer:
 * - a request on a reused connection costs one round trip; a new connection
 *   first costs two more (TCP, then a full TLS 1.3 handshake; no 0-RTT);
 * - the client connects to its nearest Cloudflare colo ("edge"); a direct
 *   client connects to the backend itself;
 * - with placement the edge forwards the request over Cloudflare's network to
 *   the Worker near the fleet: one round trip, on connections Cloudflare
 *   keeps open;
 * - the Worker's RPCs to a Durable Object (route call; the KeyLimiterDO's
 *   acquire when per-key concurrency limits are on) cost one round trip each,
 *   in sequence before the backend is called, but never more than the
 *   Worker's deadline for them: past ROUTER_TIMEOUT_MS the Worker decides
 *   alone (route `local`, consistent hashing in the isolate) and stops asking
 *   for a second; past the limiter's deadline it goes ahead without a slot.
 *   The completion report and the slot release run after the response
 *   (waitUntil) and cost the client nothing, as do the RouterDO's health
 *   probes of the backends;
 * - the Worker's connection to the backend is reused or new like a client's.
 * A region's own round trip (colo ↔ cloud region, Worker ↔ Durable Object in
 * the same area) is `localMs`; the client's own access to its colo,
 * `accessMs`, is paid on both paths alike.
 */
import { type Region, type RttTable, rttBetween } from "./regions";

export interface PathInputs {
  readonly rtts: RttTable;
  /** Client ↔ its nearest Cloudflare colo (a direct client crosses the same access network). */
  readonly accessMs: number;
  /** Two sites in one region: a colo and the cloud region next to it, a Worker and a Durable Object there. */
  readonly localMs: number;
  /** The gateway's own time per request (Worker work, the RouterDO's decision), measured with no distance. */
  readonly gatewayMs: number;
  /** ROUTER_TIMEOUT_MS: the longest the Worker waits for a route call before deciding alone. */
  readonly routerTimeoutMs: number;
  /** The longest it waits for a KeyLimiterDO before going ahead without a slot. */
  readonly limiterTimeoutMs: number;
}

/** Where each piece runs, for one client. */
export interface Topology {
  readonly client: Region;
  readonly fleet: Region;
  /** At the client's colo (no placement), or near the fleet (`[placement]`). */
  readonly worker: "edge" | "fleet";
  readonly routerDo: Region;
  /** Where the key's KeyLimiterDO runs; absent when per-key concurrency limits are off. */
  readonly limiterDo?: Region;
}

/** Whether a request finds its connection open (warm) or must set one up first (cold). */
export interface Connections {
  readonly client: "warm" | "cold";
  /** The Worker's connection to the backend. */
  readonly upstream: "warm" | "cold";
}

export const WARM: Connections = { client: "warm", upstream: "warm" };

/** TCP, then TLS 1.3: round trips a new connection costs before its first request. */
export const HANDSHAKE_ROUND_TRIPS = 2;

/** One hop: `roundTrips` × `rttMs`. */
export interface Leg {
  readonly hop: GatewayHop | "client ↔ backend";
  readonly roundTrips: number;
  readonly rttMs: number;
  /** The Worker stopped waiting at its deadline: `rttMs` is the deadline, not the round trip. */
  readonly cut?: true;
}

export interface PathTime {
  readonly legs: readonly Leg[];
  readonly ms: number;
}

export interface GatewayPathTime extends PathTime {
  /** Who chose the backend: the RouterDO, or the isolate alone after the route call's deadline. */
  readonly routedBy: "router" | "local";
}

export interface Comparison {
  readonly gateway: GatewayPathTime;
  readonly direct: PathTime;
  /** gateway − direct: what the gateway adds to TTFT (negative: it saves time). */
  readonly addedMs: number;
}

/** The hops of a gateway request, in the order it crosses them. */
export const GATEWAY_HOPS = [
  "client ↔ edge colo",
  "edge ↔ placed Worker",
  "Worker ↔ KeyLimiterDO",
  "Worker ↔ RouterDO",
  "Worker ↔ backend",
  "gateway work",
] as const;
export type GatewayHop = (typeof GATEWAY_HOPS)[number];

const trips = (state: "warm" | "cold"): number => (state === "cold" ? HANDSHAKE_ROUND_TRIPS + 1 : 1);

function total(legs: readonly Leg[]): PathTime {
  return { legs, ms: legs.reduce((s, l) => s + l.roundTrips * l.rttMs, 0) };
}

/** A client talking to the backend itself. */
export function directPath(inputs: PathInputs, client: Region, fleet: Region, conn: Connections): PathTime {
  const rtt = inputs.accessMs + rttBetween(inputs.rtts, client, fleet, inputs.localMs);
  return total([{ hop: "client ↔ backend", roundTrips: trips(conn.client), rttMs: rtt }]);
}

/** The same request through the gateway. */
export function gatewayPath(inputs: PathInputs, t: Topology, conn: Connections): GatewayPathTime {
  const rtt = (a: Region, b: Region): number => rttBetween(inputs.rtts, a, b, inputs.localMs);
  const worker = t.worker === "fleet" ? t.fleet : t.client;
  const legs: Leg[] = [{ hop: "client ↔ edge colo", roundTrips: trips(conn.client), rttMs: inputs.accessMs }];
  if (worker !== t.client)
    legs.push({ hop: "edge ↔ placed Worker", roundTrips: 1, rttMs: rtt(t.client, worker) });
  const call = (hop: GatewayHop, ms: number, deadline: number): Leg =>
    ms > deadline ? { hop, roundTrips: 1, rttMs: deadline, cut: true } : { hop, roundTrips: 1, rttMs: ms };
  if (t.limiterDo !== undefined)
    legs.push(call("Worker ↔ KeyLimiterDO", rtt(worker, t.limiterDo), inputs.limiterTimeoutMs));
  const route = call("Worker ↔ RouterDO", rtt(worker, t.routerDo), inputs.routerTimeoutMs);
  legs.push(route);
  legs.push({ hop: "Worker ↔ backend", roundTrips: trips(conn.upstream), rttMs: rtt(worker, t.fleet) });
  legs.push({ hop: "gateway work", roundTrips: 1, rttMs: inputs.gatewayMs });
  return { ...total(legs), routedBy: route.cut ? "local" : "router" };
}

export function compare(inputs: PathInputs, t: Topology, conn: Connections): Comparison {
  const gateway = gatewayPath(inputs, t, conn);
  const direct = directPath(inputs, t.client, t.fleet, conn);
  return { gateway, direct, addedMs: gateway.ms - direct.ms };
}
