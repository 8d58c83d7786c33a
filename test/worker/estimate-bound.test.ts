/**
 * A request whose prompt the Worker estimates far past what any engine of the pool can hold: 20,000
 * one-letter `image_url` parts, each counted IMAGE_TOKENS_ESTIMATE (765) past the key window, 15.3 M tokens
 * in all. An engine that accepts it (the emulator does; a permissive engine would) holds it for its whole
 * answer. Through the real Worker and RouterDO against real emulators: while it runs, its backend must take
 * its share of other clients' new prefixes (src/routing/prompt-bound.ts); it is itself forwarded and
 * answered, never refused on the estimate.
 */
import { describe, expect, it, vi } from "vitest";
import {
  ADMIN_TOKEN,
  authHeaders,
  backendRow,
  clearBackendFault,
  gatewayWithEnv,
  longPrompt,
  openWithEnv,
  SPARE_MODEL,
  setBackendFault,
  spareUrls,
} from "./helpers";

/** Only requests carrying it stall on the emulators (their other users are untouched). */
const MARKER = "HOLD-estimate-bound";

/**
 * The two spare emulators as a pool of this file's own. A 1,024-token key window: the huge request's keyed
 * part, all the bounded routing view keeps of it, is then prefilled in ~0.1 s at the default rate, about
 * what one family below costs, so the test needs no wait for it.
 */
function pool(): { BACKENDS: string; PREFIX_TOKENS: string } {
  const [a, b] = spareUrls();
  return {
    BACKENDS: JSON.stringify([backendRow("eb-1", a!, [SPARE_MODEL]), backendRow("eb-2", b!, [SPARE_MODEL])]),
    PREFIX_TOKENS: "1024",
  };
}

async function open(body: unknown) {
  const r = await openWithEnv(pool(), "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify(body),
  });
  expect(r.res.status).toBe(200);
  return { ...r, backend: r.res.headers.get("x-prefix-gateway-backend")! };
}

describe("a prompt estimated past every engine's KV", () => {
  it("does not keep other clients' new prefixes off its backend while it runs", async () => {
    const held: Awaited<ReturnType<typeof open>>[] = [];
    // Streams that stall after their headers: every request below stays in flight until the fault is cleared.
    for (const url of spareUrls()) await setBackendFault(url, { kind: "stall", match: MARKER });
    try {
      const images = Array.from({ length: 20_000 }, () => ({ type: "image_url", image_url: { url: "x" } }));
      const huge = await open({
        model: SPARE_MODEL,
        stream: true,
        max_tokens: 8000,
        messages: [{ role: "user", content: [{ type: "text", text: MARKER }, ...images] }],
      });
      held.push(huge);
      // 16 new families of ~2,000 tokens, each its own system prompt: placed by cost, new prefixes spread.
      for (let f = 0; f < 16; f++)
        held.push(
          await open({
            model: SPARE_MODEL,
            stream: true,
            max_tokens: 4000,
            messages: [
              { role: "system", content: `${longPrompt(`family${f}`, 400)} ${MARKER}` },
              { role: "user", content: "go on" },
            ],
          }),
        );
      const there = held.slice(1).filter((h) => h.backend === huge.backend).length;
      // Without the bound: 0 of 16 (the ledger held 15.3 M tokens there; the other backend took them all).
      expect(there).toBeGreaterThanOrEqual(5);
    } finally {
      for (const url of spareUrls()) await clearBackendFault(url);
      for (const h of held) await h.res.body?.cancel();
      for (const h of held) await h.settled();
    }
  });
});

describe("what routing counted, as the operator sees it", () => {
  /** The pool's hit totals on /admin/stats. */
  async function hits(): Promise<{ requests: number; promptTokens: number; captured: number }> {
    const res = await gatewayWithEnv(pool(), "/admin/stats", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      pools: Record<string, { hits: { requests: number; promptTokens: number; captured: number } }>;
    };
    return body.pools[SPARE_MODEL]!.hits;
  }

  /** 20,000 image parts (15.3 M estimated, 1,024 tokens keyed) asking for `maxTokens`: its status and log line. */
  async function send(maxTokens: number, spy: { mock: { calls: unknown[][] } }) {
    const images = Array.from({ length: 20_000 }, () => ({ type: "image_url", image_url: { url: "x" } }));
    const r = await openWithEnv(pool(), "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({
        model: SPARE_MODEL,
        max_tokens: maxTokens,
        messages: [{ role: "user", content: [{ type: "text", text: `count me ${maxTokens}` }, ...images] }],
      }),
    });
    const text = await r.res.text();
    await r.settled();
    const line = spy.mock.calls
      .map((args) => String(args[0]))
      .filter((l) => l.startsWith('{"msg":"request"'))
      .map((l) => JSON.parse(l) as Record<string, number | string>)
      .find((l) => l.path === "/v1/chat/completions" && l.maxTokens === maxTokens);
    return { status: r.res.status, text, line: line! };
  }

  it("/admin/stats' hit figures count a request's prompt as routing did, and the log line says both", async () => {
    const spy = vi.spyOn(console, "log");
    const before = await hits();
    const { status, text, line } = await send(200, spy);
    expect(status, text).toBe(200);
    // promptTokens: the engine's count (usage), as on every line that has one; routing's count beside it.
    expect(line.routedPromptTokens).toBe(1024);
    // 1,024 + 200 fit the largest KV (262,144): the hint is charged as sent, and the line says nothing more.
    expect(line.routedMaxTokens).toBeUndefined();
    const after = await hits();
    expect(after.requests).toBe(before.requests + 1);
    // Before: its 15.3 M estimate went into the denominator of the pool's available and captured rates
    // (their numerators, ≤ 1,024 tokens of it): one request sank them for the pool's whole life.
    expect(after.promptTokens - before.promptTokens).toBe(1024);
  });

  it("the log line says the output hint routing charged when it is past what an engine holds", async () => {
    const spy = vi.spyOn(console, "log");
    // The emulator refuses it as vLLM does (prompt + max_tokens past its 131,072 context): the gateway forwards.
    const { status, line } = await send(1_000_000, spy);
    expect(status).toBe(400);
    expect(line.routedPromptTokens).toBe(1024);
    expect(line.routedMaxTokens).toBe(262_144 - 1024);
  });
});
