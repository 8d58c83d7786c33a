/**
 * A streaming check of a JSON body's shape — nesting depth, number of
 * values, number of object keys — on the raw bytes as they arrive, so a body
 * that would be costly to parse is refused before JSON.parse sees it, and
 * before the rest of it is read.
 *
 * It is not a parser: it only tracks whether it is inside a string (and an
 * escape), and counts structural bytes outside strings. Every structural
 * character of JSON is ASCII and no byte of a multi-byte UTF-8 sequence is,
 * so scanning bytes is exact. Strings (most of a body) are crossed with
 * indexOf from quote to quote; syntax errors are left to JSON.parse.
 */
import { GatewayError } from "../errors";

export interface JsonShapeLimits {
  readonly maxDepth: number;
  readonly maxValues: number;
  readonly maxKeys: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const tooComplex = (what: string) =>
  new GatewayError(
    400,
    "invalid_request_error",
    "json_too_complex",
    `The JSON body is too complex to accept: ${what}.`,
  );

export class JsonShapeMeter {
  private depth = 0;
  /** Containers opened and elements after a comma: every value but top-level scalars. */
  private values = 0;
  private keys = 0;
  private inString = false;
  /** The previous chunk ended inside a string on a backslash. */
  private escaped = false;

  constructor(private readonly limits: JsonShapeLimits) {}

  /** Scans the next chunk; throws a 400 GatewayError (json_too_complex) once a limit is passed. */
  feed(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    if (this.escaped) {
      this.escaped = false;
      i = 1;
    }
    while (i < n) {
      if (this.inString) {
        // Jump to the next quote; it ends the string unless an odd run of backslashes precedes it.
        // The run is counted back to where this scan of the string started (nothing before it is
        // pending), so each byte is looked at a bounded number of times.
        for (;;) {
          const q = nextQuote(chunk, i);
          const end = q < 0 ? n : q;
          let k = end;
          while (k > i && chunk[k - 1] === BACKSLASH) k--;
          const odd = ((end - k) & 1) === 1;
          if (q < 0) {
            // The string goes on in the next chunk; an odd run at the end escapes its first byte.
            this.escaped = odd;
            return;
          }
          i = q + 1;
          if (!odd) break;
        }
        this.inString = false;
        continue;
      }
      const c = chunk[i++]!;
      if (c === QUOTE) this.inString = true;
      else if (c === COMMA) this.values++;
      else if (c === COLON) this.keys++;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        this.values++;
        if (++this.depth > this.limits.maxDepth)
          throw tooComplex(`nesting deeper than ${this.limits.maxDepth} levels`);
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) this.depth--;
      else continue;
      if (this.values > this.limits.maxValues) throw tooComplex(`more than ${this.limits.maxValues} values`);
      if (this.keys > this.limits.maxKeys) throw tooComplex(`more than ${this.limits.maxKeys} object keys`);
    }
  }
}

/** Index of the next quote at or after `from`, or -1: a short loop first (escaped quotes come close together), then indexOf. */
function nextQuote(chunk: Uint8Array, from: number): number {
  const near = Math.min(chunk.length, from + 32);
  for (let j = from; j < near; j++) if (chunk[j] === QUOTE) return j;
  return near < chunk.length ? chunk.indexOf(QUOTE, near) : -1;
}
