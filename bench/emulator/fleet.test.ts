import { describe, expect, it } from "vitest";
import { startEmulatorFleet } from "./fleet";

const MODEL = "llama-3.1-8b-instruct";

describe.each([{ thread: true }, { thread: false }])("emulator fleet (thread: $thread)", (where) => {
  it("serves, counts and times requests, and closes", async () => {
    const fleet = await startEmulatorFleet(
      [0, 1].map(() => ({ port: 0, model: MODEL, speed: 50 })),
      where,
    );
    try {
      expect(fleet.urls).toHaveLength(2);
      const res = await fetch(`${fleet.urls[1]}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "fleet-test-req-1" },
        body: JSON.stringify({
          model: MODEL,
          messages: [{ role: "user", content: "a prompt long enough to fill a block or two of tokens" }],
          max_tokens: 3,
          stream: true,
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("data: [DONE]");
      const metrics = await fleet.metrics();
      expect(metrics.map((m) => m.requestsFinished)).toEqual([0, 1]);
      const [served, unknown] = await fleet.serverTtftMs(["fleet-test-req-1", "never-sent"]);
      expect(served).toBeGreaterThan(0);
      expect(unknown).toBeUndefined();
    } finally {
      await fleet.close();
    }
    await expect(fetch(`${fleet.urls[0]}/health`)).rejects.toThrow();
  });
});
