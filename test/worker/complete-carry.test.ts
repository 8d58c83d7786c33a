/**
 * A finished request's report rides on the isolate's next route call to the
 * same RouterDO (REPORT_CARRY_MS): the object ends that lease before it
 * decides; when the carrying call fails, the report is sent again by itself,
 * so no lease is left behind; with REPORT_CARRY_MS = 0 every report goes
 * alone, at once. The RouterDO is the real one; a wrapper around its
 * namespace records (or breaks) the route calls.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { RouteInput } from "../../src/worker/router/router-rpc";
import {
  authHeaders,
  chatBody,
  gatewayWithEnv,
  interceptRoute,
  longPrompt,
  openWithEnv,
  poolStats,
  settle,
} from "./helpers";

const request = (seed: string): RequestInit => ({
  method: "POST",
  headers: authHeaders(),
  body: chatBody(longPrompt(seed), "q", { stream: true }),
});

/** A request read to its end, its waitUntil work (the report) left running. */
async function finished(overrides: Partial<Env>, seed: string) {
  const open = await openWithEnv(overrides, "/v1/chat/completions", request(seed));
  expect(open.res.status).toBe(200);
  await open.res.arrayBuffer();
  return open;
}

describe("lease ends carried on the next route call", () => {
  beforeEach(async () => {
    // The pool's RouterDO knows the fleet (its stats answer) before a test counts from it.
    expect(
      (await gatewayWithEnv({ REPORT_CARRY_MS: "0" }, "/v1/chat/completions", request("warm"))).status,
    ).toBe(200);
    await settle();
  });

  it("the next request's route call carries the finished one's report, and the RouterDO ends that lease", async () => {
    const seen: RouteInput[] = [];
    const ROUTER = interceptRoute((input, real) => {
      seen.push(input);
      return real(input);
    });
    // Long enough that the second request's route call always comes first, however loaded the machine.
    const vars = { ROUTER, REPORT_CARRY_MS: "1000" };
    const before = (await poolStats()).usage.completed;
    const first = await finished(vars, "carry-a");
    expect((await poolStats()).leases).toBe(1); // its report waits for a carrier
    const res = await gatewayWithEnv(vars, "/v1/chat/completions", request("carry-b"));
    expect(res.status).toBe(200);
    await first.settled();
    expect(seen).toHaveLength(2);
    expect(seen[0]!.completes).toBeUndefined();
    expect(seen[1]!.completes).toHaveLength(1);
    expect(seen[1]!.completes![0]!.outcome.ok).toBe(true);
    // The second's own report had no carrier: sent alone after the delay (gatewayWithEnv waited for it).
    const after = await poolStats();
    expect(after.leases).toBe(0);
    expect(after.usage.completed - before).toBe(2);
  });

  it("REPORT_CARRY_MS = 0: every report goes at once, alone", async () => {
    const seen: RouteInput[] = [];
    const ROUTER = interceptRoute((input, real) => {
      seen.push(input);
      return real(input);
    });
    const vars = { ROUTER, REPORT_CARRY_MS: "0" };
    const first = await finished(vars, "carry-off-a");
    await first.settled();
    expect((await poolStats()).leases).toBe(0);
    await gatewayWithEnv(vars, "/v1/chat/completions", request("carry-off-b"));
    expect(seen.every((i) => i.completes === undefined)).toBe(true);
    expect((await poolStats()).leases).toBe(0);
  });

  it("a report whose carrying route call fails is sent again by itself: no lease is left behind", async () => {
    let broken = 0;
    const ROUTER = interceptRoute((input, real) => {
      if (input.completes !== undefined) {
        broken++;
        return Promise.reject(new Error("Network connection lost."));
      }
      return real(input);
    });
    const vars = { ROUTER, REPORT_CARRY_MS: "1000" };
    const before = (await poolStats()).usage;
    const first = await finished(vars, "carry-fail-a");
    const res = await gatewayWithEnv(vars, "/v1/chat/completions", request("carry-fail-b"));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("x-prefix-gateway-route")).toBe("local"); // the carrier failed: decided locally
    await first.settled();
    expect(broken).toBe(1);
    await settle();
    const after = await poolStats();
    expect(after.leases).toBe(0);
    // The first request's lease, ended by the resent report; the second, decided locally, observed.
    expect(after.usage.completed - before.completed).toBe(2);
    expect(after.usage.observed - before.observed).toBe(1);
  });
});
