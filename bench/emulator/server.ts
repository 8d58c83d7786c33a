/**
 * An OpenAI-compatible inference server around one EngineModel, in real
 * (optionally accelerated) time: what a vLLM replica looks like from the
 * gateway — same endpoints, SSE shape, usage with cached_tokens, errors and
 * /metrics names — with the model's timing instead of a GPU.
 *
 *   POST /v1/chat/completions   POST /v1/completions   GET /v1/models
 *   GET /health                 GET /metrics (Prometheus, vLLM names)
 *
 * `startEmulator` runs it in-process (tests, benches); main.ts is the CLI.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_ENGINE_CONFIG } from "../model/presets";
import type { EngineConfig, EngineMetrics } from "../model/types";
import { type CompletionContext, runCompletion, type ServerTiming } from "./completion";
import { EngineDriver } from "./engine-driver";
import { HttpError } from "./http-error";
import { renderMetrics } from "./metrics-text";
import { parseChatPrompt, parseCommon, parseCompletionPrompt, parseJsonBody } from "./openai-request";
import { warmTokenizer } from "./prompt-tokens";

export interface EmulatorOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** The one model this replica serves. */
  readonly model: string;
  /** When set, /v1/* requires `Authorization: Bearer <apiKey>`; otherwise any key is accepted. */
  readonly apiKey?: string;
  /** Model time runs this many times faster than real time. Default 1. */
  readonly speed?: number;
  /** Overrides of DEFAULT_ENGINE_CONFIG (Llama-3.1-8B on one H100 under vLLM). */
  readonly engine?: Partial<EngineConfig>;
}

export interface Emulator {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
  metrics(): EngineMetrics;
  /**
   * ms from a streamed request's arrival to its first content chunk, by the
   * request's x-request-id (requests without one are not recorded). The
   * e2e bench subtracts it from the client's TTFT: what remains is the time
   * spent outside the backend (network, client, gateway).
   */
  serverTtftMs(requestId: string): number | undefined;
}

/** Recorded server TTFTs kept (oldest dropped first): a bench arm's worth and then some. */
const MAX_TIMINGS = 200_000;

/** Request bodies above this are refused (a 1M-token prompt is ~4 MB of text). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: string, type = "application/json"): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, "Request body too large.", "invalid_request_error"));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  const config: EngineConfig = { ...DEFAULT_ENGINE_CONFIG, ...opts.engine };
  // Before the engine clock starts: the first request must not pay for it.
  warmTokenizer();
  const driver = new EngineDriver(config, opts.speed ?? 1);
  const finished = new Map<string, number>();
  let seq = 0;
  const ctx: CompletionContext = {
    driver,
    blockTokens: config.blockTokens,
    countFinished: (reason) => finished.set(reason, (finished.get(reason) ?? 0) + 1),
    nextId: () => `${Date.now().toString(36)}${(seq++).toString(36)}`,
  };

  const authorize = (req: IncomingMessage): void => {
    if (opts.apiKey === undefined) return;
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`)
      throw new HttpError(
        401,
        "Invalid or missing API key.",
        "authentication_error",
        null,
        "invalid_api_key",
      );
  };

  const serverTtft = new Map<string, number>();
  const timingFor = (req: IncomingMessage, receivedAt: number): ServerTiming | undefined => {
    const id = req.headers["x-request-id"];
    if (typeof id !== "string") return undefined;
    return {
      receivedAt,
      firstContent: (ms) => {
        if (serverTtft.size >= MAX_TIMINGS) serverTtft.delete(serverTtft.keys().next().value as string);
        serverTtft.set(id, ms);
      },
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, receivedAt: number): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0];
    const method = req.method ?? "GET";
    if (method === "GET" && path === "/health") return send(res, 200, "", "text/plain");
    if (method === "GET" && path === "/metrics")
      return send(
        res,
        200,
        renderMetrics(opts.model, driver.metrics(), { finished }),
        "text/plain; version=0.0.4",
      );
    if (path?.startsWith("/v1/")) authorize(req);
    if (method === "GET" && path === "/v1/models") {
      const card = {
        id: opts.model,
        object: "model",
        created: Math.floor(Date.now() / 1000),
        owned_by: "prefix-gateway-emulator",
        max_model_len: Math.floor(config.kvCacheTokens / config.blockTokens) * config.blockTokens,
      };
      return send(res, 200, JSON.stringify({ object: "list", data: [card] }));
    }
    const chat = path === "/v1/chat/completions";
    if (method === "POST" && (chat || path === "/v1/completions")) {
      const body = parseJsonBody(await readBody(req));
      const params = parseCommon(body);
      if (params.model !== opts.model)
        throw new HttpError(
          404,
          `The model \`${params.model}\` does not exist.`,
          "invalid_request_error",
          "model",
          "model_not_found",
        );
      const input = chat ? parseChatPrompt(body) : parseCompletionPrompt(body);
      runCompletion(ctx, chat, params, input, req, res, timingFor(req, receivedAt));
      return;
    }
    throw new HttpError(404, `No route for ${method} ${path}.`, "invalid_request_error", null, "not_found");
  };

  const server = createServer((req, res) => {
    handle(req, res, performance.now()).catch((err: unknown) => {
      const e =
        err instanceof HttpError
          ? err
          : new HttpError(500, err instanceof Error ? err.message : String(err), "internal_server_error");
      if (res.headersSent) res.destroy();
      else send(res, e.status, e.body());
    });
  });
  // Streams can be long: no socket timeouts from Node's defaults.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;

  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    metrics: () => driver.metrics(),
    serverTtftMs: (requestId) => serverTtft.get(requestId),
    close: () =>
      new Promise<void>((resolve) => {
        driver.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
