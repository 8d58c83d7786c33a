/**
 * The backend fault helpers seen from inside workerd: a test can make an
 * emulator misbehave over HTTP, the fault is gone after the helper returns
 * (also when the test throws), and the emulator sees workerd's aborted
 * fetches as abandoned requests. Requests go straight to the backend, not
 * through the gateway, and every fault is scoped to a marker only this file
 * sends, so test files running beside it are unaffected.
 */
import { describe, expect, it } from "vitest";
import { BACKEND_KEY, backendState, backendUrl, MODEL, withBackendFault } from "./helpers";

const BACKEND = "emu-3";

function direct(user: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${backendUrl(BACKEND)}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${BACKEND_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: user }] }),
    signal,
  });
}

describe("backend fault helpers", () => {
  it("sets a marker fault for the duration of the callback only", async () => {
    const marker = "helpers-marker-503";
    await withBackendFault(BACKEND, { kind: "status", status: 503, match: marker }, async () => {
      const faulted = await direct(`please ${marker}`);
      expect(faulted.status).toBe(503);
      await faulted.arrayBuffer();
      const clean = await direct("an ordinary prompt");
      expect(clean.status).toBe(200);
      await clean.arrayBuffer();
      expect((await backendState(BACKEND)).fault).toEqual({ kind: "status", status: 503, match: marker });
    });
    expect((await backendState(BACKEND)).fault).toBeNull();
    const after = await direct(`please ${marker}`);
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });

  it("clears the fault when the callback throws", async () => {
    await expect(
      withBackendFault(BACKEND, { kind: "hang", match: "helpers-marker-throw" }, async () => {
        throw new Error("test failed inside");
      }),
    ).rejects.toThrow("test failed inside");
    expect((await backendState(BACKEND)).fault).toBeNull();
  });

  it("rejects a bad spec with the emulator's message", async () => {
    await expect(withBackendFault(BACKEND, { kind: "status", status: 200 }, async () => 1)).rejects.toThrow(
      /status: must be 400\.\.599/,
    );
  });

  it("lets the emulator see a fetch that workerd aborted as an abandoned request", async () => {
    const marker = "helpers-marker-hang";
    await withBackendFault(BACKEND, { kind: "hang", match: marker }, async () => {
      const before = (await backendState(BACKEND)).stats;
      await expect(direct(`hang on ${marker}`, AbortSignal.timeout(150))).rejects.toThrow();
      const until = Date.now() + 2_000;
      let now = (await backendState(BACKEND)).stats;
      while (now.abandoned === before.abandoned && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
        now = (await backendState(BACKEND)).stats;
      }
      expect(now.faulted.hang - before.faulted.hang).toBe(1);
      expect(now.abandoned - before.abandoned).toBe(1);
    });
  });
});
