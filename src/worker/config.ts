/**
 * Secrets and vars → one validated, typed config. Validated with zod at the
 * edge; every problem is reported with the field it concerns
 * (`BACKENDS[2].url: must be http(s)`), never as a stack trace. The result
 * is cached per isolate keyed by the raw strings, so a rotated secret takes
 * effect on the very next request without a redeploy.
 */
import { z } from "zod";
import {
  AB_STICKY_MODES,
  BACKEND_CHECK_MIN_SECONDS,
  DEFAULT_AB_POLICY,
  DEFAULT_AB_STICKY,
  DEFAULT_CORS_ALLOW_ORIGINS,
  DEFAULT_KEY_RATE_LIMIT,
  DEFAULT_POLICY,
  DEFAULT_PREFIX_SCOPE,
  DEFAULT_ROUTER_CELLS,
  DEFAULT_ROUTER_LOCATION_HINT,
  DEFAULT_SHADOW,
  ENGINE_SCRAPE_MIN_MS,
  LOCATION_HINTS,
  type LocationHint,
  PREFIX_SCOPES,
  ROUTER_CELLS_MAX,
  SETTINGS,
  type SettingName,
} from "../routing/defaults";
import { POLICY_NAMES } from "../routing/types";
import { misspeltVars } from "./config-names";
import { sameServerTwice } from "./config-servers";
import { type CorsOrigins, parseCorsOrigins } from "./cors/cors-origins";
import { quoteClient } from "./errors";
import { EXAMPLE_ADMIN_TOKEN, EXAMPLE_GATEWAY_KEY, isLoopbackUrl } from "./example-secrets";
import { type KeyEntry, keyIdOf, listedKeys, parseKeyEntries } from "./gateway-keys";
import { MAX_MODEL_CHARS } from "./request/request-limits";
import type { RouterSettings } from "./router/router-rpc";
import { sha256, sha256Hex } from "./sha256";

/**
 * A numeric var, validated against its entry in SETTINGS (the one home of defaults and bounds). Only plain
 * decimal digits are read (a point too where the setting is not an integer): JavaScript's Number() also
 * takes "" and blanks (as 0), hex, octal and binary ("0x10" as 16) and exponents ("1e3"), so a var emptied
 * by mistake read as 0 and was refused with a bound it never stated ("must be >= 1"), and a hex figure
 * passed as another number. An empty var is named as empty: unset, a var takes its default.
 */
function numericVar(name: SettingName) {
  const s = SETTINGS[name];
  const form = s.integer ? /^\d+$/ : /^(\d+(\.\d*)?|\.\d+)$/;
  const what = s.integer ? `an integer (${s.unit})` : `a number (${s.unit})`;
  return z
    .string()
    .trim()
    .transform((text, ctx) => {
      if (text === "") {
        ctx.addIssue({
          code: "custom",
          message: `is empty: remove it for the default (${s.default}), or give ${what}`,
        });
        return z.NEVER;
      }
      if (!form.test(text)) {
        ctx.addIssue({
          code: "custom",
          message: `must be ${what} in decimal digits${s.integer ? "" : " (a point allowed)"}, no sign, hex or exponent`,
        });
        return z.NEVER;
      }
      return Number(text);
    })
    .pipe(
      z
        .number({ error: `must be ${what}` })
        .min(s.min, `must be >= ${s.min}`)
        .max(s.max, `must be <= ${s.max}`),
    )
    .default(s.default);
}

const isPlainObject = (x: unknown): boolean => typeof x === "object" && x !== null && !Array.isArray(x);

/** A backend entry's fields: anything else in one is refused by name (unknownBackendFields). */
const BACKEND_FIELDS = [
  "id",
  "url",
  "models",
  "apiKey",
  "weight",
  "kvCacheTokens",
  "maxInflight",
  "cacheSalt",
] as const;

/**
 * The message for fields a backend entry does not have. Dropped silently, a misspelt `apikey` or `api_key`
 * left the backend without its key: every request routed there came back a 401 that the client took for
 * its own key's, and a misspelt `weight` quietly became 1. A field that differs from a real one only in
 * case, `_` or `-` is named as the likely meaning. Only names are said (cut to 40 characters), never values.
 */
function unknownBackendFields(keys: readonly PropertyKey[]): string {
  const fold = (k: string) => k.toLowerCase().replace(/[_-]/g, "");
  return keys
    .map((key) => {
      const k = String(key).slice(0, 40);
      const meant = BACKEND_FIELDS.find((f) => fold(f) === fold(k));
      return meant !== undefined
        ? `unknown field "${k}" (did you mean "${meant}"?)`
        : `unknown field "${k}" (a backend has ${BACKEND_FIELDS.join(", ")})`;
    })
    .join("; ");
}

/**
 * zod's own message for a field left out or of the wrong JSON type ("Invalid input: expected number,
 * received undefined") names neither what the field is for nor what to write there. A backend entry's
 * required fields say both when missing, and their type when mistyped; values are never echoed.
 */
function fieldError(missing: string, type: string) {
  return (iss: { input?: unknown }) =>
    iss.input === undefined ? `is missing: ${missing}` : `must be ${type}`;
}

const backendSchema = z.strictObject(
  {
    id: z
      .string({ error: fieldError('a name for this backend, e.g. "gpu-1"', 'a string, e.g. "gpu-1"') })
      .min(1, "must be a non-empty string")
      .max(64, "must be at most 64 characters")
      .regex(/^[A-Za-z0-9._:-]+$/, "must use only letters, digits and . _ : -"),
    url: z
      .string({
        error: fieldError(
          'the server\'s base URL, e.g. "http://10.0.0.1:8000"',
          'a string, e.g. "http://10.0.0.1:8000"',
        ),
      })
      .refine((s) => {
        try {
          const u = new URL(s);
          return (
            (u.protocol === "http:" || u.protocol === "https:") && u.username === "" && u.password === ""
          );
        } catch {
          return false;
        }
      }, "must be http(s) without credentials")
      // The gateway appends /v1/... to the url as a string: a query or fragment (even an empty `?`) would
      // swallow that path, and a url ending in /v1 (the OpenAI SDKs' base_url habit) would send every request
      // to /v1/v1/..., whose 404 is relayed as the backend's own answer and never counted against it.
      .refine((s) => !/[?#]/.test(s), "must have no query or fragment")
      .refine(
        (s) => !/\/v1\/*$/i.test(URL.parse(s)?.pathname ?? ""),
        "must be the server's base URL without /v1 (the gateway appends /v1/...)",
      )
      // An endpoint's url pasted whole (http://x:8000/v1/chat/completions) likewise sends every request to
      // .../v1/chat/completions/v1/chat/completions: a 404 everywhere, relayed, while /healthz says ok.
      .refine(
        (s) =>
          !/\/v1\/(?:chat\/completions|completions|models|embeddings|responses)\/*$/i.test(
            URL.parse(s)?.pathname ?? "",
          ),
        "must be the server's base URL, not an endpoint's (the gateway appends /v1/...)",
      )
      // A trailing slash would double the one the gateway appends.
      .transform((s) => s.replace(/\/+$/, "")),
    models: z
      .array(
        z
          .string({ error: "must be a model name (a string)" })
          .min(1, "must be non-empty")
          // A client's `model` is refused past MAX_MODEL_CHARS (openai-schemas.ts), so a longer name is one no
          // client could ask for: its backends would serve nothing while /healthz said ok.
          .refine((m) => m.length <= MAX_MODEL_CHARS, {
            error: (iss) =>
              `must be at most ${MAX_MODEL_CHARS} characters, the longest model a client may send (got '${quoteClient(String(iss.input))}'): serve it under a shorter name (vLLM's --served-model-name)`,
          })
          // "llama-3 " served no client: each asked for "llama-3" and got a 404 while /healthz said ok.
          .refine(
            (m) => m.trim() === m,
            "must not begin or end with whitespace (clients send the model name exactly as served)",
          ),
        {
          error: fieldError(
            'the model names it serves, as clients send them, e.g. ["llama-3.1-8b-instruct"]',
            'a JSON array of model names, e.g. ["llama-3.1-8b-instruct"]',
          ),
        },
      )
      .min(1, "must list at least one model"),
    apiKey: z.string({ error: "must be a string" }).min(1, "must be non-empty when given").optional(),
    weight: z
      .number({ error: "must be a number (relative capacity, default 1)" })
      .positive("must be > 0")
      .finite()
      .default(1),
    kvCacheTokens: z
      .number({
        error: fieldError(
          'the instance\'s KV-cache capacity in tokens (vLLM logs it at start-up: "GPU KV cache size: N tokens"; write N without its commas)',
          "a number of tokens, e.g. 442368",
        ),
      })
      .int("must be an integer")
      .positive("must be > 0"),
    maxInflight: z
      .number({
        error:
          "must be a number: this backend's bound on requests in flight, overriding MAX_INFLIGHT_PER_BACKEND (0 = none)",
      })
      .int("must be an integer (requests in flight)")
      .min(0, "must be >= 0 (0 = no bound for this backend)")
      .max(
        SETTINGS.MAX_INFLIGHT_PER_BACKEND.max,
        `must be <= ${SETTINGS.MAX_INFLIGHT_PER_BACKEND.max} (requests in flight)`,
      )
      .optional(),
    // No engine kind is configured, and SGLang, TensorRT-LLM's server and llama.cpp may refuse a field they do
    // not know: the operator says which backends run an engine that takes vLLM's `cache_salt` (prefix-scope.ts).
    cacheSalt: z
      .boolean({
        error:
          "must be true or false: whether this backend's engine takes vLLM's cache_salt (read with PREFIX_SCOPE=key)",
      })
      .default(false),
  } satisfies Record<(typeof BACKEND_FIELDS)[number], z.ZodType>,
  {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? unknownBackendFields(iss.keys)
        : iss.code === "invalid_type"
          ? `must be an object such as {"id", "url", "models", "kvCacheTokens"}`
          : undefined,
  },
);

export type BackendConfig = z.infer<typeof backendSchema>;

const backendsSchema = z
  .array(backendSchema, {
    error: (iss) =>
      `must be a JSON array of backends${isPlainObject(iss.input) ? " ([{…}, …]), not a single object" : ""}`,
  })
  .min(1, "must list at least one backend")
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((b, i) => {
      if (seen.has(b.id))
        ctx.addIssue({ code: "custom", path: [i, "id"], message: `duplicate id "${b.id}"` });
      seen.add(b.id);
    });
    sameServerTwice(list, ctx);
  });

let backendsCache: { raw: string; byId: ReadonlyMap<string, BackendConfig> } | undefined;

/**
 * BACKENDS' entries by id, read on their own: for the RouterDO, which probes and scrapes its backends and
 * must send each one's apiKey as requests do, while the PoolSpec it is sent never carries a key
 * (router-rpc.ts). Empty when BACKENDS is unset or invalid (then the Worker routes nothing anyway). Cached
 * by the raw string, as parseConfig is.
 */
export function backendsById(raw: string | undefined): ReadonlyMap<string, BackendConfig> {
  if (raw === undefined) return new Map();
  if (backendsCache?.raw === raw) return backendsCache.byId;
  let byId = new Map<string, BackendConfig>();
  try {
    const r = backendsSchema.safeParse(JSON.parse(raw));
    if (r.success) byId = new Map(r.data.map((b) => [b.id, b]));
  } catch {
    // Not JSON: no entries.
  }
  backendsCache = { raw, byId };
  return byId;
}

/**
 * Where BACKENDS stops being JSON, as a position only: the parser's own message quotes the text around it,
 * which may hold a backend's apiKey. vLLM prints its KV size with thousands separators ("GPU KV cache size:
 * 442,368 tokens"), and pasted as is that number is the usual culprit, so it is named when present. `npm run dev`
 * (bench/emulator/dev.ts) says the same when it reads .dev.vars.
 */
export function jsonErrorHint(raw: string, err: unknown): string {
  const at = /at position (\d+)/.exec(err instanceof Error ? err.message : "")?.[1];
  const where = at === undefined ? "not valid JSON" : `not valid JSON at character ${Number(at) + 1}`;
  return /"kvCacheTokens"\s*:\s*\d{1,3}(?:,\d{3})+/.test(raw)
    ? `${where} (write kvCacheTokens without thousands separators: 442368, not 442,368)`
    : where;
}

const envSchema = z
  .object({
    BACKENDS: z
      .string({ error: "is not set (wrangler secret put BACKENDS)" })
      .transform((raw, ctx) => {
        try {
          return JSON.parse(raw) as unknown;
        } catch (err) {
          ctx.addIssue({
            code: "custom",
            message: `must be a JSON array of backends: ${jsonErrorHint(raw, err)}`,
          });
          return z.NEVER;
        }
      })
      .pipe(backendsSchema),
    GATEWAY_API_KEYS: z
      .string({ error: "is not set (wrangler secret put GATEWAY_API_KEYS)" })
      .transform((raw, ctx): KeyEntry[] => {
        const r = parseKeyEntries(raw);
        if (r.ok) return [...r.entries];
        for (const issue of r.issues)
          ctx.addIssue({ code: "custom", path: [...issue.path], message: issue.message });
        return z.NEVER;
      })
      .pipe(z.array(z.custom<KeyEntry>()).min(1, "must hold at least one comma-separated key")),
    ADMIN_TOKEN: z
      .string({ error: "is not set (wrangler secret put ADMIN_TOKEN)" })
      .min(16, "must be at least 16 characters"),
    ROUTING_POLICY: z
      .string()
      .default(DEFAULT_POLICY)
      .pipe(z.enum(POLICY_NAMES, { error: `must be one of ${POLICY_NAMES.join(", ")}` })),
    PREFIX_TOKENS: numericVar("PREFIX_TOKENS"),
    PREFIX_SCOPE: z
      .string()
      .trim()
      .default(DEFAULT_PREFIX_SCOPE)
      .pipe(
        z.enum(PREFIX_SCOPES, {
          error: `must be one of ${PREFIX_SCOPES.join(", ")} (key: no gateway key shares prefix affinity with another)`,
        }),
      ),
    BLOCK_TOKENS: numericVar("BLOCK_TOKENS"),
    BALANCE_FACTOR: numericVar("BALANCE_FACTOR"),
    LEASE_TTL_SECONDS: numericVar("LEASE_TTL_SECONDS"),
    HEALTH_PROBE_SECONDS: numericVar("HEALTH_PROBE_SECONDS"),
    EJECT_AFTER_FAULTS: numericVar("EJECT_AFTER_FAULTS"),
    RESTORE_AFTER_CHECKS: numericVar("RESTORE_AFTER_CHECKS"),
    MAX_EJECTION_PERCENT: numericVar("MAX_EJECTION_PERCENT"),
    RETRY_BUDGET_PERCENT: numericVar("RETRY_BUDGET_PERCENT"),
    UPSTREAM_CONNECT_TIMEOUT_MS: numericVar("UPSTREAM_CONNECT_TIMEOUT_MS"),
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: numericVar("UPSTREAM_FIRST_BYTE_TIMEOUT_MS"),
    UPSTREAM_IDLE_TIMEOUT_MS: numericVar("UPSTREAM_IDLE_TIMEOUT_MS"),
    CLIENT_STALL_TIMEOUT_MS: numericVar("CLIENT_STALL_TIMEOUT_MS"),
    REQUEST_BODY_TIMEOUT_MS: numericVar("REQUEST_BODY_TIMEOUT_MS"),
    ROUTER_TIMEOUT_MS: numericVar("ROUTER_TIMEOUT_MS"),
    REPORT_CARRY_MS: numericVar("REPORT_CARRY_MS"),
    KEY_RATE_LIMIT: z
      .string()
      .default(DEFAULT_KEY_RATE_LIMIT)
      .pipe(z.enum(["on", "off"], { error: "must be on or off" })),
    KEY_MAX_CONCURRENT: numericVar("KEY_MAX_CONCURRENT"),
    AB_POLICY: z
      .string()
      .default(DEFAULT_AB_POLICY)
      .pipe(z.enum(["off", ...POLICY_NAMES], { error: `must be off or one of ${POLICY_NAMES.join(", ")}` })),
    AB_PERCENT: numericVar("AB_PERCENT"),
    AB_STICKY: z
      .string()
      .default(DEFAULT_AB_STICKY)
      .pipe(z.enum(AB_STICKY_MODES, { error: `must be one of ${AB_STICKY_MODES.join(", ")}` })),
    SHADOW: z
      .string()
      .default(DEFAULT_SHADOW)
      .pipe(z.enum(["on", "off"], { error: "must be on or off" })),
    ROUTER_CELLS: z
      .string()
      .trim()
      .default(DEFAULT_ROUTER_CELLS)
      .transform((raw, ctx): number | "auto" => {
        if (raw === "auto") return raw;
        const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
        if (n >= 1 && n <= ROUTER_CELLS_MAX) return n;
        ctx.addIssue({ code: "custom", message: `must be auto or an integer within 1..${ROUTER_CELLS_MAX}` });
        return z.NEVER;
      }),
    ROUTER_LOCATION_HINT: z
      .string()
      .trim()
      .default(DEFAULT_ROUTER_LOCATION_HINT)
      .pipe(
        z.enum(["", ...LOCATION_HINTS], {
          error: `must be empty (no hint) or one of ${LOCATION_HINTS.join(", ")}`,
        }),
      ),
    ENGINE_SCRAPE_MS: numericVar("ENGINE_SCRAPE_MS"),
    MAX_INFLIGHT_PER_BACKEND: numericVar("MAX_INFLIGHT_PER_BACKEND"),
    KEY_SHARE_HEADROOM_PERCENT: numericVar("KEY_SHARE_HEADROOM_PERCENT"),
    BACKEND_CHECK_SECONDS: numericVar("BACKEND_CHECK_SECONDS"),
    CORS_ALLOW_ORIGINS: z
      .string()
      .default(DEFAULT_CORS_ALLOW_ORIGINS)
      .transform((raw, ctx): CorsOrigins => {
        const r = parseCorsOrigins(raw);
        if (r.ok) return r.cors;
        for (const issue of r.issues)
          ctx.addIssue({
            code: "custom",
            path: issue.index === undefined ? [] : [issue.index],
            message: issue.message,
          });
        return z.NEVER;
      }),
  })
  .superRefine((env, ctx) => {
    if (env.PREFIX_TOKENS < env.BLOCK_TOKENS)
      ctx.addIssue({ code: "custom", path: ["PREFIX_TOKENS"], message: "must be >= BLOCK_TOKENS" });
    // The Deploy to Cloudflare button offers .dev.vars.example's values: never let them guard real backends.
    if (!env.BACKENDS.every((b) => isLoopbackUrl(b.url))) {
      const mine = "set your own before BACKENDS leaves this machine";
      if (env.ADMIN_TOKEN.trim() === EXAMPLE_ADMIN_TOKEN)
        ctx.addIssue({
          code: "custom",
          path: ["ADMIN_TOKEN"],
          message: `is the public example from .dev.vars.example: ${mine}`,
        });
      if (env.GATEWAY_API_KEYS.some((k) => k.key === EXAMPLE_GATEWAY_KEY))
        ctx.addIssue({
          code: "custom",
          path: ["GATEWAY_API_KEYS"],
          message: `holds the public example key from .dev.vars.example: ${mine}`,
        });
    }
    // A client key that is also the admin token makes each of its holders an admin (drain, reset).
    if (env.GATEWAY_API_KEYS.some((k) => k.key === env.ADMIN_TOKEN.trim()))
      ctx.addIssue({
        code: "custom",
        path: ["ADMIN_TOKEN"],
        message: `is also a client key in GATEWAY_API_KEYS: every client holding it could drain backends and reset affinity; give the admin a token of its own`,
      });
    if (env.ENGINE_SCRAPE_MS > 0 && env.ENGINE_SCRAPE_MS < ENGINE_SCRAPE_MIN_MS)
      ctx.addIssue({
        code: "custom",
        path: ["ENGINE_SCRAPE_MS"],
        message: `must be 0 (off) or >= ${ENGINE_SCRAPE_MIN_MS}`,
      });
    if (env.BACKEND_CHECK_SECONDS > 0 && env.BACKEND_CHECK_SECONDS < BACKEND_CHECK_MIN_SECONDS)
      ctx.addIssue({
        code: "custom",
        path: ["BACKEND_CHECK_SECONDS"],
        message: `must be 0 (off) or >= ${BACKEND_CHECK_MIN_SECONDS}`,
      });
    if (env.AB_POLICY === env.ROUTING_POLICY)
      ctx.addIssue({
        code: "custom",
        path: ["AB_POLICY"],
        message: "must differ from ROUTING_POLICY (or be off)",
      });
  });

/** Deadlines of the Worker's own waits, ms. */
export interface Deadlines {
  /** A streamed request's response headers. */
  readonly connectMs: number;
  /** A streamed response's first event after its headers. */
  readonly firstByteMs: number;
  /** Between two events of a streamed response. */
  readonly idleMs: number;
  /** A client taking none of a streamed answer's bytes (CLIENT_STALL_TIMEOUT_MS): its relay is cut. */
  readonly clientStallMs: number;
  /** A non-streamed request's whole response (its headers come with it). */
  readonly responseMs: number;
  /** The client's whole request body (REQUEST_BODY_TIMEOUT_MS). */
  readonly bodyMs: number;
  /** The RouterDO's answer to a route call. */
  readonly routerMs: number;
  /** A finished request's report waits this long for a route call to carry it (REPORT_CARRY_MS); 0: sent at once. */
  readonly reportCarryMs: number;
}

/** A configured gateway key, as the Worker knows it after auth (never the key itself). */
export interface GatewayKey {
  /** 16 hex of the key's SHA-256: names its KeyLimiterDO and its rate-limit counter (keyIdOf). */
  readonly id: string;
  /** Requests in flight allowed, 0 = no limit: the key's max_concurrent, else KEY_MAX_CONCURRENT. */
  readonly maxConcurrent: number;
  /**
   * 64 hex of SHA-256 over a domain string and the key: what the key's vLLM `cache_salt` is derived from
   * (inference/prefix-scope.ts). Not `id`, which names objects and counters the operator sees: vLLM asks for
   * a salt nobody can predict, and this one cannot be computed without the key.
   */
  readonly saltSecret: string;
}

/** Per-key limits (README "Per-key limits"); the requests-per-period figures live on the binding. */
export interface KeyLimitSettings {
  /** KEY_RATE_LIMIT: whether the KEY_RATE_LIMITER binding is consulted. */
  readonly rateLimit: boolean;
  /** KEY_MAX_CONCURRENT, the default of keys without max_concurrent. */
  readonly maxConcurrent: number;
}

export interface GatewayConfig {
  readonly backends: readonly BackendConfig[];
  readonly backendsById: ReadonlyMap<string, BackendConfig>;
  /** SHA-256 of each gateway key: compared in constant time, the keys themselves are not kept. */
  readonly gatewayKeyDigests: readonly Uint8Array[];
  /** The same keys, in the same order. */
  readonly gatewayKeys: readonly GatewayKey[];
  readonly keyLimits: KeyLimitSettings;
  readonly adminTokenDigest: Uint8Array;
  readonly prefixTokens: number;
  /** PREFIX_SCOPE: whether prefix affinity (and, on `cacheSalt` backends, the engine's cache) is split per gateway key. */
  readonly prefixScope: (typeof PREFIX_SCOPES)[number];
  /**
   * Whether any backend is marked `cacheSalt`: derived here once per config, since every request reads it
   * (inference-request.ts, to hash a salt only when some backend will be sent one).
   */
  readonly anyCacheSalt: boolean;
  readonly router: RouterSettings;
  /** What keeps a request in its A/B arm (AB_STICKY); the split itself is in `router`. */
  readonly abSticky: (typeof AB_STICKY_MODES)[number];
  readonly deadlines: Deadlines;
  /** ROUTER_CELLS: RouterDO cells per pool, or auto (src/routing/cells.ts cellCount). */
  readonly routerCells: number | "auto";
  /** Models the fleet serves, in first-seen order. */
  readonly models: readonly string[];
  /** ROUTER_LOCATION_HINT: where new RouterDOs and KeyLimiterDOs are created (location-hint.ts); undefined = no hint. */
  readonly locationHint: LocationHint | undefined;
  /** CORS_ALLOW_ORIGINS: which browser origins may call /v1/* (cors/cors.ts); off by default. */
  readonly cors: CorsOrigins;
}

export type ConfigResult = { ok: true; config: GatewayConfig } | { ok: false; errors: string[] };

/** The raw bindings config reads; a subset of Env so tests can pass plain objects. */
export type RawConfigEnv = Partial<Record<keyof typeof envSchema.shape, string | undefined>>;

/** `["BACKENDS", 2, "url"]` → `BACKENDS[2].url` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** Domain separation of GatewayKey.saltSecret: no other hash the gateway makes of a key. */
const SALT_SECRET_DOMAIN = "prefix-gateway cache_salt key v1\u0000";

/** Parses and validates; never throws for bad input. */
export async function parseConfig(env: RawConfigEnv): Promise<ConfigResult> {
  const parsed = envSchema.safeParse(env);
  const misspelt = misspeltVars(env, CONFIG_KEYS).map(
    ({ name, meant }) =>
      `${name}: is not a var this gateway reads (did you mean ${meant}?): rename it, or its setting stays at the default`,
  );
  if (!parsed.success || misspelt.length > 0) {
    const errors = parsed.success
      ? []
      : parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
    return { ok: false, errors: [...errors, ...misspelt] };
  }
  const e = parsed.data;
  const models: string[] = [];
  for (const b of e.BACKENDS) for (const m of b.models) if (!models.includes(m)) models.push(m);
  const keyDigests = await Promise.all(e.GATEWAY_API_KEYS.map((k) => sha256(k.key)));
  const saltSecrets = await Promise.all(
    e.GATEWAY_API_KEYS.map((k) => sha256Hex(`${SALT_SECRET_DOMAIN}${k.key}`, 32)),
  );
  return {
    ok: true,
    config: {
      backends: e.BACKENDS,
      backendsById: new Map(e.BACKENDS.map((b) => [b.id, b])),
      gatewayKeyDigests: keyDigests,
      gatewayKeys: e.GATEWAY_API_KEYS.map((k, i) => ({
        id: keyIdOf(keyDigests[i]!),
        maxConcurrent: k.options.maxConcurrent ?? e.KEY_MAX_CONCURRENT,
        saltSecret: saltSecrets[i]!,
      })),
      keyLimits: { rateLimit: e.KEY_RATE_LIMIT === "on", maxConcurrent: e.KEY_MAX_CONCURRENT },
      adminTokenDigest: await sha256(e.ADMIN_TOKEN),
      prefixTokens: e.PREFIX_TOKENS,
      prefixScope: e.PREFIX_SCOPE,
      anyCacheSalt: e.BACKENDS.some((b) => b.cacheSalt),
      router: {
        policy: e.ROUTING_POLICY,
        blockTokens: e.BLOCK_TOKENS,
        balanceFactor: e.BALANCE_FACTOR,
        leaseTtlSeconds: e.LEASE_TTL_SECONDS,
        healthProbeSeconds: e.HEALTH_PROBE_SECONDS,
        ejectAfterFaults: e.EJECT_AFTER_FAULTS,
        restoreAfterChecks: e.RESTORE_AFTER_CHECKS,
        maxEjectionPercent: e.MAX_EJECTION_PERCENT,
        retryBudgetPercent: e.RETRY_BUDGET_PERCENT,
        abPolicy: e.AB_POLICY === "off" ? null : e.AB_POLICY,
        abPercent: e.AB_PERCENT,
        shadow: e.SHADOW === "on",
        engineScrapeMs: e.ENGINE_SCRAPE_MS,
        maxInflightPerBackend: e.MAX_INFLIGHT_PER_BACKEND,
        keyShareHeadroomPercent: e.KEY_SHARE_HEADROOM_PERCENT,
        backendCheckSeconds: e.BACKEND_CHECK_SECONDS,
      },
      abSticky: e.AB_STICKY,
      deadlines: {
        connectMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
        firstByteMs: e.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
        idleMs: e.UPSTREAM_IDLE_TIMEOUT_MS,
        clientStallMs: e.CLIENT_STALL_TIMEOUT_MS,
        responseMs: e.LEASE_TTL_SECONDS * 1000,
        bodyMs: e.REQUEST_BODY_TIMEOUT_MS,
        routerMs: e.ROUTER_TIMEOUT_MS,
        reportCarryMs: e.REPORT_CARRY_MS,
      },
      routerCells: e.ROUTER_CELLS,
      models,
      locationHint: e.ROUTER_LOCATION_HINT === "" ? undefined : e.ROUTER_LOCATION_HINT,
      cors: e.CORS_ALLOW_ORIGINS,
    },
  };
}

/** Every secret and var the config reads, by name (test/node/readme-config.test.ts holds the README's tables to it). */
export const CONFIG_KEYS = Object.keys(envSchema.shape) as (keyof RawConfigEnv)[];
let cached:
  | { env: object; values: readonly unknown[]; names: string; result: Promise<ConfigResult> }
  | undefined;

/** The secrets (wrangler.toml [secrets]): their values are never echoed, not even to the operator's log. */
export const SECRET_NAMES: readonly string[] = ["BACKENDS", "GATEWAY_API_KEYS", "ADMIN_TOKEN"];
/** A var's value is echoed in the log cut to this many characters. */
const ECHO_MAX_CHARS = 200;

/**
 * The log line for an invalid config: every error as the 503 and /healthz say it, and, for the vars they
 * name that are not secrets, the value as it was read (`got`). The public answers never echo a value
 * (/healthz is public, and a var may be mistaken for a secret's place); the log is the operator's own
 * (wrangler dev's terminal, wrangler tail, Workers Logs), and "must be on or off" helps more beside
 * `"SHADOW": "true"`. Secrets are named, never shown.
 */
export function configErrorLine(env: RawConfigEnv, errors: readonly string[]): string {
  const got: Record<string, string> = {};
  const secrets = secretValues(env);
  for (const e of errors) {
    const name = /^([A-Z][A-Z0-9_]*)\b/.exec(e)?.[1];
    if (
      name === undefined ||
      SECRET_NAMES.includes(name) ||
      !CONFIG_KEYS.includes(name as keyof RawConfigEnv)
    )
      continue;
    const value = env[name as keyof RawConfigEnv];
    if (typeof value !== "string") continue;
    got[name] = sharesSecret(value, secrets) ? SECRET_HELD : value.slice(0, ECHO_MAX_CHARS);
  }
  return JSON.stringify({ msg: "config_invalid", level: "error", errors, got });
}

/** What the log says instead of a non-secret var's value that holds (part of) a secret's. */
const SECRET_HELD = "(not shown: it holds a secret's value)";
/** Shorter pieces are not looked for: any value would hold them by chance. */
const SECRET_MIN_CHARS = 6;

/**
 * The secrets' values as the config holds them, so that a var that holds one is not echoed: an ADMIN_TOKEN
 * or a key pasted into a plain var (wrangler.toml [vars], committed and shown in the dashboard) is a
 * mistake the log must not repeat. The admin token, each gateway key, each backend's apiKey and a url's
 * user and password, read leniently (the config may be invalid).
 */
function secretValues(env: RawConfigEnv): string[] {
  const out: string[] = [];
  if (env.ADMIN_TOKEN !== undefined) out.push(env.ADMIN_TOKEN.trim());
  out.push(...listedKeys(env.GATEWAY_API_KEYS ?? ""));
  let backends: unknown;
  try {
    backends = JSON.parse(env.BACKENDS ?? "[]");
  } catch {
    backends = [];
  }
  for (const b of Array.isArray(backends) ? backends : []) {
    if (typeof b !== "object" || b === null) continue;
    const { apiKey, url } = b as { apiKey?: unknown; url?: unknown };
    if (typeof apiKey === "string") out.push(apiKey);
    if (typeof url === "string") out.push(...userinfo(url));
  }
  return out.filter((v) => v.length >= SECRET_MIN_CHARS);
}

/** A url's user and password, as written and decoded; none when it is no url. */
function userinfo(url: string): string[] {
  try {
    const { username, password } = new URL(url);
    const out = [username, password];
    for (const v of [username, password]) {
      try {
        out.push(decodeURIComponent(v));
      } catch {
        // Not %-decodable: as written only.
      }
    }
    return out;
  } catch {
    return [];
  }
}

/** The value holds a secret, or a piece of one at least SECRET_MIN_CHARS long. */
function sharesSecret(value: string, secrets: readonly string[]): boolean {
  const v = value.trim();
  return secrets.some((s) => v.includes(s) || (v.length >= SECRET_MIN_CHARS && s.includes(v)));
}

/**
 * The config for this request. Cached per isolate, keyed by the raw values
 * (one entry: an isolate serves one deployment), so parsing and hashing run
 * once per secret change rather than per request. The values are compared
 * one by one: the same strings come back on every request, and comparing a
 * string with itself costs nothing, where serialising BACKENDS per request
 * showed in the isolate's CPU profile. An invalid config is logged once as
 * it is parsed (configErrorLine: the values of the vars it names, never a
 * secret's).
 */
export function loadConfig(
  env: RawConfigEnv,
  log: (line: string) => void = (line) => console.error(line),
): Promise<ConfigResult> {
  // The env's names count too (a var renamed to or from a near miss of a known one, config-names.ts); one
  // env object is read once.
  const names = cached?.env === env ? cached.names : Object.keys(env).join(",");
  if (
    cached === undefined ||
    names !== cached.names ||
    CONFIG_KEYS.some((k, i) => env[k] !== cached!.values[i])
  ) {
    const result = parseConfig(env);
    cached = { env, values: CONFIG_KEYS.map((k) => env[k]), names, result };
    // Once per isolate per config (as it is parsed), not per request: the first request after a bad
    // deploy or `wrangler dev` start prints it where the operator looks.
    void result.then((r) => {
      if (!r.ok) log(configErrorLine(env, r.errors));
    });
  }
  return cached.result;
}
