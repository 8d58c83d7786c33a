/**
 * Request bodies of the two inference endpoints, validated permissively: we
 * check only the fields the gateway reads (and their types), and every
 * other field passes through to the backend unchanged (loose objects), so
 * engine-specific extensions (vLLM's `top_k`, SGLang's `regex`...) work.
 */
import { z } from "zod";

const optionalCount = z.number().int("must be an integer").nonnegative("must be >= 0").nullable().optional();

const contentPart = z.looseObject({ type: z.string({ error: "must be a string" }) });

const message = z.looseObject({
  role: z.string({ error: "must be a string" }).min(1, "must be non-empty"),
  content: z
    .union([z.string(), z.array(contentPart), z.null()], {
      error: "must be a string, an array of content parts, or null",
    })
    .optional(),
  name: z.string().optional(),
});

const common = {
  model: z.string({ error: "is required and must be a string" }).min(1, "must be non-empty"),
  stream: z.boolean({ error: "must be a boolean" }).nullable().optional(),
  stream_options: z
    .looseObject({ include_usage: z.boolean({ error: "must be a boolean" }).nullable().optional() })
    .nullable()
    .optional(),
  max_tokens: optionalCount,
  prompt_cache_key: z.string({ error: "must be a string" }).nullable().optional(),
};

export const chatBodySchema = z.looseObject({
  ...common,
  messages: z.array(message, { error: "is required and must be an array" }).min(1, "must not be empty"),
  max_completion_tokens: optionalCount,
  tools: z.array(z.unknown(), { error: "must be an array" }).nullable().optional(),
});

const tokenIds = z.array(z.number().int());
export const completionsBodySchema = z.looseObject({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)], {
    error: "is required and must be a string, an array of strings, or token ids",
  }),
});

export type ChatBody = z.infer<typeof chatBodySchema>;
export type CompletionsBody = z.infer<typeof completionsBodySchema>;
export type InferenceKind = "chat" | "completions";
export type InferenceBody = ChatBody | CompletionsBody;
