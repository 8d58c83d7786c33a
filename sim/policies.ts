/**
 * Policy names the simulator accepts: the routing core's own policies and the
 * peer baselines (sim/baselines). An unknown name is an error, never a
 * silent default.
 */
import { Router, type RouterOptions, type RouteTicket } from "../src/routing/index";
import {
  POLICY_NAMES,
  type PolicyName,
  type RouteContext,
  type RouteRequest,
  type RoutingPolicy,
} from "../src/routing/types";
import {
  BASELINE_NAMES,
  BASELINE_VIEWS,
  type BaselineName,
  createBaseline,
  isBaselineName,
  isFirstTokenAware,
} from "./baselines/index";
import { GATEWAY_VIEW, type RequestView } from "./request-view";
import type { FleetReadings, RouterFactory, SimRouter } from "./simulator";

/** The routing core's policies, then the peer baselines. */
export type SimPolicyName = PolicyName | BaselineName;
export const ALL_POLICIES: readonly SimPolicyName[] = [...POLICY_NAMES, ...BASELINE_NAMES];

export function isSimPolicy(name: string): name is SimPolicyName {
  return (ALL_POLICIES as readonly string[]).includes(name);
}

/** What the Router constructor takes for this name (a fresh baseline object per run: they carry state). */
export function policyFor(name: SimPolicyName): PolicyName | RoutingPolicy {
  return isBaselineName(name) ? createBaseline(name) : name;
}

/** What this policy's router is given of a request: the gateway's view for ours, each peer its own. */
export function viewOf(name: SimPolicyName): RequestView {
  return isBaselineName(name) ? BASELINE_VIEWS[name] : GATEWAY_VIEW;
}

/**
 * Which engine readings this policy's router is given. A peer reads the
 * engines live (in production its own scraper reads them, llm-d every 50 ms:
 * SOURCES.md, "Metric staleness"). Ours get what the gateway's scrape took,
 * lagged by its interval, or nothing when the scrape is off: never live
 * state a gateway does not have.
 */
export function readingsOf(
  name: SimPolicyName,
  readings: FleetReadings,
): Pick<RouterOptions, "engineSignals" | "engineSignalMaxAgeMs"> {
  if (isBaselineName(name)) return { engineSignals: readings.live };
  if (readings.scraped === undefined) return {};
  return {
    engineSignals: readings.scraped,
    ...(readings.scrapedMaxAgeMs !== undefined ? { engineSignalMaxAgeMs: readings.scrapedMaxAgeMs } : {}),
  };
}

/** readingsOf in words, for reports; `scrapeMs` 0: the scrape is off. */
export function readingsText(name: SimPolicyName, scrapeMs: number): string {
  if (isBaselineName(name)) return "live";
  return scrapeMs > 0 ? `scraped every ${scrapeMs} ms (lagged)` : "none (scrape off)";
}

/** Parses "a,b,c" (or "all"), with a clear error naming the bad entry. */
export function parsePolicies(list: string): SimPolicyName[] {
  if (list.trim() === "all") return [...ALL_POLICIES];
  const out: SimPolicyName[] = [];
  for (const raw of list.split(",")) {
    const name = raw.trim();
    if (name === "") continue;
    if (!isSimPolicy(name))
      throw new Error(`unknown policy "${name}": use ${ALL_POLICIES.join(", ")} or all`);
    if (!out.includes(name)) out.push(name);
  }
  if (out.length === 0) throw new Error("no policies given");
  return out;
}

/**
 * A fresh routing-core Router running `name`, with the engine readings it is
 * given (readingsOf) wired in. A policy that wants to hear about first tokens
 * (Dynamo's) gets them through the same request object the Router gave it.
 */
export function routerFactory(name: SimPolicyName, blockTokens: number): RouterFactory {
  return (backends, readings) => {
    const policy = policyFor(name);
    const router = new Router(backends, { policy, blockTokens, ...readingsOf(name, readings) });
    // Ours hear first tokens through Router.firstToken; a peer's through its own hook, given the request it saw.
    if (typeof policy === "string" || !isBaselineName(name) || !isFirstTokenAware(policy)) return router;
    const open = new Map<RouteTicket, { req: RouteRequest; index: number }>();
    const wrapped: SimRouter = {
      route(req: RouteRequest, ctx: RouteContext) {
        const r = router.route(req, ctx);
        open.set(r.ticket, { req, index: backends.findIndex((b) => b.id === r.decision.backendId) });
        return r;
      },
      firstToken(ticket, ctx) {
        const o = open.get(ticket as RouteTicket);
        if (o !== undefined) policy.onFirstToken(o.req, o.index, ctx);
      },
      complete(ticket, outcome, ctx) {
        open.delete(ticket as RouteTicket);
        router.complete(ticket as RouteTicket, outcome, ctx);
      },
    };
    return wrapped;
  };
}
