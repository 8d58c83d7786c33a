import { afterEach, describe, expect, it, vi } from "vitest";
import { errorAnswerEvent } from "./error-answer";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A body that hands on `text` one character per `everyMs` (fake timers), then ends. */
function trickled(text: string, everyMs: number): ReadableStreamDefaultReader<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          if (i < text.length) controller.enqueue(enc.encode(text[i++]!));
          else controller.close();
          resolve();
        }, everyMs),
      );
    },
  }).getReader();
}

describe("errorAnswerEvent: a 200 JSON error body to a streamed request", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("read to its end, it is one SSE error event carrying the error object alone", async () => {
    const body = JSON.stringify({ error: { message: "too long", code: "context_length_exceeded" }, id: "x" });
    const reader = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode(body.slice(1)));
        c.close();
      },
    }).getReader();
    const out = await errorAnswerEvent(reader, enc.encode(body[0]!), 1000, Date.now() + 60_000);
    expect(dec.decode(out)).toBe(
      `data: ${JSON.stringify({ error: { message: "too long", code: "context_length_exceeded" } })}\n\n`,
    );
  });

  it("a body trickled within the idle bound each time is given up at the request's deadline, not 64 KiB later", async () => {
    vi.useFakeTimers({ now: 0 });
    // A byte every 900 ms, under the 1 s idle bound each time: only the request's deadline (5 s) ends the wait.
    const reader = trickled(`"error": {"message": "${"x".repeat(70_000)}"}}`, 900);
    let settled = false;
    const result = errorAnswerEvent(reader, enc.encode("{"), 1000, 5_000).then((r) => {
      settled = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(6_000);
    expect(settled).toBe(true);
    expect(await result).toBeUndefined();
  });
});
