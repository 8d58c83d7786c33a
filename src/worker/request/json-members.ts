/**
 * Where a top-level member's value sits in the text of a JSON object, so one
 * member can be replaced without re-serialising the rest. Re-serialising is
 * not neutral: JSON.parse reads every number as a double, so an integer past
 * 2^53 (a 64-bit `seed`) comes back as a different integer, and 1e400 as
 * `null` — a request silently changed on its way to the backend.
 *
 * The text must be valid JSON (callers have parsed it): this is a scanner
 * that only finds boundaries, not a validator. Strings are crossed with
 * indexOf from quote to quote, so the cost is close to one pass over the
 * text with few steps per character.
 */

export interface Span {
  /** Index of the value's first character. */
  readonly start: number;
  /** Index just past the value's last character. */
  readonly end: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  let at = i + 1;
  for (;;) {
    const q = text.indexOf('"', at);
    if (q < 0) throw new Error("unterminated string in JSON text");
    let backslashes = 0;
    for (let k = q - 1; k > i && text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    at = q + 1;
  }
}

/** Index just past the value that starts at `i` (whitespace already skipped). */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return skipString(text, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    let at = i;
    while (at < text.length) {
      const d = text.charCodeAt(at);
      if (d === 0x22) {
        at = skipString(text, at);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return at + 1;
      }
      at++;
    }
    throw new Error("unterminated container in JSON text");
  }
  // A number, true, false or null: it runs to the next delimiter.
  let at = i;
  while (at < text.length) {
    const d = text.charCodeAt(at);
    if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
    at++;
  }
  return at;
}

/**
 * The value spans of every top-level member of `text` (a JSON object) whose
 * key is `name`, in order. Duplicate keys are all found: JSON.parse keeps the
 * last, other parsers may keep the first, so a caller replacing a member
 * replaces every copy.
 */
export function memberValueSpans(text: string, name: string): Span[] {
  const spans: Span[] = [];
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) throw new Error("JSON text is not an object");
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 0x7d) return spans;
  for (;;) {
    const keyEnd = skipString(text, i);
    const rawKey = text.slice(i, keyEnd);
    // A key with escapes (`"stream\u005foptions"`) is the same key to a parser: decode it to compare.
    const key = rawKey.includes("\\") ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) throw new Error("expected ':' in JSON text");
    i = skipSpace(text, i + 1);
    const end = skipValue(text, i);
    if (key === name) spans.push({ start: i, end });
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 0x2c) return spans;
    i = skipSpace(text, i + 1);
  }
}

/** `text` with the value of every top-level member named `name` replaced by `json`. */
export function replaceMemberValue(text: string, name: string, json: string): string {
  const spans = memberValueSpans(text, name);
  let out = text;
  for (let k = spans.length - 1; k >= 0; k--) {
    const { start, end } = spans[k]!;
    out = out.slice(0, start) + json + out.slice(end);
  }
  return out;
}
