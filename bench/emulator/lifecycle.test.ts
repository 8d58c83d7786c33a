/** stop() and start(): a killed emulated process refuses connections; a restarted one serves with a fresh engine. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "./server";
import { causeCode, chatRequest, postChat, readSse, TEST_MODEL, tcpConnect, until } from "./test-client";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, model: TEST_MODEL, speed: 200 });
});

afterAll(async () => {
  await emu?.close();
});

const cachedTokens = async (user: string): Promise<number> => {
  const res = await postChat(emu.url, chatRequest(user));
  expect(res.status).toBe(200);
  const body = (await res.json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } };
  return body.usage.prompt_tokens_details.cached_tokens;
};

const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("emulator lifecycle", () => {
  it("stop → connections refused → start on the same port → serves again, with an empty cache", async () => {
    const long = "the same long question, repeated to fill a few blocks of tokens ".repeat(8);
    await cachedTokens(long);
    expect(await cachedTokens(long)).toBeGreaterThan(0);
    const { url, port } = emu;

    await emu.stop();
    expect(emu.state().up).toBe(false);
    expect(await tcpConnect(port)).toBe("ECONNREFUSED");
    // fetch fails too (on a pooled connection it has not yet seen closed, or refused).
    expect(await failure(postChat(url, chatRequest("a")))).toBeInstanceOf(Error);
    await emu.stop(); // idempotent

    await emu.start();
    expect(emu.state().up).toBe(true);
    expect(emu.port).toBe(port);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // A restarted process has lost its KV cache and its counters.
    expect(emu.metrics().requestsFinished).toBe(0);
    expect(await cachedTokens(long)).toBe(0);
    expect(emu.state().stats.restarts).toBe(1);
  });

  it("destroys every open connection on stop: a running stream and a hung request both fail", async () => {
    const before = emu.state().stats;
    const stream = await postChat(emu.url, chatRequest("a", { stream: true, max_tokens: 100_000 }));
    const head = await readSse(stream, 2);
    expect(head.error).toBeUndefined();
    emu.setFault({ kind: "hang" });
    const hung = failure(postChat(emu.url, chatRequest("b")));
    await until("the hung request to be held", () => emu.state().stats.held === 1);

    await emu.stop();
    expect(causeCode(await hung)).toBeDefined();
    const rest = await readSse(stream);
    expect(rest.done).toBe(false);
    expect(rest.error).toBeDefined();

    const after = emu.state().stats;
    expect(after.held).toBe(0);
    expect(after.dropped - before.dropped).toBe(2);
    expect(after.abandoned).toBe(before.abandoned);
    // The fault belongs to the handle: still there after the restart.
    await emu.start();
    expect(emu.state().fault).toEqual({ kind: "hang" });
    emu.setFault(null);
    expect((await postChat(emu.url, chatRequest("c"))).status).toBe(200);
  });

  it("close() after stop() resolves, and start() after close() does not revive it", async () => {
    const other = await startEmulator({ port: 0, model: TEST_MODEL, speed: 200 });
    await other.stop();
    await other.close();
    await other.start();
    expect(other.state().up).toBe(false);
    expect(await tcpConnect(other.port)).toBe("ECONNREFUSED");
  });
});
