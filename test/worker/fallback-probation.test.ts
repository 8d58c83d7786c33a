/**
 * The Worker's fail-open path (local-router.ts: the RouterDO unreachable) and a backend the RouterDO has on
 * probation (HealthTracker: back while it has relapses, so its first fault holds it out again, not its
 * EJECT_AFTER_FAULTS-th). The RouterDO's route answers say which backends are on probation; the isolate's local
 * router takes that word, and its own HealthTracker applies the same rule. Before, a backend whose /health lies
 * cost every isolate EJECT_AFTER_FAULTS failed attempts after each return while the RouterDO was out of reach.
 *
 * The RouterDO is the real one. The probation is put in its tracker directly (runInDurableObject: the cycle of
 * lies that earns it is cell-empty.test.ts's liar, tens of seconds), then its route() throws (a platform reset),
 * and every decision is the isolate's.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { HealthRow } from "../../src/routing";
import {
  authHeaders,
  BACKEND_KEY,
  backendState,
  clearBackendFault,
  gatewayWithEnv,
  interceptRoute,
  longPrompt,
  SPARE_MODEL,
  setBackendFault,
  settle,
  spareUrls,
} from "./helpers";

/** Only this file's requests carry it: the emulator's fault is scoped to them. */
const MARKER = "PROBATION-LIAR-MARKER";

let routerDown = false;
const flakyRouter = (): Env["ROUTER"] =>
  interceptRoute(async (input, real) => {
    if (routerDown) throw new Error("Durable Object reset because its code was updated.");
    return real(input);
  });

function chatInit(prompt: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({
      model: SPARE_MODEL,
      max_tokens: 8,
      messages: [{ role: "user", content: prompt }],
    }),
  };
}

afterEach(async () => {
  routerDown = false;
  await clearBackendFault(spareUrls()[0]!);
});

describe("the fail-open path and a backend on probation", () => {
  it("holds a backend the RouterDO has on probation out on its first local fault", async () => {
    const [liarUrl, okUrl] = spareUrls() as [string, string];
    const vars = {
      BACKENDS: JSON.stringify(
        [
          { id: "liar-p", url: liarUrl },
          { id: "ok-p", url: okUrl },
        ].map((b) => ({
          ...b,
          models: [SPARE_MODEL],
          apiKey: BACKEND_KEY,
          weight: 1,
          kvCacheTokens: 262144,
        })),
      ),
      ROUTER: flakyRouter(),
    };
    // The RouterDO learns this fleet; then liar-p came back a moment ago with one relapse: on probation.
    expect(
      (await gatewayWithEnv(vars, "/v1/chat/completions", chatInit(longPrompt("fp-setup")))).status,
    ).toBe(200);
    await settle(SPARE_MODEL);
    await runInDurableObject(env.ROUTER.getByName(SPARE_MODEL), (instance) => {
      const router = (instance as unknown as { router: { loadHealth(rows: HealthRow[]): void } }).router;
      router.loadHealth([
        {
          id: "liar-p",
          ejected: false,
          faults: 0,
          goodChecks: 0,
          failedProbes: 0,
          ejectedAt: null,
          nextProbeAt: null,
          relapses: 1,
          backAt: Date.now(),
          probation: 2,
        },
      ]);
    });
    // One answer from the RouterDO tells this isolate (none of these requests fails anywhere).
    expect((await gatewayWithEnv(vars, "/v1/chat/completions", chatInit(longPrompt("fp-sync")))).status).toBe(
      200,
    );
    await settle(SPARE_MODEL);
    // Its /health still says 200, its requests get 502; and the RouterDO is out of reach.
    await setBackendFault(liarUrl, { kind: "status", status: 502, match: MARKER });
    const before = (await backendState(liarUrl)).stats.faulted.status;
    routerDown = true;
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++) {
      const init = chatInit(`${MARKER} ${longPrompt(`fp-${i}`)}`);
      statuses.push((await gatewayWithEnv(vars, "/v1/chat/completions", init)).status);
    }
    const attempts = (await backendState(liarUrl)).stats.faulted.status - before;
    // Before: EJECT_AFTER_FAULTS (3) attempts there before this isolate held it out, and with one key's share of
    // a fresh isolate's retry budget spent on the first, two clients got the 502. Now its first attempt, retried.
    expect({ attempts, notOk: statuses.filter((s) => s !== 200).length }).toEqual({ attempts: 1, notOk: 0 });
  });
});
