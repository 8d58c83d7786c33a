import { describe, expect, it } from "vitest";
import { type RelayEnd, relay } from "./relay";
import { SseTap } from "./stream-tap";

const IDLE_MS = 300;
const UTF8 = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const token = (content: string) =>
  `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** A backend body whose chunks come at the given times (ms after the relay starts); it never ends by itself. */
function body(chunks: readonly { readonly at: number; readonly text: string }[]): {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  abort: AbortController;
} {
  const abort = new AbortController();
  const timers: ReturnType<typeof setTimeout>[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) timers.push(setTimeout(() => controller.enqueue(UTF8.encode(c.text)), c.at));
    },
    cancel() {
      for (const t of timers) clearTimeout(t);
    },
  });
  return { reader: stream.getReader(), abort };
}

function relayed(source: ReturnType<typeof body>, strip: boolean) {
  let ended: RelayEnd | undefined;
  let answers = 0;
  const out = relay({ ...source, first: undefined, eventStream: true, idleMs: IDLE_MS }, new SseTap(strip), {
    onFirstContent: () => {},
    onEnd: (e) => {
      ended = e;
    },
    onRelayed: () => answers++,
  });
  return { reader: out.getReader(), ended: () => ended, answers: () => answers };
}

async function readAll(r: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await r.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

describe("relay: the idle deadline and the proof of life", () => {
  for (const strip of [true, false])
    it(`keep-alive comments after a token are silence: the idle deadline ends the stream (${strip ? "strip" : "pass-through"})`, async () => {
      const pings = Array.from({ length: 40 }, (_, i) => ({
        at: 50 + i * (IDLE_MS / 4),
        text: ": ping\n\n",
      }));
      const r = relayed(body([{ at: 0, text: token("Hi") }, ...pings]), strip);
      const started = Date.now();
      const text = await readAll(r.reader);
      expect(Date.now() - started).toBeLessThan(IDLE_MS * 3);
      expect(text).toContain('"Hi"');
      expect(text).toContain("upstream_idle_timeout");
      expect(r.ended()?.kind).toBe("idle_timeout");
      // The token proves the backend alive; the comments do not.
      expect(r.answers()).toBe(1);
    });

  it("an error event is relayed but proves nothing", async () => {
    const error = `data: ${JSON.stringify({ error: { message: "no", type: "BadRequestError", code: 400 } })}\n\n`;
    const r = relayed(body([{ at: 0, text: error }]), true);
    expect(new TextDecoder().decode((await r.reader.read()).value)).toContain('"error"');
    expect(r.answers()).toBe(0);
    await r.reader.cancel();
  });

  it("a client slow to read is not the backend's silence, even after part of an event", async () => {
    // Pass-through hands on half an event; the client then reads nothing for twice the idle deadline, and the
    // rest of the event comes while it is away: the backend was never idle for IDLE_MS of reading.
    const half = token("Hi");
    const r = relayed(
      body([
        { at: 0, text: half.slice(0, 20) },
        { at: IDLE_MS * 2 + 100, text: `${half.slice(20)}data: [DONE]\n\n` },
      ]),
      false,
    );
    expect((await r.reader.read()).done).toBe(false);
    await sleep(IDLE_MS * 2);
    const rest = await readAll(r.reader).catch((e: unknown) => String(e));
    expect(rest).not.toContain("upstream_idle_timeout");
    expect(rest).toContain("[DONE]");
  });
});

describe("relay: a body that fails after [DONE]", () => {
  for (const strip of [true, false])
    it(`ends as done, with no error event after the answer (${strip ? "strip" : "pass-through"})`, async () => {
      // A proxy that resets the connection after the answer, or a content-length past the bytes sent: the
      // read after [DONE] fails.
      let sent = 0;
      const texts = [token("Hi"), "data: [DONE]\n\n"];
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent < texts.length) controller.enqueue(UTF8.encode(texts[sent++]!));
          else controller.error(new Error("Network connection lost."));
        },
      });
      const r = relayed({ reader: stream.getReader(), abort: new AbortController() }, strip);
      const text = await readAll(r.reader);
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      expect(text).not.toContain("error");
      expect(r.ended()).toEqual({ kind: "done" });
    });
});

describe("relay: a client that takes no bytes (CLIENT_STALL_TIMEOUT_MS)", () => {
  const STALL_MS = 300;
  /** A backend that always has the next token: a chunk every 20 ms, without end. */
  function flood(): { source: ReturnType<typeof body>; cancelled: () => boolean } {
    let cancelled = false;
    let timer: ReturnType<typeof setInterval> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(UTF8.encode(token("x"))), 20);
      },
      cancel() {
        cancelled = true;
        clearInterval(timer);
      },
    });
    return {
      source: { reader: stream.getReader(), abort: new AbortController() },
      cancelled: () => cancelled,
    };
  }
  function stalled(source: ReturnType<typeof body>, first?: Uint8Array) {
    let ended: RelayEnd | undefined;
    const out = relay(
      { ...source, first, eventStream: true, idleMs: IDLE_MS * 10, stallMs: STALL_MS },
      new SseTap(false),
      { onFirstContent: () => {}, onEnd: (e) => (ended = e) },
    );
    return { reader: out.getReader(), ended: () => ended };
  }
  const waitFor = async (what: () => boolean, ms: number) => {
    const until = Date.now() + ms;
    while (!what() && Date.now() < until) await sleep(20);
    return what();
  };

  it("a held reader that reads nothing after its first chunk: the backend is cut and the end is the client's", async () => {
    const f = flood();
    const r = stalled(f.source);
    expect((await r.reader.read()).done).toBe(false);
    // Reads nothing more, keeps its reader: backpressure, not a close.
    expect(await waitFor(() => r.ended() !== undefined, STALL_MS * 10)).toBe(true);
    expect(r.ended()?.kind).toBe("client_stall");
    expect(f.source.abort.signal.aborted).toBe(true);
    expect(f.cancelled()).toBe(true);
    // Its stream is over: a late read fails at once instead of hanging.
    await expect(r.reader.read()).rejects.toThrow(/took no bytes/);
  });

  it("a reader that never reads at all, with the answer's first bytes waiting, is cut the same", async () => {
    const f = flood();
    const r = stalled(f.source, UTF8.encode(token("first")));
    expect(await waitFor(() => r.ended() !== undefined, STALL_MS * 10)).toBe(true);
    expect(r.ended()?.kind).toBe("client_stall");
    expect(f.cancelled()).toBe(true);
  });

  it("a client reading slowly but steadily (a token's event every 100 ms, ~1 KB/s) is never cut", async () => {
    const f = flood();
    const r = stalled(f.source);
    let bytes = 0;
    for (let i = 0; i < 15; i++) {
      const { done, value } = await r.reader.read();
      expect(done).toBe(false);
      bytes += value?.byteLength ?? 0;
      await sleep(STALL_MS / 3);
    }
    expect(bytes).toBeGreaterThan(0);
    expect(r.ended()).toBeUndefined();
    expect(f.cancelled()).toBe(false);
    await r.reader.cancel();
    expect(r.ended()?.kind).toBe("client_abort");
  });

  it("a backend with nothing to send is not the client's stall: the relay waits on its read", async () => {
    const r = stalled(
      body([
        { at: 0, text: token("Hi") },
        { at: STALL_MS * 3, text: "data: [DONE]\n\n" },
      ]),
    );
    const text = await readAll(r.reader);
    expect(text).toContain("[DONE]");
    expect(r.ended()?.kind).not.toBe("client_stall");
  });
});
