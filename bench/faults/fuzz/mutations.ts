/**
 * Seeded mutations of valid inference bodies: start from a small valid chat
 * or completions request, then change one to three things — a field set to
 * the wrong type or an absurd number, a field removed or invented, a
 * `messages` shape OpenAI allows or one it does not, `n`, `stream_options`,
 * tools, unknown models — or damage the JSON text itself (duplicate keys,
 * NaN/Infinity literals, invalid UTF-8, lone surrogates, deep nesting,
 * truncation, trailing garbage). The valid starting point is what makes
 * these differ from test/node/fuzz-bodies.ts's grammar: most mutants are one
 * step away from a request a backend would serve.
 *
 * Pure (no node:*), so the workerd test suite runs it too (test/worker/fuzz-pass.test.ts).
 *
 * Answers stay cheap for the backend: output lengths are either small (≤ 8
 * tokens, ≤ 256 when max_tokens is removed) or past what the gateway or the
 * engine accepts, never a valid number in between that would keep a
 * backend busy for minutes.
 */
import type { Rng } from "../../../sim/workloads/prng";
import { mutateText } from "./text-mutations";

export type InferencePath = "/v1/chat/completions" | "/v1/completions";

export interface MutatedBody {
  readonly label: string;
  readonly path: InferencePath;
  readonly bytes: Uint8Array;
}

type Json = Record<string, unknown>;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[rng.int(0, items.length - 1)]!;

function nested(depth: number, open: "[" | "{"): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = open === "[" ? [v] : { a: v };
  return v;
}

/** A value of any type, sane or absurd; `big` allows megabytes. */
function weird(rng: Rng): unknown {
  const choices: (() => unknown)[] = [
    () => null,
    () => true,
    () => false,
    () => 0,
    () => -1,
    () => 1e12,
    () => 1e308,
    () => -1e308,
    () => 2 ** 53 + 1,
    () => 2 ** 31,
    () => 1.5,
    () => -0.0001,
    () => "NaN",
    () => "Infinity",
    () => "-0",
    () => "",
    () => "4",
    () => "x".repeat(rng.int(1, 4096)),
    () => "\u0000\u0001\u001f",
    () => "\ud800",
    () => "\udc00\ud800",
    () => "😀".repeat(rng.int(1, 100)),
    () => [],
    () => {},
    () => [null],
    () => ({ type: "text", text: "hi" }),
    () => nested(rng.int(2, 200), pick(rng, ["[", "{"] as const)),
    () => Array.from({ length: rng.int(100, 5000) }, (_, i) => i),
  ];
  return pick(rng, choices)();
}

const BASE_QUESTIONS = ["What is a prefix cache?", "Say hi.", "Count to three.", "长文本 and émojis 😀"];

function validChat(rng: Rng, model: string): Json {
  const messages: Json[] = [];
  if (rng.next() < 0.7)
    messages.push({ role: "system", content: "You are a terse assistant. ".repeat(rng.int(1, 40)) });
  messages.push({ role: "user", content: pick(rng, BASE_QUESTIONS) });
  return { model, messages, max_tokens: rng.int(1, 8), stream: rng.next() < 0.5 };
}

function validCompletions(rng: Rng, model: string): Json {
  const prompt = rng.next() < 0.8 ? pick(rng, BASE_QUESTIONS) : [1, 2, 3, rng.int(4, 100_000)];
  return { model, prompt, max_tokens: rng.int(1, 8), stream: rng.next() < 0.5 };
}

const KNOWN_FIELDS = [
  "model",
  "messages",
  "prompt",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "best_of",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "stop",
  "temperature",
  "top_p",
  "seed",
  "logprobs",
  "top_logprobs",
  "echo",
  "prompt_cache_key",
  "user",
  "response_format",
  "logit_bias",
  "presence_penalty",
  "metadata",
  "cache_salt",
] as const;

/** `messages` values: shapes OpenAI accepts, then shapes it refuses. */
function messagesShape(rng: Rng): unknown {
  const allowed: (() => unknown)[] = [
    () => [
      { role: "developer", content: "be brief" },
      { role: "user", content: "hi" },
    ],
    () => [
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "text", text: "there" },
        ],
      },
    ],
    () => [
      {
        role: "user",
        content: [
          { type: "text", text: "what is this" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      },
    ],
    () => [
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: '{"city":"x"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
    ],
    () => [
      { role: "user", name: "alice", content: "hi" },
      { role: "assistant", refusal: "no", content: "" },
    ],
    () => [
      { role: "function", name: "f", content: "{}" },
      { role: "user", content: "ok" },
    ],
    () =>
      Array.from({ length: rng.int(50, 400) }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `t${i}`,
      })),
  ];
  const refused: (() => unknown)[] = [
    () => [],
    () => "hi",
    () => ({ role: "user", content: "hi" }),
    () => [["user", "hi"]],
    () => ["hi"],
    () => [null],
    () => [{ content: "no role" }],
    () => [{ role: 7, content: "hi" }],
    () => [{ role: "user", content: 42 }],
    () => [{ role: "user", content: { text: "hi" } }],
    () => [{ role: "user", content: [1, null, {}] }],
    () => [{ role: "user", content: [{ type: "text" }] }],
    () => [{ role: "user", content: [{ type: "text", text: 5 }] }],
    () => [{ role: "", content: "hi" }],
    () => [{ role: "user", content: "hi", tool_calls: "x" }],
    () => Array.from({ length: rng.int(1, 50) }, () => weird(rng)),
  ];
  return rng.next() < 0.5 ? pick(rng, allowed)() : pick(rng, refused)();
}

function toolsShape(rng: Rng): unknown {
  const fn = (name: string, params: unknown) => ({
    type: "function",
    function: { name, description: "d", parameters: params },
  });
  return pick(rng, [
    () => [fn("get_weather", { type: "object", properties: { city: { type: "string" } } })],
    () => [fn("deep", nested(rng.int(10, 200), "{"))],
    () => Array.from({ length: rng.int(10, 2000) }, (_, i) => fn(`f${i}`, { type: "object" })),
    () => [{ type: "retrieval" }],
    () => [fn("", null)],
    () => weird(rng),
  ] as (() => unknown)[])();
}

/** o200k tokens per repetition of each unit, roughly (src/prefix/tokenizer.ts on long runs). */
const GIANT_UNITS: readonly [string, number][] = [
  ["a", 1 / 8],
  [" ", 1 / 128],
  ["长", 1],
  ["😀", 1],
  ["\\", 1 / 4],
  ["<|endoftext|>", 6],
];
/** The emulated engine's context (DEFAULT_ENGINE_CONFIG.kvCacheTokens is 442,368): past it, a prompt is refused. */
const PAST_CONTEXT_TOKENS = 500_000;
const GIANT_MAX_CHARS = 4_000_000;

/**
 * A long run of one unit: either at most ~30k tokens (a backend prefills it in a few seconds), or past
 * any context the emulated engine has (it refuses it with vLLM's context-length 400). A valid prompt of
 * 100k–400k tokens would be a legitimate request that keeps an emulated GPU busy for half a minute.
 */
function giantString(rng: Rng): string {
  const [unit, perUnit] = pick(rng, GIANT_UNITS);
  const past = Math.ceil(PAST_CONTEXT_TOKENS / perUnit);
  if (rng.next() < 0.3 && past * unit.length <= GIANT_MAX_CHARS)
    return unit.repeat(rng.int(past, Math.floor(GIANT_MAX_CHARS / unit.length)));
  const small = Math.min(Math.floor(30_000 / perUnit), Math.floor(GIANT_MAX_CHARS / unit.length));
  return unit.repeat(rng.int(Math.min(10_000, small), small));
}

/** One change to the body as a JS object; returns its label. */
function mutateObject(body: Json, rng: Rng, model: string): string {
  const r = rng.next();
  if (r < 0.3) {
    const f = pick(rng, KNOWN_FIELDS);
    body[f] = weird(rng);
    return `${f}=weird`;
  }
  if (r < 0.4) {
    const f = pick(rng, ["model", "messages", "prompt", "max_tokens"]);
    delete body[f];
    return `-${f}`;
  }
  if (r < 0.47) {
    const name = pick(rng, [
      "__proto__",
      "constructor",
      "x".repeat(rng.int(1, 10_000)),
      "",
      "max tokens",
      "😀",
    ]);
    body[name] = weird(rng);
    return "extra field";
  }
  if (r < 0.57) {
    body.messages = messagesShape(rng);
    return "messages shape";
  }
  if (r < 0.64) {
    const f = pick(rng, ["max_tokens", "max_completion_tokens", "min_tokens"]);
    body[f] = pick(rng, [0, -1, 1e12, 2 ** 31, 2 ** 20 + 1, 2 ** 20, 1.5, "10", null, -(2 ** 53)]);
    return `${f} bound`;
  }
  if (r < 0.7) {
    body.n = pick(rng, [0, 1, 2, 16, 128, 129, -1, 1.5, "2", null, 1e9]);
    if (rng.next() < 0.3) body.best_of = pick(rng, [1, 3, 20, 21, 0]);
    return "n";
  }
  if (r < 0.76) {
    body.stream = pick(rng, [true, false, "true", 1, null]);
    body.stream_options = pick(rng, [
      { include_usage: true },
      { include_usage: false },
      { include_usage: "yes" },
      { continuous_usage_stats: true },
      null,
      "x",
      [],
      {},
    ]);
    return "stream_options";
  }
  if (r < 0.82) {
    body.tools = toolsShape(rng);
    if (rng.next() < 0.5) body.tool_choice = pick(rng, ["auto", "none", "required", { type: "function" }, 5]);
    return "tools";
  }
  if (r < 0.9) {
    body.model = pick(rng, [
      "gpt-4o",
      "",
      model.toUpperCase(),
      `${model} `,
      `org/${model}`,
      "../../admin",
      "m".repeat(rng.int(1, 20_000)),
      "<script>alert(1)</script>",
      "\u0000",
      5,
      null,
    ]);
    return "model";
  }
  if (r < 0.95) {
    body.prompt_cache_key = weird(rng);
    return "prompt_cache_key";
  }
  // A giant string where the prompt is (the 16 MiB cap has its own rare case in cases.ts).
  const giant = giantString(rng);
  if ("prompt" in body) body.prompt = giant;
  else body.messages = [{ role: "user", content: giant }];
  return "giant string";
}

const utf8 = new TextEncoder();

/** One mutated body: 1–3 changes to a valid body, sometimes one more to its text. */
export function mutatedBody(rng: Rng, model: string): MutatedBody {
  const chat = rng.next() < 0.6;
  const body = chat ? validChat(rng, model) : validCompletions(rng, model);
  const labels: string[] = [];
  for (let k = rng.int(1, 3); k > 0; k--) labels.push(mutateObject(body, rng, model));
  const path: InferencePath = chat ? "/v1/chat/completions" : "/v1/completions";
  const text = JSON.stringify(body);
  if (rng.next() < 0.35) {
    const m = mutateText(text, rng);
    return { label: `${chat ? "chat" : "cmpl"}: ${[...labels, m.label].join(", ")}`, path, bytes: m.bytes };
  }
  return { label: `${chat ? "chat" : "cmpl"}: ${labels.join(", ")}`, path, bytes: utf8.encode(text) };
}

/** A valid body with a longer answer (streamed or not), for clients that leave before its end. */
export function longStreamBody(
  rng: Rng,
  stream: boolean,
  model: string,
): { path: InferencePath; bytes: Uint8Array } {
  const chat = rng.next() < 0.6;
  const body = chat ? validChat(rng, model) : validCompletions(rng, model);
  body.stream = stream;
  body.max_tokens = rng.int(40, 200);
  if (rng.next() < 0.5) body.stream_options = { include_usage: true };
  return {
    path: chat ? "/v1/chat/completions" : "/v1/completions",
    bytes: utf8.encode(JSON.stringify(body)),
  };
}
