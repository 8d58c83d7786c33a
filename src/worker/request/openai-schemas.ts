/**
 * Request bodies of the two inference endpoints, validated permissively: we
 * check only the fields the gateway reads or that multiply the backend's
 * work (request-limits.ts), and every other field passes through to the
 * backend unchanged (loose objects), so engine-specific extensions (vLLM's
 * `top_k`, SGLang's `regex`...) work.
 *
 * Arrays the client sizes (messages, content parts, stop, prompt batches)
 * are checked element by element and stop at the first bad one: z.array()
 * reports every bad element, and a body of 100k bad messages would cost
 * 100k issue objects (~2 µs and ~700 bytes each) to say the same thing.
 */
import { z } from "zod";
import {
  MAX_BEST_OF,
  MAX_CHOICES,
  MAX_MODEL_CHARS,
  MAX_OUTPUT_TOKENS,
  MAX_STOP_SEQUENCES,
} from "./request-limits";

/** The article and name of each type zod says a field expected. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: "an object",
  array: "an array",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

/**
 * What a check with no message of its own tells the client, in the gateway's words (`must be an object`),
 * never zod's (`Invalid input: expected object, received string`). Given to every parse of a body (the
 * schemas below and listOf's elements), so a field added without a message still speaks like the others.
 */
const inGatewayWords: z.core.$ZodErrorMap = (issue) =>
  issue.code === "invalid_type"
    ? `must be ${TYPE_NAMES[issue.expected] ?? `of type ${issue.expected}`}`
    : "is not a valid value";

/** An optional integer field within [min, max] (null allowed: OpenAI's SDKs send it for "unset"). */
const boundedInt = (min: number, max: number) =>
  z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(min, `must be >= ${min}`)
    .max(max, `must be <= ${max}`)
    .nullable()
    .optional();

/**
 * An array whose elements are validated in order, stopping at the first bad
 * one (its issue, with its index in the path). Elements are returned as
 * given: the element schemas have no transforms.
 */
function listOf<S extends z.ZodType>(
  element: S,
  opts: { readonly error: string; readonly min?: number; readonly max?: number },
) {
  return z
    .custom<z.output<S>[]>((v) => Array.isArray(v), { error: opts.error })
    .superRefine((items, ctx) => {
      if (opts.min !== undefined && items.length < opts.min) {
        ctx.addIssue({
          code: "custom",
          message: opts.min === 1 ? "must not be empty" : `must hold at least ${opts.min} items`,
          input: items,
        });
        return;
      }
      if (opts.max !== undefined && items.length > opts.max) {
        ctx.addIssue({ code: "custom", message: `must hold at most ${opts.max} items`, input: items });
        return;
      }
      for (let i = 0; i < items.length; i++) {
        const r = element.safeParse(items[i], { error: inGatewayWords });
        if (!r.success) {
          const first = r.error.issues[0]!;
          ctx.addIssue({ code: "custom", message: first.message, path: [i, ...first.path], input: items[i] });
          return;
        }
      }
    });
}

const contentPart = z.looseObject({ type: z.string({ error: "must be a string" }) });

const message = z.looseObject({
  role: z.string({ error: "must be a string" }).min(1, "must be non-empty"),
  content: z
    .union([z.string(), z.null(), listOf(contentPart, { error: "must be an array" })], {
      error: "must be a string, an array of content parts, or null",
    })
    .optional(),
  name: z.string().optional(),
});

const common = {
  model: z
    .string({ error: "is required and must be a string" })
    .min(1, "must be non-empty")
    .max(MAX_MODEL_CHARS, `must be at most ${MAX_MODEL_CHARS} characters`),
  stream: z.boolean({ error: "must be a boolean" }).nullable().optional(),
  stream_options: z
    .looseObject({ include_usage: z.boolean({ error: "must be a boolean" }).nullable().optional() })
    .nullable()
    .optional(),
  max_tokens: boundedInt(1, MAX_OUTPUT_TOKENS),
  n: boundedInt(1, MAX_CHOICES),
  stop: z
    .union(
      [
        z.string(),
        listOf(z.string({ error: "must be a string" }), {
          error: "must be an array",
          max: MAX_STOP_SEQUENCES,
        }),
      ],
      { error: `must be a string or an array of at most ${MAX_STOP_SEQUENCES} strings` },
    )
    .nullable()
    .optional(),
  prompt_cache_key: z.string({ error: "must be a string" }).nullable().optional(),
};

export const chatBodySchema = z.looseObject({
  ...common,
  messages: listOf(message, { error: "is required and must be an array", min: 1 }),
  max_completion_tokens: boundedInt(1, MAX_OUTPUT_TOKENS),
  tools: z.array(z.unknown(), { error: "must be an array" }).nullable().optional(),
});

export type Prompt = string | string[] | number[] | number[][];

/** Which of the four prompt shapes `v` has, or the first place it goes wrong. */
function checkPrompt(v: unknown): { count: number } | { path: (string | number)[]; message: string } {
  const shapes = "must be a string, an array of strings, or token ids";
  if (typeof v === "string") return { count: 1 };
  if (!Array.isArray(v)) return { path: [], message: `is required and ${shapes}` };
  if (v.length === 0) return { count: 0 };
  const first = v[0];
  const isId = (x: unknown) => Number.isSafeInteger(x);
  if (typeof first === "number" || Array.isArray(first)) {
    // Token ids, or a batch of token-id prompts.
    if (typeof first === "number") {
      for (let i = 0; i < v.length; i++)
        if (!isId(v[i])) return { path: [i], message: "must be an integer token id" };
      return { count: 1 };
    }
    for (let i = 0; i < v.length; i++) {
      const p = v[i];
      if (!Array.isArray(p)) return { path: [i], message: "must be an array of token ids" };
      for (let j = 0; j < p.length; j++)
        if (!isId(p[j])) return { path: [i, j], message: "must be an integer token id" };
    }
    return { count: v.length };
  }
  for (let i = 0; i < v.length; i++)
    if (typeof v[i] !== "string") return { path: [i], message: `must be a string (${shapes})` };
  return { count: v.length };
}

/**
 * Prompts in a validated /v1/completions `prompt`: a list of strings or of token-id lists is a batch, each
 * its own sequence on the engine; a string or one token-id list is one.
 */
export function promptCount(prompt: Prompt): number {
  return typeof prompt === "string" || typeof prompt[0] === "number" ? 1 : prompt.length;
}

export const completionsBodySchema = z
  .looseObject({
    ...common,
    // Optional to zod so that a missing prompt reaches checkPrompt, whose message says what it must be;
    // zod would refuse the absent key first with its own "expected nonoptional".
    prompt: z.custom<Prompt>(() => true).optional(),
    best_of: boundedInt(1, MAX_BEST_OF),
  })
  .superRefine((body, ctx) => {
    const p = checkPrompt(body.prompt);
    if ("path" in p) {
      ctx.addIssue({ code: "custom", message: p.message, path: ["prompt", ...p.path], input: body.prompt });
      return;
    }
    // Every prompt of a batch is generated max(n, best_of) times: bound the product, not only its factors.
    const perPrompt = Math.max(body.n ?? 1, body.best_of ?? 1);
    if (p.count * perPrompt > MAX_CHOICES)
      ctx.addIssue({
        code: "custom",
        message:
          perPrompt === 1
            ? `must hold at most ${MAX_CHOICES} prompts`
            : `holds ${p.count} prompts × ${perPrompt} choices each; at most ${MAX_CHOICES} choices per request`,
        path: [perPrompt === 1 ? "prompt" : (body.best_of ?? 1) > (body.n ?? 1) ? "best_of" : "n"],
        input: body.prompt,
      });
  })
  // checkPrompt refused every body without a prompt above, so the parsed body has one: said in its type
  // (a shallow copy; an intersection type would not narrow `typeof prompt === "string"` to a string).
  .transform((body) => ({ ...body, prompt: body.prompt as Prompt }));

export type ChatBody = z.infer<typeof chatBodySchema>;
export type CompletionsBody = z.output<typeof completionsBodySchema>;
export type InferenceKind = "chat" | "completions";
export type InferenceBody = ChatBody | CompletionsBody;

/** Parses a body against the kind's schema, with the gateway's wording for every message. */
export function parseInferenceBody(kind: InferenceKind, raw: unknown) {
  return kind === "chat"
    ? chatBodySchema.safeParse(raw, { error: inGatewayWords })
    : completionsBodySchema.safeParse(raw, { error: inGatewayWords });
}
