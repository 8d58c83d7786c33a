/**
 * Per-key limits on the inference routes, after auth: requests per period
 * (the KEY_RATE_LIMITER binding, counted per Cloudflare location), checked
 * before the body is read, and requests in flight (the key's KeyLimiterDO),
 * checked once the body is whole. Either refuses with 429 and `retry-after`
 * before any routing or backend work starts, and the log line says which. A limit that is off costs no call; a limiter that fails or is
 * slow lets the request through, logged.
 *
 * A slot is held until the response body is over: the body is wrapped in a
 * pass-through that releases on done, error or client cancel. A request that
 * ends in an error response releases at once. The slot lives KEY_SLOT_TTL_MS
 * unless renewed, and this isolate renews it every KEY_SLOT_RENEW_MS until
 * the response ends (slot-renewal.ts: one call per key per period, none for
 * a request shorter than a period): a lost release, or a process that died
 * mid-stream, frees it within a TTL, while a stream of any length keeps it.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { KEY_SLOT_RENEW_MS, KEY_SLOT_TTL_MS } from "../../routing/defaults";
import type { GatewayEnv } from "../app-types";
import { rateLimited } from "../errors";
import type { RequestLog } from "../log";
import { onBodyEnd } from "./body-end";
import { acquireSlot, checkRate } from "./key-limiter-client";
import { SlotRenewer } from "./slot-renewal";

/** One per isolate: it batches the renewals of all the streams this isolate relays for a key. */
const renewer = new SlotRenewer(KEY_SLOT_RENEW_MS);

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

/** Runs the rest of the chain, then stops renewing and calls `release` (via waitUntil) once the response is over. */
async function holdUntilResponseEnds(
  c: Context<GatewayEnv>,
  next: Next,
  release: () => Promise<void>,
  stopRenewing: () => void,
): Promise<void> {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    stopRenewing();
    c.executionCtx.waitUntil(release());
  };
  // A client that leaves ends the slot too, even if no cancel reaches the body (workerd does not always
  // deliver one to a JS-stream body: cloudflare/workerd#6832). It may have left already: the slot is taken
  // after its body is read, and an aborted signal fires no abort event again (relay.ts and upstream.ts
  // check the same way).
  const client = c.req.raw.signal;
  if (client.aborted) end();
  else client.addEventListener("abort", end, { once: true });
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

/**
 * Requests per period: checked as the request arrives, before its body is read, so a key past its rate
 * costs the isolate no body to read and parse (up to MAX_BODY_BYTES).
 */
export function keyRateLimit(): MiddlewareHandler<GatewayEnv> {
  return async function keyRateLimitMiddleware(c, next) {
    if (c.get("config").keyLimits.rateLimit)
      await enforceRate(c.env.KEY_RATE_LIMITER, c.get("gatewayKey").id, c.get("log"));
    await next();
  };
}

/**
 * Requests in flight: a slot is taken once the body is whole and valid (the route reads it first), so a
 * client still uploading (a trickle, a large prompt on a slow link) holds none of its key's slots, and a
 * bad body is told its 400 rather than a 429 its SDK would retry.
 */
export function keyConcurrency(): MiddlewareHandler<GatewayEnv> {
  return async function keyConcurrencyMiddleware(c, next) {
    const config = c.get("config");
    const key = c.get("gatewayKey");
    const log = c.get("log");
    if (key.maxConcurrent === 0) {
      await next();
      return;
    }
    const slot = await acquireSlot(c.env.KEY_LIMITER, {
      keyId: key.id,
      limit: key.maxConcurrent,
      ttlMs: KEY_SLOT_TTL_MS,
      locationHint: config.locationHint,
    });
    if (slot.kind === "refused") {
      log.set({ limitedBy: "concurrency", keyInflight: slot.inflight });
      throw rateLimited(
        `Too many concurrent requests for this API key (limit ${key.maxConcurrent}).`,
        CONCURRENCY_RETRY_AFTER_SECONDS,
      );
    }
    let stopRenewing = () => {};
    if (slot.kind === "granted") {
      log.set({ keyInflight: slot.inflight });
      stopRenewing = renewer.hold(key.id, slot.slotId, slot.renew);
    } else {
      // No renewal: a grant that came too late (or never) ends within KEY_SLOT_TTL_MS, and the release is still sent.
      log.set({ concurrencyFailOpen: slot.reason });
    }
    await holdUntilResponseEnds(c, next, slot.release, stopRenewing);
  };
}
