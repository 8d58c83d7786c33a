/**
 * Whether a body's first bytes are an event stream, whatever its content-type says. A streamed request's
 * answer is relayed as SSE (the usage chunk the gateway asked for stripped) when either says so: a proxy
 * that rewrote the content-type, or an engine that never set it, would otherwise have its stream relayed
 * as a JSON body, that chunk and all (bench/results/red-team.md, "Found and left alone" 2).
 *
 * An SSE stream's first line is a field (`data:`, `event:`, `id:`, `retry:`) or a comment (`:`), perhaps
 * after a byte order mark; a JSON body starts with `{` or `[` (after whitespace), never with a letter or
 * a colon. A first chunk shorter than a field name is judged by what it has (it is a prefix of one).
 */

const FIELDS = ["data:", "event:", "id:", "retry:", ":"];
/** The longest field name with its colon: as many characters as are looked at. */
const LOOKED_AT = 6;

const hasBom = (b: Uint8Array) => b.byteLength >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

export function startsLikeEventStream(first: Uint8Array): boolean {
  let head = "";
  for (let i = hasBom(first) ? 3 : 0; i < first.byteLength && head.length < LOOKED_AT; i++) {
    const b = first[i]!;
    // Only ASCII can start a field.
    if (b >= 0x80) return false;
    head += String.fromCharCode(b);
  }
  if (head === "") return false;
  return FIELDS.some((f) => (head.length >= f.length ? head.startsWith(f) : f.startsWith(head)));
}

/** Decodes the few first bytes startsAsJson reads (one for the module: asked of every streamed answer). */
const HEAD_DECODER = new TextDecoder();

/** A body's first bytes open a JSON object or array (after whitespace and a BOM): no event stream does. */
export function startsAsJson(first: Uint8Array): boolean {
  return /^[\s\ufeff]*[{[]/.test(HEAD_DECODER.decode(first.subarray(0, 64)));
}
