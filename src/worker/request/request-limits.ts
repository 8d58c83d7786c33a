/**
 * Every bound the edge puts on one inference request, in one place. What a
 * client can make the gateway — and the backend behind it — do is bounded
 * by these constants, never by what it sends. They are fixed, not tunables:
 * no var changes them and neither the routing core nor the simulator reads
 * them, so they stay out of src/routing/defaults.ts. (Keying has its own bounds,
 * next to the code they bound: MAX_KEYED_CHARS_PER_TOKEN in src/prefix/request-keys.ts,
 * MAX_PIECE_RUN in tokenizer.ts.)
 */

/** Requests above this are refused (413): 16 MiB leaves room for 128k-token prompts and inline images. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Longest wait for the next piece of a request body (408 after it): a body that stops arriving — an
 * upload left unterminated, or one trickled to hold the request open — ends instead of waiting for the
 * client to give up. A deadline between chunks, not on the whole body, so a large body over a slow link
 * is never cut while it moves; 30 s of silence is far past any stall a live connection recovers from.
 */
export const BODY_IDLE_MS = 30_000;

/**
 * JSON shape, checked on the bytes as they arrive, before JSON.parse: what
 * parsing costs is set by how many values and keys a body holds, not by its
 * size (16 MiB of `[[[[…` takes V8 3.6 s to parse; 16 MiB of `[{},{},…` 2 s;
 * one object of 1M keys 1 s — against ~30 ms for 16 MiB of prompt text).
 *
 * - depth 128: a body is ~5 levels deep around a tool's JSON schema; the
 *   rest leaves a schema ~60 levels of nesting;
 * - 2^20 values: a token-id prompt of a million tokens;
 * - 2^18 object keys: 30k tool-calling messages (8 keys each), more than a
 *   million-token context holds; keys are the costly part of parsing (up
 *   to ~0.6 µs each when they are all different).
 */
export const MAX_JSON_DEPTH = 128;
export const MAX_JSON_VALUES = 1 << 20;
export const MAX_JSON_KEYS = 1 << 18;

/**
 * max_tokens / max_completion_tokens: 1 to 2^20. No served model has a
 * context (and so an output) longer than a million tokens, and engines that
 * keep token counts in 32-bit integers (llama.cpp's n_predict, where −1
 * means "until the context is full") must never see values near 2^31.
 */
export const MAX_OUTPUT_TOKENS = 1 << 20;

/**
 * Choices generated for one request: `n` (OpenAI's bound is 128), and for
 * /v1/completions prompts in the batch × max(n, best_of), the same rule
 * NVIDIA Dynamo applies (batch × n ≤ 128): each choice is a whole
 * generation on the backend.
 */
export const MAX_CHOICES = 128;

/** /v1/completions best_of: OpenAI's bound (each candidate is generated, then all but n are dropped). */
export const MAX_BEST_OF = 20;

/**
 * Stop sequences: OpenAI allows 4; open engines any number, and compare
 * every one of them with the output after each generated token. 64 is
 * generous for clients written against those engines, and finite.
 */
export const MAX_STOP_SEQUENCES = 64;

/**
 * Characters of a model name. Served names are short (Hugging Face repo ids
 * are at most ~100); the name is echoed in the 404 for an unknown model and
 * in the request's log line, which must not grow with what a client sends.
 */
export const MAX_MODEL_CHARS = 256;
