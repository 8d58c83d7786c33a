/**
 * An OpenAI-compatible inference server around one EngineModel, in real
 * (optionally accelerated) time: what a vLLM replica looks like from the
 * gateway — same endpoints, SSE shape, usage with cached_tokens, errors and
 * /metrics names — with the model's timing instead of a GPU.
 *
 *   POST /v1/chat/completions   POST /v1/completions   GET /v1/models
 *   GET /health                 GET /metrics (Prometheus, vLLM names)
 *
 * It can be told to misbehave, for the gateway's failure tests: a fault
 * (fault-spec.ts: status, hang, stall, cut, reset; on every inference
 * request or only on prompts containing a marker; with a seeded probability)
 * and a /health override, set through the handle (`setFault`, `setHealth`)
 * or, with `control: true`, over HTTP (control.ts: /_control/fault,
 * /_control/health, /_control/down). `stop()` kills the emulated process
 * (listener closed, every connection destroyed: new ones are refused) and
 * `start()` restarts it on the same port with a fresh engine; faults and
 * stats (`state()`) belong to the handle and survive both.
 *
 * `startEmulator` runs it in-process (tests, benches); main.ts is the CLI.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { servedModelLen } from "../../sim/model/engine-config";
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/presets";
import type { EngineConfig, EngineMetrics } from "../../sim/model/types";
import { type CompletionContext, runCompletion, type ServerTiming } from "./completion";
import { CONTROL_PREFIX, type ControlTarget, handleControl } from "./control";
import { EngineDriver } from "./engine-driver";
import {
  type ControlState,
  type FaultSpec,
  type HealthOverride,
  type Parsed,
  parseFaultSpec,
  parseHealthOverride,
} from "./fault-spec";
import { FaultInjector } from "./faults";
import { HttpError } from "./http-error";
import { readBody, send } from "./http-io";
import { renderMetrics } from "./metrics-text";
import { parseChatPrompt, parseCommon, parseCompletionPrompt, parseJsonBody } from "./openai-request";
import { warmTokenizer } from "./prompt-tokens";

export interface EmulatorOptions {
  /** 0 picks a free port (kept across stop/start). */
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
  /** Serves the HTTP control endpoint (/_control/*, control.ts). Default false: those paths are 404. */
  readonly control?: boolean;
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
  /** Sets the fault (validated: a bad spec throws a RangeError naming the field), or clears it with null. */
  setFault(spec: FaultSpec | null): void;
  /** Makes /health answer `status` (default 503) whatever the fault; null makes it itself again. */
  setHealth(override: HealthOverride | null): void;
  /** The fault, the /health override, whether the process is up, and the counts of what happened. */
  state(): ControlState;
  /** Kills the emulated process: the listener closes and every open connection is destroyed. */
  stop(): Promise<void>;
  /** Restarts a stopped emulator on the same port with a fresh engine (empty cache, nothing running). */
  start(): Promise<void>;
}

/** Recorded server TTFTs kept (oldest dropped first): a bench arm's worth and then some. */
const MAX_TIMINGS = 200_000;

/**
 * A request's timing under the id the gateway forwards: it makes a client's
 * own x-request-id unique with a suffix (`<id>-<hex>`, src/worker/inference/
 * upstream-request-id.ts), so an exact lookup of the client's id misses it.
 */
function madeUniqueTtft(timings: ReadonlyMap<string, number>, clientId: string): number | undefined {
  const prefix = `${clientId}-`;
  for (const [id, ms] of timings)
    if (id.startsWith(prefix) && /^[0-9a-f]+$/.test(id.slice(prefix.length))) return ms;
  return undefined;
}

function renderError(res: ServerResponse, err: unknown): void {
  const e =
    err instanceof HttpError
      ? err
      : new HttpError(500, err instanceof Error ? err.message : String(err), "internal_server_error");
  if (res.headersSent) res.destroy();
  else send(res, e.status, e.body());
}

/** The value of a validation, or a RangeError with its message (the in-process twin of the control endpoint's 400). */
function validated<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new RangeError(parsed.message);
  return parsed.value;
}

export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  const config: EngineConfig = { ...DEFAULT_ENGINE_CONFIG, ...opts.engine };
  const speed = opts.speed ?? 1;
  // Before the engine clock starts: the first request must not pay for it.
  warmTokenizer();
  const faults = new FaultInjector();
  let seq = 0;
  /** The emulated process's state: a fresh engine on every start. */
  const boot = (): { driver: EngineDriver; finished: Map<string, number>; ctx: CompletionContext } => {
    const driver = new EngineDriver(config, speed);
    const finished = new Map<string, number>();
    const ctx: CompletionContext = {
      driver,
      blockTokens: config.blockTokens,
      countFinished: (reason) => finished.set(reason, (finished.get(reason) ?? 0) + 1),
      nextId: () => `${Date.now().toString(36)}${(seq++).toString(36)}`,
    };
    return { driver, finished, ctx };
  };
  let proc = boot();

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

  const serveCompletion = (
    raw: string,
    chat: boolean,
    req: IncomingMessage,
    res: ServerResponse,
    receivedAt: number,
  ): void => {
    const body = parseJsonBody(raw);
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
    runCompletion(proc.ctx, chat, params, input, req, res, timingFor(req, receivedAt));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, receivedAt: number): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    if (opts.control === true && path.startsWith(CONTROL_PREFIX))
      return handleControl(req, res, method, path, controls);
    if (method === "GET" && path === "/health") return faults.probe(res);
    if (method === "GET" && path === "/metrics") {
      faults.scraped();
      return send(
        res,
        200,
        renderMetrics(opts.model, proc.driver.metrics(), { finished: proc.finished }),
        "text/plain; version=0.0.4",
      );
    }
    const chat = path === "/v1/chat/completions";
    const inference = method === "POST" && (chat || path === "/v1/completions");
    if (inference) faults.request(res);
    if (path.startsWith("/v1/")) authorize(req);
    if (method === "GET" && path === "/v1/models") {
      const card = {
        id: opts.model,
        object: "model",
        created: Math.floor(Date.now() / 1000),
        owned_by: "prefix-gateway-emulator",
        max_model_len: servedModelLen(config),
      };
      return send(res, 200, JSON.stringify({ object: "list", data: [card] }));
    }
    if (inference) {
      const raw = await readBody(req);
      const serve = (): void => serveCompletion(raw, chat, req, res, receivedAt);
      const release = (): void => {
        try {
          serve();
        } catch (err) {
          renderError(res, err);
        }
      };
      if (!faults.take(raw, chat, res, release)) serve();
      return;
    }
    throw new HttpError(404, `No route for ${method} ${path}.`, "invalid_request_error", null, "not_found");
  };

  const server = createServer((req, res) => {
    handle(req, res, performance.now()).catch((err: unknown) => renderError(res, err));
  });
  // Streams can be long: no socket timeouts from Node's defaults.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });

  const host = opts.host ?? "127.0.0.1";
  let port = opts.port;
  let up = false;
  let closed = false;
  let downTimer: NodeJS.Timeout | undefined;

  const listen = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });

  const stop = async (): Promise<void> => {
    if (!up) return;
    up = false;
    faults.stopped();
    proc.driver.close();
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    const gone = [...sockets].map(
      (s) => new Promise<void>((resolve) => s.destroy().once("close", () => resolve())),
    );
    await Promise.all([done, ...gone]);
    // The responses' own "close" events follow their sockets' on a later tick: let them settle the counts.
    await new Promise<void>((resolve) => setImmediate(resolve));
  };

  const start = async (): Promise<void> => {
    if (up || closed) return;
    proc = boot();
    await listen();
    if (closed) {
      // close() came while we were binding: stay dead.
      proc.driver.close();
      server.close();
      return;
    }
    up = true;
    faults.restarted();
  };

  const controls: ControlTarget = {
    state: (): ControlState => ({ fault: faults.fault, health: faults.health, up, stats: faults.stats() }),
    setFault: (spec: FaultSpec | null): void => faults.setFault(spec),
    setHealth: (o: HealthOverride | null): void => faults.setHealth(o),
    downFor: (ms: number): void => {
      clearTimeout(downTimer);
      void stop().then(() => {
        if (closed) return;
        downTimer = setTimeout(() => {
          downTimer = undefined;
          start().catch((err: unknown) =>
            process.stderr.write(`emulator: restart on port ${port} failed: ${String(err)}\n`),
          );
        }, ms);
      });
    },
  };

  await listen();
  up = true;
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    metrics: () => proc.driver.metrics(),
    serverTtftMs: (requestId) => serverTtft.get(requestId) ?? madeUniqueTtft(serverTtft, requestId),
    setFault: (spec) => controls.setFault(spec === null ? null : validated(parseFaultSpec(spec))),
    setHealth: (o) => controls.setHealth(o === null ? null : validated(parseHealthOverride(o))),
    state: controls.state,
    stop,
    start,
    close: async () => {
      closed = true;
      clearTimeout(downTimer);
      await stop();
    },
  };
}
