// The "null-do" arm's Worker: the null gateway (passthrough-worker.js) plus the
// gateway's two Durable Object calls, made to an object that does no routing.
// Per request it takes a stub (getByName, as the gateway does), calls route()
// with a payload of the gateway's shape for a 4k-token prompt (256 block keys,
// a fleet version, prompt and output tokens), forwards to the backend the
// object names (always the first: a fixed answer, given at once), streams the
// body back, and once the body has ended calls complete() in waitUntil, as the
// gateway ends its lease. So (null-do − passthrough) is what workerd's RPC to
// a Durable Object costs, and (gateway − null-do) what our own work costs:
// auth, parsing, prefix keys, the decision, the lease bookkeeping.
// Plain JS: a bench fixture, bundled by wrangler, type-checked by nobody.
import { DurableObject } from "cloudflare:workers";

export class NullRouterDO extends DurableObject {
  leases = 0;
  async route(input) {
    // Touch the payload the way a real decision must (it is deserialised either way).
    if (!Array.isArray(input.blocks)) return { ok: false, code: "bad_input", message: "no blocks" };
    this.leases++;
    return {
      ok: true,
      backendId: "0",
      leaseId: `null-${this.leases}`,
      reason: "ring",
      expectedCachedTokens: 0,
      availableCachedTokens: 0,
      inflightAtDecision: 0,
      policy: "consistent_hash",
      arm: "a",
      cellInflight: 1,
    };
  }
  async complete(leaseId, outcome) {
    return { ok: typeof leaseId === "string" && outcome !== undefined, backendId: "0" };
  }
  async firstToken(leaseId) {
    return { ok: true, heard: typeof leaseId === "string" };
  }
  async completeAll(items) {
    return { ok: true, ended: Array.isArray(items) ? items.length : 0 };
  }
}

// A 4k-token prompt's block keys at 16 tokens a block, as the gateway sends them (numbers below 2^53).
const BLOCKS = Array.from({ length: 256 }, (_, i) => (i + 1) * 2654435761 * 1021);

let backends;

export default {
  async fetch(request, env, ctx) {
    backends ??= JSON.parse(env.BACKENDS);
    const stub = env.ROUTER.getByName("null-pool");
    const decision = await stub.route({
      fleetVersion: "null-v1",
      blocks: BLOCKS,
      promptTokens: 4096,
      outputTokens: 64,
    });
    if (!decision.ok) return new Response(decision.message, { status: 503 });
    const b = backends[Number(decision.backendId)];
    if (b === undefined) return new Response("null-do: no such backend", { status: 500 });
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    headers.delete("x-e2e-backend");
    if (b.apiKey !== undefined) headers.set("authorization", `Bearer ${b.apiKey}`);
    const upstream = await fetch(`${b.url}${url.pathname}`, {
      method: request.method,
      headers,
      body: request.body,
    });
    // The lease ends when the body has, as in the gateway: an identity stream tells us when.
    const { readable, writable } = new TransformStream();
    ctx.waitUntil(
      (upstream.body ?? new Blob([]).stream()).pipeTo(writable).then(
        () => stub.complete(decision.leaseId, { ok: true, status: upstream.status }),
        () => stub.complete(decision.leaseId, { ok: false, failure: "stream_error" }),
      ),
    );
    return new Response(readable, { status: upstream.status, headers: upstream.headers });
  },
};
