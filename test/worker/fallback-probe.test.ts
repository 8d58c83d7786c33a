/**
 * The Worker's fail-open path (local-router.ts: the RouterDO unreachable) and a backend the isolate ejected on its
 * own outcomes. Before, nothing probed it: through a long RouterDO outage it stayed out after it recovered (and,
 * with several ejected, the pool shrank for the whole outage). Now the local decisions probe it on the RouterDO's
 * schedule with the RouterDO's probe (health-probe.ts) and rule (HealthTracker: back after RESTORE_AFTER_CHECKS
 * good probes), in waitUntil.
 *
 * The emulator's fault is scoped to this file's requests (a marker in the prompt): the backend's /health answers
 * 200 throughout, its marked requests get 502 until the fault is cleared (its recovery).
 */
import { afterEach, describe, expect, it } from "vitest";
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
  spareUrls,
} from "./helpers";

const MARKER = "LOCAL-PROBE-MARKER";

/** Every route call fails (a platform reset): each decision is this isolate's. */
const downRouter = (): Env["ROUTER"] =>
  interceptRoute(async () => {
    throw new Error("Durable Object reset because its code was updated.");
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

/** The backend that served a request (or undefined when none did). */
async function servedBy(vars: Partial<Env>, prompt: string): Promise<string | undefined> {
  const res = await gatewayWithEnv(vars, "/v1/chat/completions", chatInit(prompt));
  return res.status === 200 ? (res.headers.get("x-prefix-gateway-backend") ?? undefined) : undefined;
}

afterEach(async () => {
  await clearBackendFault(spareUrls()[0]!);
});

describe("the fail-open path probes what it ejected", () => {
  it("a backend ejected during a RouterDO outage is back in rotation after it recovers, the RouterDO still unreachable", async () => {
    const [sickUrl, okUrl] = spareUrls() as [string, string];
    const vars = {
      BACKENDS: JSON.stringify(
        [
          { id: "probe-x", url: sickUrl },
          { id: "probe-y", url: okUrl },
        ].map((b) => ({
          ...b,
          models: [SPARE_MODEL],
          apiKey: BACKEND_KEY,
          weight: 1,
          kvCacheTokens: 262144,
        })),
      ),
      HEALTH_PROBE_SECONDS: "2",
      ROUTER: downRouter(),
    };
    await setBackendFault(sickUrl, { kind: "status", status: 502, match: MARKER });
    const before = (await backendState(sickUrl)).stats.faulted.status;
    // Marked requests until probe-x has failed EJECT_AFTER_FAULTS (3) of them: this isolate ejects it.
    for (let i = 0; i < 40; i++) {
      if ((await backendState(sickUrl)).stats.faulted.status - before >= 3) break;
      await gatewayWithEnv(
        vars,
        "/v1/chat/completions",
        chatInit(`${MARKER} ${longPrompt(`lp-eject-${i}`)}`),
      );
    }
    expect((await backendState(sickUrl)).stats.faulted.status - before).toBe(3);
    // Out: no request goes there (its first probe is HEALTH_PROBE_SECONDS after the ejection).
    const out: (string | undefined)[] = [];
    for (let i = 0; i < 6; i++) out.push(await servedBy(vars, longPrompt(`lp-out-${i}`)));
    expect(out.every((b) => b === "probe-y")).toBe(true);
    // It recovers. The RouterDO stays out of reach; within its probes' schedule it serves again.
    await clearBackendFault(sickUrl);
    const deadline = Date.now() + 15_000;
    let back = false;
    for (let i = 0; !back && Date.now() < deadline; i++) {
      back = (await servedBy(vars, longPrompt(`lp-back-${i}`))) === "probe-x";
      if (!back) await new Promise((r) => setTimeout(r, 200));
    }
    expect(back).toBe(true);
  });
});
