/**
 * The operator's loop on a live gateway, shared by the test that proves it
 * (test/node/operator-loop.test.ts) and the script that keeps the dashboard
 * screenshot (bench/dashboard-screenshot.ts): four emulators behind the
 * gateway in workerd, a 50/50 A/B split of prefix_aware against
 * least_outstanding with the shadow on, and a multi-turn chat workload.
 *
 * The workload: conversations about a document each (a long first user
 * message, unique per conversation) after one shared system prompt, each
 * turn resending the whole history plus a short new question, several
 * conversations at once. A conversation keeps its arm (its first user
 * message is its arm key), so the prefix_aware arm and the shadow see every
 * turn of the conversations they decide. prefix_aware keeps a conversation
 * on one backend and reuses all but the new turn; least_outstanding spreads
 * the turns and pays the document's prefill again on every backend a
 * conversation reaches for the first time.
 */
import { startEmulator } from "../emulator/server";
import { bundleWorker, type Gateway, startGateway, type WorkerBundle } from "./gateway";
import { type RequestResult, streamRequest } from "./stream-client";

export const LOOP_MODEL = "operator-model";
export const LOOP_ADMIN_TOKEN = "operator-admin-token-0123456789";
const EMU_KEY = "operator-emulator-key";
const GW_KEY = "operator-gateway-key";

/** Each backend's KV cache, tokens (the emulator's default: Llama-3.1-8B on an H100). */
export const KV_TOKENS = 442_368;

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export interface OperatorRig {
  readonly gateway: Gateway;
  readonly adminToken: string;
  close(): Promise<void>;
}

/** Four emulators (real time) and the gateway in front of them with the split and the shadow on. */
export async function startOperatorRig(vars: Readonly<Record<string, string>> = {}): Promise<OperatorRig> {
  const emulators: Emulator[] = [];
  let bundle: WorkerBundle | undefined;
  try {
    for (let i = 0; i < 4; i++)
      emulators.push(
        await startEmulator({
          port: 0,
          host: "127.0.0.1",
          model: LOOP_MODEL,
          apiKey: EMU_KEY,
          engine: { kvCacheTokens: KV_TOKENS },
        }),
      );
    bundle = await bundleWorker();
    const gateway = await startGateway({
      configPath: bundle.configPath,
      backends: emulators.map((e, i) => ({
        id: `gpu-${i + 1}`,
        url: e.url,
        models: [LOOP_MODEL],
        apiKey: EMU_KEY,
        weight: 1,
        kvCacheTokens: KV_TOKENS,
      })),
      policy: "prefix_aware",
      apiKey: GW_KEY,
      adminToken: LOOP_ADMIN_TOKEN,
      vars: { AB_POLICY: "least_outstanding", AB_PERCENT: "50", SHADOW: "on", ...vars },
      readyTimeoutMs: 60_000,
    });
    const b = bundle;
    return {
      gateway,
      adminToken: LOOP_ADMIN_TOKEN,
      close: async () => {
        await gateway.close();
        await Promise.allSettled([...emulators.map((e) => e.close()), b.dispose()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([...emulators.map((e) => e.close()), bundle?.dispose()]);
    throw err;
  }
}

/** Deterministic filler text of `words` words (~4 tokens each), different per seed. */
function words(seed: string, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`${seed}${(i * 7919 + seed.length * 131) % 10007}`);
  return out.join(" ");
}

/** Words of the document a conversation starts with (~3 tokens each): its prefill dominates a miss. */
const DOCUMENT_WORDS = 800;

const SYSTEM = `You are the support assistant of a harbour authority. ${words("sys", 80)}`;

export interface WorkloadOptions {
  readonly conversations: number;
  readonly turns: number;
  /** Conversations in flight at once. */
  readonly concurrency: number;
  /** Distinguishes runs against one gateway (new conversations). */
  readonly tag?: string;
  /** Stop early (the dashboard's background traffic). */
  readonly signal?: AbortSignal;
}

/** Runs the conversations, turn by turn, `concurrency` at a time; every request's result, in order of completion. */
export async function runConversations(gateway: Gateway, o: WorkloadOptions): Promise<RequestResult[]> {
  const results: RequestResult[] = [];
  let next = 0;
  const conversation = async (c: number) => {
    const messages: { role: string; content: string }[] = [{ role: "system", content: SYSTEM }];
    for (let t = 0; t < o.turns && o.signal?.aborted !== true; t++) {
      const doc = t === 0 ? ` About this document: ${words(`${o.tag ?? ""}d${c}`, DOCUMENT_WORDS)}` : "";
      messages.push({
        role: "user",
        content: `Conversation ${o.tag ?? ""}${c}, question ${t}: ${words(`q${c}t${t}`, 20)}${doc}`,
      });
      const r = await streamRequest({
        url: `${gateway.url}/v1/chat/completions`,
        apiKey: gateway.apiKey,
        body: JSON.stringify({
          model: LOOP_MODEL,
          stream: true,
          max_tokens: 12,
          stream_options: { include_usage: true },
          messages,
        }),
        timeoutMs: 30_000,
      });
      results.push(r);
      messages.push({ role: "assistant", content: words(`a${c}t${t}`, 20) });
    }
  };
  const worker = async () => {
    while (next < o.conversations && o.signal?.aborted !== true) await conversation(next++);
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, o.conversations) }, worker));
  return results;
}

/** GET an admin path with the token. */
export async function adminGet(rig: OperatorRig, path: string): Promise<Response> {
  return fetch(`${rig.gateway.url}${path}`, { headers: { authorization: `Bearer ${rig.adminToken}` } });
}

/** Waits until no request is in flight on any backend (completion reports run after the response). */
export async function settled(rig: OperatorRig, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = (await (await adminGet(rig, "/admin/stats")).json()) as {
      pools: Record<string, { ok: boolean; backends?: { inflight: number }[] }>;
    };
    const busy = Object.values(s.pools).some((p) => p.ok && (p.backends ?? []).some((b) => b.inflight > 0));
    if (!busy) return;
    if (Date.now() > until) throw new Error("requests still in flight");
    await new Promise((r) => setTimeout(r, 50));
  }
}
