/**
 * GATEWAY_API_KEYS: comma-separated client keys, each optionally followed by
 * per-key options after whitespace:
 *
 *   sk-team-a max_concurrent=8, sk-team-b, sk-batch max_concurrent=0
 *
 * Whitespace is the separator because it is the one character a usable key
 * cannot hold (`Authorization: Bearer <key>` ends the key at the first
 * space). Problems name the entry by its position, never by its text: any
 * token may be a key, or half of one (two keys with the comma forgotten).
 */
import { SETTINGS } from "../routing/defaults";
import { hexPrefix } from "./sha256";

/** Per-key options; absent means "use the var" (KEY_MAX_CONCURRENT). */
export interface KeyOptions {
  readonly maxConcurrent?: number;
}

export interface KeyEntry {
  readonly key: string;
  readonly options: KeyOptions;
}

export interface KeyIssue {
  /** Position in the comma-separated list (0-based, empty entries counted), then the option. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export type KeyEntriesResult =
  | { readonly ok: true; readonly entries: readonly KeyEntry[] }
  | { readonly ok: false; readonly issues: readonly KeyIssue[] };

/** Upper bound of max_concurrent: KEY_MAX_CONCURRENT's. */
export const MAX_CONCURRENT_LIMIT = SETTINGS.KEY_MAX_CONCURRENT.max;

/**
 * A key's least length, ADMIN_TOKEN's: a key is a password that guards the fleet, and one of a few characters
 * is guessed in a few requests (the rate limit is per key, so each guess costs its own).
 */
export const MIN_KEY_CHARS = 16;

const OPTION_NAMES = ["max_concurrent"] as const;
const USAGE = `options are ${OPTION_NAMES.map((n) => `${n}=N`).join(", ")} after the key; separate keys with commas`;

function parseOption(token: string, at: number, out: { maxConcurrent?: number }, issues: KeyIssue[]): void {
  const eq = token.indexOf("=");
  const name = eq < 0 ? "" : token.slice(0, eq);
  const value = eq < 0 ? "" : token.slice(eq + 1);
  if (name !== "max_concurrent") {
    issues.push({ path: [at], message: `unknown option (${USAGE})` });
    return;
  }
  if (out.maxConcurrent !== undefined) {
    issues.push({ path: [at, name], message: "is given twice" });
    return;
  }
  const n = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n <= MAX_CONCURRENT_LIMIT)) {
    issues.push({ path: [at, name], message: `must be an integer in 0..${MAX_CONCURRENT_LIMIT}` });
    return;
  }
  out.maxConcurrent = n;
}

const sameOptions = (a: KeyOptions, b: KeyOptions) => a.maxConcurrent === b.maxConcurrent;

/** An entry's tokens: its key, then its options. */
const tokensOf = (piece: string): string[] => piece.trim().split(/\s+/);

/**
 * Every key the secret lists, whatever its entries' options say, valid or not: the values a log must never
 * echo (config.ts configErrorLine), read from a secret that may not parse.
 */
export function listedKeys(raw: string): string[] {
  return raw
    .split(",")
    .map((piece) => tokensOf(piece)[0] ?? "")
    .filter((key) => key !== "");
}

/** Parses the secret; never throws, never puts a key (or any token) into a message. */
export function parseKeyEntries(raw: string): KeyEntriesResult {
  const issues: KeyIssue[] = [];
  const entries: KeyEntry[] = [];
  /** key → its first entry: index in `entries`, position in the list. */
  const seen = new Map<string, { readonly index: number; readonly at: number }>();
  raw.split(",").forEach((piece, at) => {
    const tokens = tokensOf(piece);
    const key = tokens[0] ?? "";
    if (key === "") return;
    if (key.length < MIN_KEY_CHARS) {
      issues.push({
        path: [at],
        message: `must be at least ${MIN_KEY_CHARS} characters (a key is a password: \`openssl rand -hex 24\` makes one)`,
      });
      return;
    }
    const options: { maxConcurrent?: number } = {};
    const before = issues.length;
    for (const token of tokens.slice(1)) parseOption(token, at, options, issues);
    if (issues.length > before) return;
    const first = seen.get(key);
    if (first !== undefined) {
      // The same key twice is harmless unless its options disagree: then no answer is right.
      if (!sameOptions(entries[first.index]!.options, options))
        issues.push({ path: [at], message: `repeats the key of entry [${first.at}] with other options` });
      return;
    }
    seen.set(key, { index: entries.length, at });
    entries.push({ key, options });
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, entries };
}

/**
 * A key's id: the first 16 hex digits (64 bits) of its SHA-256. It names the
 * key's KeyLimiterDO and its rate-limit counter; the log's fingerprint is its
 * first 8. One-way and, for keys of any real entropy, collision-free in practice.
 */
export function keyIdOf(digest: Uint8Array): string {
  return hexPrefix(digest, 8);
}

/** Whether `v` has the shape of a key id (keyIdOf: 16 lowercase hex digits): what a RouterDO accepts as one. */
export function isKeyId(v: unknown): v is string {
  return typeof v === "string" && /^[0-9a-f]{16}$/.test(v);
}
