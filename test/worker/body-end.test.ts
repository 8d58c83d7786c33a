/**
 * The releasing body wrapper on its own: it reads nothing ahead of the
 * client (backpressure), hands chunks on untouched, and reports its end
 * exactly once, however the body ends.
 */
import { describe, expect, it } from "vitest";
import { type BodyEnd, onBodyEnd } from "../../src/worker/key-limits/body-end";

const tick = () => new Promise((r) => setTimeout(r, 5));

/** An inner body like the relay's: highWaterMark 0, one chunk per pull, counting pulls. */
function inner(chunks: Uint8Array[], opts: { failAt?: number } = {}) {
  const state = { pulls: 0, cancelled: undefined as unknown };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        const i = state.pulls++;
        if (i === opts.failAt) c.error(new Error("upstream reset"));
        else if (i < chunks.length) c.enqueue(chunks[i]!);
        else c.close();
      },
      cancel(reason) {
        state.cancelled = reason;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

const bytes = (s: string) => new TextEncoder().encode(s);

describe("onBodyEnd", () => {
  it("pulls from the inner body only when the client reads, and passes each chunk through as is", async () => {
    const chunks = [bytes("a"), bytes("bc")];
    const { stream, state } = inner(chunks);
    const ends: BodyEnd[] = [];
    const reader = onBodyEnd(stream, (how) => ends.push(how)).getReader();
    await tick();
    expect(state.pulls).toBe(0);
    const first = await reader.read();
    expect(first.value).toBe(chunks[0]);
    await tick();
    expect(state.pulls).toBe(1);
    expect((await reader.read()).value).toBe(chunks[1]);
    expect(ends).toEqual([]);
    expect((await reader.read()).done).toBe(true);
    await tick();
    expect(ends).toEqual(["done"]);
  });

  it("reports an inner error once and passes it to the client", async () => {
    const { stream } = inner([bytes("a")], { failAt: 1 });
    const ends: BodyEnd[] = [];
    const reader = onBodyEnd(stream, (how) => ends.push(how)).getReader();
    await reader.read();
    await expect(reader.read()).rejects.toThrow("upstream reset");
    await tick();
    expect(ends).toEqual(["error"]);
  });

  it("reports a client cancel once and passes it inward (so the relay aborts the upstream)", async () => {
    const { stream, state } = inner([bytes("a"), bytes("b")]);
    const ends: BodyEnd[] = [];
    const reader = onBodyEnd(stream, (how) => ends.push(how)).getReader();
    await reader.read();
    await reader.cancel("client gone");
    await tick();
    expect(ends).toEqual(["cancel"]);
    expect(state.cancelled).toBe("client gone");
  });
});
