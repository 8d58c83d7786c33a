/**
 * Test helper: the gateway's request log lines as the Worker writes them
 * (its RequestLog, its prompt keying, its prefixLogFields; the workerd test
 * test/worker/request-log.test.ts checks the real Worker writes the same
 * fields), wrapped in tail events as `wrangler tail --format json` prints
 * them: wrangler's logger.json is console.log(JSON.stringify(event, null, 4))
 * of the event it receives (outcome, scriptName, exceptions, logs:
 * [{message, level, timestamp}], eventTimestamp, event: {request, response}).
 */
import { prefixKeysForRequest } from "../../src/prefix/request-keys";
import { fingerprint, prefixLogFields, RequestLog } from "../../src/worker/log";

export interface GatewayLineOptions {
  readonly requestId: string;
  readonly arrivedAt: number;
  readonly model?: string;
  readonly system: string;
  readonly user: string;
  readonly tenant?: string;
  readonly maxTokens?: number;
}

/** One request log line, as the Worker emits it for a chat request that a backend answered. */
export async function gatewayLine(o: GatewayLineOptions): Promise<string> {
  const model = o.model ?? "llama-3.1-8b-instruct";
  const lines: string[] = [];
  const log = new RequestLog(o.requestId, "POST", "/v1/chat/completions", o.arrivedAt, (l) => lines.push(l));
  const body = {
    model,
    messages: [
      { role: "system" as const, content: o.system },
      { role: "user" as const, content: o.user },
    ],
  };
  const keys = prefixKeysForRequest("chat", body, {
    model,
    ...(o.tenant !== undefined ? { tenant: o.tenant } : {}),
    blockTokens: 16,
    prefixTokens: 8192,
  });
  log.set({ model, stream: true, key: "1a2b3c4d" });
  if (o.tenant !== undefined) log.set({ tenant: await fingerprint(o.tenant) });
  log.set({
    promptTokens: keys.promptTokens,
    keyedTokens: keys.keyed.tokens,
    ...prefixLogFields(keys.blocks, 16, 8192, o.maxTokens),
  });
  log.set({
    backend: "gpu-1",
    policy: "prefix_aware",
    reason: "ring",
    cachedTokensExpected: 0,
    inflightAtDecision: 0,
  });
  log.emit(o.arrivedAt + 850, { status: 200, cachedTokensReported: 0, ttftMs: 120 });
  return lines[0]!;
}

/** A tail event of one Worker invocation whose console.log calls wrote `messages`. */
export function tailEvent(
  messages: readonly string[],
  at: number,
  path = "/v1/chat/completions",
): Record<string, unknown> {
  return {
    outcome: "ok",
    scriptName: "prefix-gateway",
    diagnosticsChannelEvents: [],
    exceptions: [],
    logs: messages.map((m, i) => ({ message: [m], level: "log", timestamp: at + 850 + i })),
    eventTimestamp: at,
    event: {
      request: {
        url: `https://prefix-gateway.example.workers.dev${path}`,
        method: "POST",
        headers: { "content-type": "application/json" },
        cf: { colo: "AMS" },
      },
      response: { status: 200 },
    },
    id: 0,
  };
}

/** What `wrangler tail --format json` prints for an event. */
export function wranglerJson(event: object): string {
  return JSON.stringify(event, null, 4);
}
