/**
 * Random and adversarial inference request bodies, as bytes, for the fuzz
 * tests (test/node/edge-fuzz.test.ts under Node, test/worker/edge-fuzz.test.ts
 * through the real Worker). Pure TypeScript (no node:*), so workerd can import it.
 *
 * Bodies are assembled as JSON text, not JS objects, so they can hold what
 * JSON.stringify cannot make: nesting a million levels deep, arrays of a
 * million elements, invalid UTF-8, truncations and byte flips. The scale
 * says how large the adversarial parts may grow; `backendSafe` keeps bodies
 * that might pass validation cheap for a real backend (max_tokens 1–2,
 * n ≤ 2, small prompts), so the workerd run measures the gateway.
 */
import fc from "fast-check";

export type FuzzKind = "chat" | "completions";

export interface FuzzBody {
  readonly kind: FuzzKind;
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** What the generator meant to make, for failure messages. */
  readonly label: string;
}

export interface FuzzScale {
  /** Longest run of one character in a text. */
  readonly maxRun: number;
  /** Most elements in a huge array (messages, parts, token ids). */
  readonly maxArray: number;
  /** Deepest nesting. */
  readonly maxDepth: number;
  /** Valid-looking bodies ask the backend for almost nothing. */
  readonly backendSafe: boolean;
  /** The model the gateway serves (the others are 404s). */
  readonly model: string;
}

const utf8 = new TextEncoder();
/** UTF-8 bytes; TextEncoder always returns a fresh ArrayBuffer (some type libraries say ArrayBufferLike). */
const encode = (s: string) => utf8.encode(s) as Uint8Array<ArrayBuffer>;
const q = (s: string) => JSON.stringify(s);

/** A JSON array of `n` copies of `item`, at most ~24 MB of text (past the gateway's 16 MiB cap, never near V8's string limit). */
function repeated(item: string, n: number): string {
  const count = Math.max(1, Math.min(n, Math.floor(24_000_000 / (item.length + 1))));
  return `[${Array.from({ length: count }, () => item).join(",")}]`;
}

/** The scale of the items a huge array repeats: small, so the array's length is what is large. */
const tiny = (scale: FuzzScale): FuzzScale => ({ ...scale, maxRun: 8, maxArray: 3, maxDepth: 3 });

/** Characters that stress pre-tokenization and merging: one of each class the o200k pattern treats apart. */
const RUN_UNITS = [
  "a",
  "A",
  " ",
  "=",
  "-",
  "\n",
  "\t",
  "\r\n",
  "长",
  "😀",
  "\uD800", // lone high surrogate
  "\uDC00", // lone low surrogate
  "\u0301", // combining mark
  "0",
  "'s",
  " ab",
  "<|endoftext|>",
  "\\",
  '"',
];

function text(scale: FuzzScale): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ unit: fc.constantFrom(...RUN_UNITS), maxLength: 30 }),
    fc.lorem({ maxCount: 30 }),
    fc
      .tuple(fc.constantFrom(...RUN_UNITS), fc.integer({ min: 1, max: scale.maxRun }))
      .map(([unit, n]) => unit.repeat(Math.max(1, Math.floor(n / unit.length)))),
  );
}

/** A value for a numeric field the edge bounds: sane, absurd, or the wrong type. */
function countField(sane: fc.Arbitrary<number>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 12, arbitrary: sane },
    { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, 1e300, "4", null, true) },
    { weight: 1, arbitrary: fc.integer() },
  );
}

/** JSON text of a small random value, or of an adversarial one (deep, wide). */
function jsonText(scale: FuzzScale): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: scale.maxDepth }), fc.constantFrom("[", '{"a":'))
        .map(([d, open]) => `${open.repeat(d)}0${(open === "[" ? "]" : "}").repeat(d)}`),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: scale.maxArray }), fc.constantFrom("0", "{}", "[]", '"x"', "1.5"))
        .map(([n, item]) => repeated(item, n)),
    },
  );
}

function contentPart(scale: FuzzScale): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: text(scale).map((t) => `{"type":"text","text":${q(t)}}`) },
    {
      weight: 2,
      arbitrary: fc
        .string()
        .map((u) => `{"type":"image_url","image_url":{"url":${q(`data:image/png;base64,${u}`)}}}`),
    },
    { weight: 2, arbitrary: jsonText(scale).map((j) => `{"type":"x-custom","data":${j}}`) },
    { weight: 1, arbitrary: fc.constant('{"type":"text"}') },
    { weight: 1, arbitrary: fc.constantFrom('{"type":5}', "{}", "null", '"text"') },
  );
}

function content(scale: FuzzScale): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: text(scale).map(q) },
    { weight: 2, arbitrary: fc.array(contentPart(scale), { maxLength: 4 }).map((ps) => `[${ps.join(",")}]`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: scale.maxArray }), contentPart(tiny(scale)))
        .map(([n, part]) => repeated(part, n)),
    },
    { weight: 1, arbitrary: fc.constant("null") },
    { weight: 1, arbitrary: fc.constantFrom("5", "{}", "true") },
  );
}

function message(scale: FuzzScale): fc.Arbitrary<string> {
  const role = fc.oneof(
    fc.constantFrom(
      "system",
      "developer",
      "user",
      "assistant",
      "tool",
      "function",
      "constructor",
      "__proto__",
    ),
    text({ ...scale, maxRun: Math.min(scale.maxRun, 1000) }).filter((r) => r !== ""),
  );
  return fc
    .record(
      {
        role: role.map(q),
        content: content(scale),
        name: text({ ...scale, maxRun: 50 }).map(q),
        tool_call_id: fc.string().map(q),
        tool_calls: fc.oneof(
          fc
            .tuple(fc.string(), fc.oneof(text(scale).map(q), jsonText(scale)))
            .map(
              ([name, args]) => `[{"type":"function","function":{"name":${q(name)},"arguments":${args}}}]`,
            ),
          jsonText(scale),
        ),
      },
      { requiredKeys: ["role"] },
    )
    .map(
      (fields) =>
        `{${Object.entries(fields)
          .map(([k, v]) => `${q(k)}:${v}`)
          .join(",")}}`,
    );
}

function messages(scale: FuzzScale): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc.array(message(scale), { minLength: 1, maxLength: 5 }).map((ms) => `[${ms.join(",")}]`),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: scale.maxArray }), message(tiny(scale)))
        .map(([n, m]) => repeated(m, n)),
    },
    { weight: 1, arbitrary: fc.constantFrom("[]", "null", '"hi"', "{}") },
  );
}

function prompt(scale: FuzzScale): fc.Arbitrary<string> {
  const ids = (n: number) => `[${Array.from({ length: n }, (_, i) => (i * 7919) % 200_000).join(",")}]`;
  return fc.oneof(
    { weight: 3, arbitrary: text(scale).map(q) },
    {
      weight: 2,
      arbitrary: fc
        .array(text({ ...scale, maxRun: 100 }), { maxLength: 4 })
        .map((ts) => `[${ts.map(q).join(",")}]`),
    },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: scale.maxArray }).map(ids) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1, max: 200 })
        .map((n) => `[${Array.from({ length: n }, () => ids(3)).join(",")}]`),
    },
    { weight: 1, arbitrary: fc.constantFrom("[1.5]", '[1,"a"]', "[[1],2]", "null", "{}", "[null]") },
  );
}

/** An arbitrary of JS values as JSON text. */
const js = (a: fc.Arbitrary<unknown>): fc.Arbitrary<string> => a.map((v) => JSON.stringify(v) ?? "null");

/** The common fields, as `"key":value` JSON members (some absent). */
function commonFields(scale: FuzzScale): fc.Arbitrary<string[]> {
  const tokens = scale.backendSafe ? fc.constantFrom(1, 2) : fc.integer({ min: 1, max: 1 << 20 });
  const n = scale.backendSafe ? fc.constantFrom(1, 2) : fc.integer({ min: 1, max: 128 });
  const fields: Record<string, fc.Arbitrary<string>> = {
    model: fc.oneof(
      { weight: 8, arbitrary: fc.constant(q(scale.model)) },
      { weight: 1, arbitrary: js(fc.oneof(fc.string(), fc.constantFrom(5, null, ""))) },
    ),
    max_tokens: js(
      scale.backendSafe
        ? fc.oneof({ weight: 3, arbitrary: tokens }, { weight: 1, arbitrary: countField(tokens) })
        : countField(tokens),
    ),
    max_completion_tokens: js(countField(tokens)),
    n: js(countField(n)),
    best_of: js(countField(fc.integer({ min: 1, max: 20 }))),
    stream: js(fc.oneof({ weight: 8, arbitrary: fc.boolean() }, fc.constantFrom("yes", null))),
    stop: js(
      fc.oneof(
        { weight: 4, arbitrary: fc.string() },
        { weight: 4, arbitrary: fc.array(fc.string(), { maxLength: 8 }) },
        fc.array(fc.string(), { minLength: 60, maxLength: 70 }),
        fc.constantFrom(null, 5),
      ),
    ),
    prompt_cache_key: js(fc.oneof(fc.string(), fc.constant(null))),
    tools: fc.oneof(
      fc.array(jsonText(scale), { maxLength: 3 }).map((ts) => `[${ts.join(",")}]`),
      jsonText(scale),
    ),
    // Unknown fields: they must pass through untouched.
    top_k: js(fc.integer()),
    vendor_extension: jsonText(scale),
  };
  return fc
    .record(fields, { requiredKeys: scale.backendSafe ? ["model", "max_tokens"] : ["model"] })
    .map((members) => Object.entries(members).map(([k, v]) => `${q(k)}:${v}`));
}

/** A body assembled from members, then sometimes damaged: truncated, bytes flipped or inserted. */
function damaged(body: fc.Arbitrary<Uint8Array<ArrayBuffer>>): fc.Arbitrary<Uint8Array<ArrayBuffer>> {
  return fc
    .tuple(body, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { maxLength: 4 }), fc.nat())
    .map(([bytes, flips, cut]) => {
      const out = bytes.slice(0, bytes.length - (cut % Math.max(1, Math.min(bytes.length, 40))));
      for (const [at, b] of flips) if (out.length > 0) out[at % out.length] = b;
      return out;
    });
}

/**
 * A valid chat body whose prompt is hostile to keying: long runs of one
 * character, spread over one message, many messages, many content parts,
 * a role, a tool schema or tool-call arguments.
 */
function hostilePrompt(scale: FuzzScale): fc.Arbitrary<Uint8Array<ArrayBuffer>> {
  const run = fc
    .tuple(fc.constantFrom(...RUN_UNITS), fc.integer({ min: 1, max: scale.maxRun }))
    .map(([unit, n]) => unit.repeat(Math.max(1, Math.floor(n / unit.length))));
  const user = (c: string) => `{"role":"user","content":${c}}`;
  const prompt = fc.oneof(
    run.map((r) => `[${user(q(r))}]`),
    fc
      .tuple(run, fc.integer({ min: 2, max: 2000 }))
      .map(([r, k]) => repeated(user(q(r.slice(0, Math.ceil(r.length / k)))), k)),
    fc
      .tuple(run, fc.integer({ min: 2, max: 5000 }))
      .map(
        ([r, k]) =>
          `[${user(repeated(`{"type":"text","text":${q(r.slice(0, Math.ceil(r.length / k)))}}`, k))}]`,
      ),
    run.map((r) => `[{"role":${q(r)},"content":"hi"}]`),
    run.map(
      (r) => `[${user('"hi"')}],"tools":[{"type":"function","function":{"name":"f","description":${q(r)}}}]`,
    ),
    run.map(
      (r) =>
        `[{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":{"a":${q(r)}}}}]}]`,
    ),
  );
  return prompt.map((ms) => encode(`{"model":${q(scale.model)},"max_tokens":1,"messages":${ms}}`));
}

/** A body; fast-check prints it by label and size, not as megabytes of bytes. */
function fuzzBody(kind: FuzzKind, bytes: Uint8Array<ArrayBuffer>, label: string): FuzzBody {
  const head = new TextDecoder().decode(bytes.subarray(0, 120));
  const body = { kind, bytes, label };
  Object.defineProperty(body, fc.toStringMethod, {
    value: () => `${label}, ${bytes.length} bytes: ${JSON.stringify(head)}…`,
  });
  return body;
}

/** Random and adversarial bodies for both endpoints. */
export function fuzzBodies(scale: FuzzScale): fc.Arbitrary<FuzzBody> {
  const chat = fc
    .tuple(commonFields(scale), messages(scale))
    .map(([fields, ms]) => encode(`{${[...fields, `"messages":${ms}`].join(",")}}`));
  const completions = fc
    .tuple(commonFields(scale), prompt(scale))
    .map(([fields, p]) => encode(`{${[...fields, `"prompt":${p}`].join(",")}}`));
  // Invalid UTF-8 inside a JSON string: no quote or backslash bytes, so the JSON stays well-formed.
  const invalidUtf8 = fc
    .uint8Array({ minLength: 1, maxLength: 200 })
    .map((raw) => raw.map((b) => (b === 0x22 || b === 0x5c ? 0xff : b)))
    .map((raw) => {
      const head = encode(`{"model":${q(scale.model)},"max_tokens":1,"messages":[{"role":"user","content":"`);
      const tail = encode('"}]}');
      const out = new Uint8Array(head.length + raw.length + tail.length);
      out.set(head);
      out.set(raw, head.length);
      out.set(tail, head.length + raw.length);
      return out;
    });
  return fc.oneof(
    { weight: 6, arbitrary: chat.map((bytes) => fuzzBody("chat", bytes, "chat")) },
    {
      weight: 4,
      arbitrary: hostilePrompt(scale).map((bytes) => fuzzBody("chat", bytes, "hostile prompt")),
    },
    {
      weight: 3,
      arbitrary: completions.map((bytes) => fuzzBody("completions", bytes, "completions")),
    },
    {
      weight: 2,
      arbitrary: damaged(chat).map((bytes) => fuzzBody("chat", bytes, "damaged chat")),
    },
    {
      weight: 1,
      arbitrary: invalidUtf8.map((bytes) => fuzzBody("chat", bytes, "invalid UTF-8")),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 300 })
        .map((bytes) => fuzzBody("chat", new Uint8Array(bytes), "random bytes")),
    },
  );
}
