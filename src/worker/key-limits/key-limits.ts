/**
 * Per-key limits on the inference routes, after auth: requests per period
 * (the KEY_RATE_LIMITER binding, counted per Cloudflare location) and
 * requests in flight (the key's KeyLimiterDO). Either refuses with 429 and
 * `retry-after` before any routing or backend work starts, and the log line
 * says which. A limit that is off costs no call; a limiter that fails or is
 * slow lets the request through, logged.
 *
 * A slot is held until the response body is over: the body is wrapped in a
 * pass-through that releases on done, error or client cancel. A request that
 * ends in an error response releases at once. If a release is lost, the
 * slot's TTL (LEASE_TTL_SECONDS, like the RouterDO's leases) ends it.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { GatewayEnv } from "../app-types";
import { rateLimited } from "../errors";
import type { RequestLog } from "../log";
import { onBodyEnd } from "./body-end";
import { acquireSlot, checkRate } from "./key-limiter-client";

/** A refused slot is worth retrying as soon as any of the key's requests ends: no better estimate exists. */
const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/**
 * Seconds until the next minute boundary, 1..60: when the rate windows are
 * clock-aligned (as the local emulation's are) that is when a period of 60
 * resets, and a period of 10 resets no later.
 */
export function secondsToNextMinute(nowMs: number): number {
  return 60 - (Math.floor(nowMs / 1000) % 60);
}

async function enforceRate(limiter: RateLimit | undefined, keyId: string, log: RequestLog): Promise<void> {
  const r = await checkRate(limiter, keyId);
  if (r === "allowed") return;
  if (r === "limited") {
    log.set({ limitedBy: "rate" });
    throw rateLimited(
      "Rate limit reached for this API key: too many requests in the current window.",
      secondsToNextMinute(Date.now()),
    );
  }
  log.set({ rateLimitFailOpen: r });
}

/** Runs the rest of the chain, then calls `release` (via waitUntil) once the response is over. */
async function holdUntilResponseEnds(
  c: Context<GatewayEnv>,
  next: Next,
  release: () => Promise<void>,
): Promise<void> {
  const end = () => c.executionCtx.waitUntil(release());
  try {
    await next();
  } catch (err) {
    end();
    throw err;
  }
  const res = c.res;
  if (c.error !== undefined || res.body === null) {
    end();
    return;
  }
  // Cleared first so Hono does not rebuild the new response around the old one's headers.
  c.res = undefined;
  c.res = new Response(onBodyEnd(res.body, end), res);
}

export function keyLimits(): MiddlewareHandler<GatewayEnv> {
  return async function keyLimitsMiddleware(c, next) {
    const config = c.get("config");
    const key = c.get("gatewayKey");
    const log = c.get("log");
    if (config.keyLimits.rateLimit) await enforceRate(c.env.KEY_RATE_LIMITER, key.id, log);
    if (key.maxConcurrent === 0) {
      await next();
      return;
    }
    const slot = await acquireSlot(c.env.KEY_LIMITER, {
      keyId: key.id,
      limit: key.maxConcurrent,
      ttlMs: config.router.leaseTtlSeconds * 1000,
      locationHint: config.locationHint,
    });
    if (slot.kind === "refused") {
      log.set({ limitedBy: "concurrency", keyInflight: slot.inflight });
      throw rateLimited(
        `Too many concurrent requests for this API key (limit ${key.maxConcurrent}).`,
        CONCURRENCY_RETRY_AFTER_SECONDS,
      );
    }
    if (slot.kind === "granted") log.set({ keyInflight: slot.inflight });
    else log.set({ concurrencyFailOpen: slot.reason });
    await holdUntilResponseEnds(c, next, slot.release);
  };
}
