/**
 * One bounded check of a backend's `GET /v1/models` (the RouterDO's backend
 * check, BACKEND_CHECK_SECONDS): is it reachable, what HTTP status does it
 * answer, and does its list hold the model the pool serves? A backend url
 * with a path prefix the server does not serve (`http://gpu-1:8000/vllm`),
 * or a server started with another model name than BACKENDS says, gives
 * every request its 404, relayed to the client by design (a 404 can be the
 * model's own answer); this tells the operator first.
 *
 * All four engines the README names serve an OpenAI model list
 * (`{"object": "list", "data": [{"id": ...}]}`): vLLM lists its served
 * model names (and LoRA adapters), SGLang its served model name,
 * trtllm-serve its model, llama.cpp's llama-server the alias or else the
 * model file's path. How lenient the match is:
 * - exact, case and all: vLLM and SGLang refuse a request whose `model` is
 *   not one of their names exactly (vLLM: 404 "The model `x` does not
 *   exist."), so a near miss (case, an org/ prefix, a .gguf suffix) is what
 *   the check exists to report, never to excuse;
 * - an entry's `aliases` count (llama-server's router mode lists them, and
 *   answers to them);
 * - one entry owned by `llamacpp` without a router `status` is llama-server
 *   with one model, which answers whatever model a request names: `any`,
 *   not a problem, whatever its id (often a file path).
 * Bounds: the whole exchange within `deadlineMs`, at most `maxBytes` of body
 * (a model list is a few hundred bytes; a longer body is a page, not a list).
 * Never throws. Sends the backend's apiKey as requests do; never follows a
 * redirect (the key would go where BACKENDS did not say).
 */
import {
  backendAuthorization,
  fetchFailure,
  isRedirect,
  refusesCredentials,
  rejectsOnAbort,
} from "../backend-http";

/**
 * `ok`: answered 200 with a model list holding the pool's model (or accepting any, or no model to look for).
 * `unreachable`: no answer within the deadline (refused, reset, timed out). `bad_status`: an answer other than
 * 200 (`status` says which). `unreadable`: a 200 that is not an OpenAI model list (a login page, too long).
 * `model_not_listed`: a list without the pool's model.
 */
export type CheckState = "ok" | "unreachable" | "bad_status" | "unreadable" | "model_not_listed";

/** Does the backend's list hold the pool's model: by id or alias, `any` name (llama-server, one model), or not. */
export type ModelVerdict = "listed" | "any" | "absent";

export interface BackendCheck {
  readonly state: CheckState;
  /** Epoch ms the check ended. */
  readonly at: number;
  /** An HTTP answer came (any status). */
  readonly reachable: boolean;
  /** The answer's HTTP status, when one came. */
  readonly status?: number;
  /** Whether the list holds the pool's model; absent when no list was read or no model was looked for. */
  readonly model?: ModelVerdict;
  /** When the model is absent: the ids the backend lists (the first LISTED_SHOWN, each cut to LISTED_ID_CHARS). */
  readonly listed?: readonly string[];
  /** What went wrong and where to look, in words; never a URL. */
  readonly detail?: string;
}

export interface ModelsCheckOptions {
  /** The whole exchange must end within this, ms. */
  readonly deadlineMs: number;
  /** Body bytes read at most. */
  readonly maxBytes: number;
  /** The backend's BACKENDS apiKey, sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** The fetch to use (the runtime's by default). */
  readonly fetch?: typeof fetch;
  /** Epoch ms, for `at`. */
  readonly clock?: () => number;
}

export const LISTED_SHOWN = 8;
export const LISTED_ID_CHARS = 100;

/** GETs `${url}/v1/models` and judges the answer against `model` (undefined: only reachability and shape). */
export async function checkBackendModels(
  url: string,
  model: string | undefined,
  o: ModelsCheckOptions,
): Promise<BackendCheck> {
  const clock = o.clock ?? Date.now;
  const signal = AbortSignal.timeout(o.deadlineMs);
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(`${url}/v1/models`, {
      signal,
      redirect: "manual",
      headers: { accept: "application/json", ...backendAuthorization(o.apiKey) },
    });
  } catch (e) {
    return {
      state: "unreachable",
      at: clock(),
      reachable: false,
      detail: fetchFailure(e, signal, "connect"),
    };
  }
  const status = res.status;
  if (status !== 200) {
    await res.body?.cancel().catch(() => {});
    return { state: "bad_status", at: clock(), reachable: true, status, detail: statusHint(status) };
  }
  const body = await readCapped(res, o.maxBytes, signal);
  if (!body.ok) return { state: "unreadable", at: clock(), reachable: true, status, detail: body.reason };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch {
    return {
      state: "unreadable",
      at: clock(),
      reachable: true,
      status,
      detail: "not JSON (a page in front of the server?)",
    };
  }
  const list = modelList(parsed);
  if (list === undefined)
    return {
      state: "unreadable",
      at: clock(),
      reachable: true,
      status,
      detail: 'not an OpenAI model list ({"data": [{"id": ...}]})',
    };
  if (model === undefined) return { state: "ok", at: clock(), reachable: true, status };
  const verdict = modelVerdict(list, model);
  if (verdict !== "absent") return { state: "ok", at: clock(), reachable: true, status, model: verdict };
  return {
    state: "model_not_listed",
    at: clock(),
    reachable: true,
    status,
    model: verdict,
    listed: list.slice(0, LISTED_SHOWN).map((e) => e.id.slice(0, LISTED_ID_CHARS)),
    detail: `the backend does not list "${model.slice(0, LISTED_ID_CHARS)}": requests naming it may get its 404 (the name must match exactly: check the server's --served-model-name or alias, or BACKENDS models)`,
  };
}

/** One entry of an OpenAI model list, as far as the check reads it. */
export interface ModelEntry {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly ownedBy?: string;
  /** llama-server's router mode gives each entry a status; one model alone has none. */
  readonly routerStatus: boolean;
}

/** The entries of an OpenAI model list (entries without a string id are skipped); undefined: not such a list. */
export function modelList(body: unknown): ModelEntry[] | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data)) return undefined;
  const out: ModelEntry[] = [];
  for (const e of data) {
    if (typeof e !== "object" || e === null) continue;
    const r = e as { id?: unknown; aliases?: unknown; owned_by?: unknown; status?: unknown };
    if (typeof r.id !== "string") continue;
    out.push({
      id: r.id,
      aliases: Array.isArray(r.aliases) ? r.aliases.filter((a): a is string => typeof a === "string") : [],
      ...(typeof r.owned_by === "string" ? { ownedBy: r.owned_by } : {}),
      routerStatus: r.status !== undefined,
    });
  }
  return out;
}

/** Exact id or alias: listed; llama-server with one model (it answers any name): any; otherwise absent. */
export function modelVerdict(list: readonly ModelEntry[], model: string): ModelVerdict {
  if (list.some((e) => e.id === model || e.aliases.includes(model))) return "listed";
  const only = list.length === 1 ? list[0]! : undefined;
  if (only !== undefined && only.ownedBy === "llamacpp" && !only.routerStatus) return "any";
  return "absent";
}

function statusHint(status: number): string {
  if (refusesCredentials(status))
    return `${status}: the backend refused the gateway's credentials (this backend's apiKey in BACKENDS)`;
  if (isRedirect(status))
    return `${status}: a redirect (not followed): the url is not the server's own address`;
  if (status === 404)
    return "404: no /v1/models at this url: does the server serve the url's path (a prefix such as /vllm)?";
  return `HTTP ${status}`;
}

type Read = { ok: true; text: string } | { ok: false; reason: string };

/** The body as text, at most `maxBytes`, within the signal's deadline. */
async function readCapped(res: Response, maxBytes: number, signal: AbortSignal): Promise<Read> {
  if (res.body === null) return { ok: true, text: "" };
  const reader = res.body.getReader();
  const aborted = rejectsOnAbort(signal);
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      bytes += value.byteLength;
      if (bytes > maxBytes) {
        await reader.cancel().catch(() => {});
        return { ok: false, reason: `longer than ${maxBytes} bytes (a model list is a few hundred)` };
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    return { ok: false, reason: fetchFailure(e, signal, "body") };
  }
  return { ok: true, text: text + decoder.decode() };
}
