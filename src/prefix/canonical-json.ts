/**
 * JSON values inside the canonical prompt (tool schemas, tool-call
 * arguments given as objects, content parts of unknown types): rendered as
 * JSON with object keys sorted at every level, so clients that order keys
 * differently get the same keys — and never rendered further than the
 * keys can use.
 *
 * One walk serves three readers: a bounded rendering (the first `limit`
 * characters, exact, plus the length of the whole), a length estimate
 * (nothing rendered: for what lies past the keyed prefix), and a
 * fingerprint (everything hashed, nothing kept: for values that are keyed
 * by identity, not tokenized). The walk recurses, with a depth guard: the
 * request reader refuses bodies nested deeper than MAX_JSON_DEPTH first.
 */

/** Nesting the walk accepts; above the request reader's MAX_JSON_DEPTH, so only direct callers can reach it. */
const MAX_WALK_DEPTH = 512;

/** Receives a rendering in pieces: punctuation and literals as they are, strings to be quoted. */
interface JsonOut {
  raw(s: string): void;
  str(s: string): void;
}

function walk(v: unknown, out: JsonOut, depth: number): void {
  if (typeof v === "string") out.str(v);
  else if (typeof v === "number") out.raw(Number.isFinite(v) ? String(v) : "null");
  else if (typeof v === "boolean") out.raw(v ? "true" : "false");
  else if (v === null || typeof v !== "object") out.raw("null");
  else walkContainer(v, out, depth);
}

function walkContainer(v: object, out: JsonOut, depth: number): void {
  if (depth >= MAX_WALK_DEPTH) throw new RangeError(`JSON value nested deeper than ${MAX_WALK_DEPTH}`);
  if (Array.isArray(v)) {
    out.raw("[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.raw(",");
      walk(v[i], out, depth + 1);
    }
    out.raw("]");
    return;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  out.raw("{");
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out.raw(",");
    out.str(keys[i]!);
    out.raw(":");
    walk(obj[keys[i]!], out, depth + 1);
  }
  out.raw("}");
}

/** Renders exactly up to `limit` characters, then only counts (strings as their length + 2: escapes not counted). */
class BoundedText implements JsonOut {
  private readonly parts: string[] = [];
  /** Characters rendered (exact, may pass `limit` by the last piece). */
  private rendered = 0;
  /** Characters past the rendering (estimated). */
  private counted = 0;

  constructor(private readonly limit: number) {}

  raw(s: string): void {
    if (this.rendered >= this.limit) this.counted += s.length;
    else this.keep(s);
  }

  str(s: string): void {
    if (this.rendered >= this.limit) {
      this.counted += s.length + 2;
      return;
    }
    // Each input unit renders as at least one output unit, so the first `room` output units of
    // the quoted slice equal those of the quoted whole; the extra unit keeps a split surrogate pair past them.
    const room = this.limit - this.rendered;
    if (s.length > room + 1) {
      this.keep(JSON.stringify(s.slice(0, room + 1)));
      this.counted += s.length - room - 1;
    } else this.keep(JSON.stringify(s));
  }

  result(): { text: string; length: number } {
    const text = this.parts.join("");
    const cut = text.length > this.limit ? text.slice(0, this.limit) : text;
    return { text: cut, length: text.length + this.counted };
  }

  private keep(s: string): void {
    this.parts.push(s);
    this.rendered += s.length;
  }
}

/**
 * The sorted-key JSON of `v`, cut to its first `limit` characters (exactly
 * those of the whole rendering), and the whole rendering's length (exact up
 * to the cut, estimated past it).
 */
export function renderStableJson(
  v: unknown,
  limit = Number.POSITIVE_INFINITY,
): { text: string; length: number } {
  const out = new BoundedText(limit);
  walk(v, out, 0);
  return out.result();
}

/** Estimated length of the sorted-key JSON of `v`, rendering nothing. */
export function stableJsonLength(v: unknown): number {
  return renderStableJson(v, 0).length;
}

/** 64 bits of FNV-1a and a Murmur-style lane over UTF-16 units, fed in pieces. */
class Fingerprinter {
  private a = 0x811c9dc5;
  private b: number;

  constructor(seed: number) {
    this.b = 0x9747b28c ^ seed;
  }

  update(s: string): void {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    this.a = a;
    this.b = b;
  }

  digest(): [number, number] {
    let a = this.a;
    let b = this.b;
    a ^= a >>> 16;
    a = Math.imul(a, 0x85ebca6b);
    a ^= a >>> 13;
    b ^= b >>> 13;
    b = Math.imul(b, 0xc2b2ae35);
    b ^= b >>> 16;
    return [a >>> 0, b >>> 0];
  }
}

/**
 * 64-bit fingerprint of a string as two 32-bit words. Media arrive as URLs
 * or base64 data: hashing the string (~1 ms per MB) means the bytes are
 * never decoded.
 */
export function fingerprint(s: string): [number, number] {
  const f = new Fingerprinter(s.length);
  f.update(s);
  return f.digest();
}

/** Hashes a rendering without keeping it; each string is prefixed by its length, so no two values hash the same stream. */
class FingerprintOut implements JsonOut {
  readonly f = new Fingerprinter(0x4a534f4e);

  raw(s: string): void {
    this.f.update(s);
  }

  str(s: string): void {
    this.f.update(`"${s.length}:`);
    this.f.update(s);
  }
}

/** Fingerprint of the sorted-key JSON of `v` (key order does not matter), without rendering it. */
export function fingerprintJson(v: unknown): [number, number] {
  const out = new FingerprintOut();
  walk(v, out, 0);
  return out.f.digest();
}
