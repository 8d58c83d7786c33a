/**
 * One hosted API listed twice with two apiKeys (two accounts, two rate limits) is a valid config
 * (src/worker/config-servers.ts): each entry is its own backend by id everywhere, sent its own key, drained on
 * its own, and named apart in /metrics, /admin/backends and the request log. The fake backend's /echo-auth
 * answers with the authorization header it was sent.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, authHeaders, faultServerUrl, gatewayWithEnv } from "./helpers";

const MODEL = "two-accounts";
const KEYS = { "acct-1": "provider-account-one-key", "acct-2": "provider-account-two-key" } as const;
type Account = keyof typeof KEYS;

/** The two accounts on one url: the same address, the same model, two keys. */
function accountsEnv(): { BACKENDS: string } {
  const url = `${faultServerUrl()}/echo-auth`;
  return {
    BACKENDS: JSON.stringify(
      (Object.keys(KEYS) as Account[]).map((id) => ({
        id,
        url,
        models: [MODEL],
        apiKey: KEYS[id],
        weight: 1,
        kvCacheTokens: 65536,
      })),
    ),
  };
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const post = (path: string) => gatewayWithEnv(accountsEnv(), path, { method: "POST", headers: admin });

/** One request: the backend that answered, the key it was sent, and the request's log line. */
async function ask(i: number): Promise<{ backend: string | null; sent: string; line: { backend?: string } }> {
  const spy = vi.spyOn(console, "log");
  const res = await gatewayWithEnv(accountsEnv(), "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: `q${i}` }] }),
  });
  expect(res.status).toBe(200);
  let sent = "";
  for (const event of (await res.text()).split("\n\n")) {
    if (!event.startsWith("data: {")) continue;
    const chunk = JSON.parse(event.slice(6)) as { choices: { delta?: { content?: string } }[] };
    sent += chunk.choices[0]?.delta?.content ?? "";
  }
  const lines = spy.mock.calls.map((a) => String(a[0])).filter((l) => l.startsWith('{"msg":"request"'));
  spy.mockRestore();
  expect(lines).toHaveLength(1);
  return { backend: res.headers.get("x-prefix-gateway-backend"), sent, line: JSON.parse(lines[0]!) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("one hosted API under two accounts", () => {
  it("is two backends: each sent its own key, drained alone, and named apart in /metrics, /admin/backends and the log", async () => {
    for (const [drained, serving] of [
      ["acct-1", "acct-2"],
      ["acct-2", "acct-1"],
    ] as const) {
      expect((await post(`/admin/backends/${drained}/drain`)).status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const r = await ask(i);
        expect(r.backend).toBe(serving);
        expect(r.sent).toBe(`Bearer ${KEYS[serving]}`);
        expect(r.line.backend).toBe(serving);
      }
      const list = await gatewayWithEnv(accountsEnv(), "/admin/backends", { headers: admin });
      const body = (await list.json()) as {
        backends: { id: string; pools: Record<string, { drained: boolean } | null> }[];
      };
      const drainedOf = Object.fromEntries(body.backends.map((b) => [b.id, b.pools[MODEL]?.drained]));
      expect(drainedOf).toEqual({ [drained]: true, [serving]: false });
      const metrics = await (await gatewayWithEnv(accountsEnv(), "/metrics", { headers: admin })).text();
      for (const [id, value] of [
        [drained, 1],
        [serving, 0],
      ] as const)
        expect(metrics).toContain(
          `prefix_gateway_backend_drained{model="${MODEL}",backend="${id}"} ${value}`,
        );
      expect((await post(`/admin/backends/${drained}/undrain`)).status).toBe(200);
    }
  });
});
