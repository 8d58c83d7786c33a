/**
 * The part of a text's estimated count (ceil(chars / 4), request-keys.ts) that only the estimate claims:
 * characters that continue a run of one repeated character past MAX_KEYED_CHARS_PER_TOKEN.
 *
 * Why: past the key window the Worker counts a text at 4 characters a token without reading it. o200k
 * folds a run of one character (spaces, rulers, one repeated letter) into tokens of up to ~128
 * characters, so ~1 MB of spaces is counted 260,000 and is ~8,000 tokens. Routing still charges the
 * count as load (est-bound-2 decided that), but the affinity index evicts at route only for the part
 * the text can honestly hold, and for the rest waits for the engine's usage.prompt_tokens
 * (src/routing/router.ts record): one client's padded prompt no longer costs every other client its
 * affinity on that backend (bench/results/red-team.md, "index-wipe", left alone 1).
 *
 * The threshold is the Worker's own edge of ordinary text, MAX_KEYED_CHARS_PER_TOKEN characters a token:
 * the first that many characters of a run count as ordinary text, the rest as unconfirmed. Ordinary prose
 * and code rarely repeat one character that often (deep indentation does, and the tokenizer folds it
 * too); when they do, the cost is when the index evicts (at settle, once the engine confirms), not
 * whether. No allocation; about a quarter of the characters read (runExcessTokens).
 */

import { CHARS_PER_TOKEN_ESTIMATE, MAX_KEYED_CHARS_PER_TOKEN } from "./text-estimate";

/** Characters of one run that count as ordinary text (the keying's own edge); the rest of the run is unconfirmed. */
export const ORDINARY_RUN_CHARS = MAX_KEYED_CHARS_PER_TOKEN;

/**
 * Tokens of `text[from..]`'s estimate that its runs of one repeated UTF-16 unit claim past
 * ORDINARY_RUN_CHARS each: floor(those characters / 4), never more than the estimate of text[from..].
 *
 * It reads one character in PROBE_STRIDE and only the runs it finds: a run long enough to claim anything
 * (more than ORDINARY_RUN_CHARS = 2 × PROBE_STRIDE characters) holds a probe p with text[p + PROBE_STRIDE]
 * in the run too, and each run is measured whole from there. Exact, at about a quarter of a plain scan's cost
 * on prose (a 16 MiB body is the most the Worker reads).
 */
export function runExcessTokens(text: string, from = 0): number {
  const start = Math.max(0, from);
  const end = text.length;
  let excess = 0;
  // The first probe on the stride's grid at or after `start`, so a run is found however it is aligned.
  let p = start;
  while (p + PROBE_STRIDE < end) {
    const c = text.charCodeAt(p);
    if (text.charCodeAt(p + PROBE_STRIDE) !== c) {
      p += PROBE_STRIDE;
      continue;
    }
    let a = p;
    while (a > start && text.charCodeAt(a - 1) === c) a--;
    let b = p + 1;
    while (b < end && text.charCodeAt(b) === c) b++;
    if (b - a > ORDINARY_RUN_CHARS) excess += b - a - ORDINARY_RUN_CHARS;
    // Past this run, or on to the next probe when the pair was no run (the run through p ended before
    // p + PROBE_STRIDE): a run that claims anything holds two probes a stride apart, so none is missed, and
    // a text whose period divides the stride ("abcd" repeated: every pair equal, every run 1) is read a
    // probe at a time, not one character at a time with four reads each.
    p = Math.max(b, p + PROBE_STRIDE);
  }
  return Math.floor(excess / CHARS_PER_TOKEN_ESTIMATE);
}

/** Characters between two probes: half of ORDINARY_RUN_CHARS (see runExcessTokens). */
const PROBE_STRIDE = ORDINARY_RUN_CHARS / 2;

/**
 * runExcessTokens summed over a JSON value's strings (keys and values), for one measured without being
 * rendered (canonical-prompt.ts json): a run inside a string is the same run in its rendering (JSON escapes
 * no printable character but `"` and `\\`; a run of one escaped control character claims what an unescaped
 * one would, which only waits for the engine's count). No allocation past the walk.
 */
export function jsonRunExcessTokens(v: unknown): number {
  if (typeof v === "string") return runExcessTokens(v);
  if (Array.isArray(v)) {
    let n = 0;
    for (const x of v) n += jsonRunExcessTokens(x);
    return n;
  }
  if (v === null || typeof v !== "object") return 0;
  let n = 0;
  for (const [k, x] of Object.entries(v)) n += runExcessTokens(k) + jsonRunExcessTokens(x);
  return n;
}
