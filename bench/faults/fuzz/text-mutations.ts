/**
 * Damage to a valid body's JSON text or bytes, what JSON.stringify cannot
 * make: duplicate keys, NaN/Infinity and other non-JSON number literals,
 * invalid UTF-8 and CESU-8 lone surrogates inside a string, truncation,
 * trailing garbage, deep nesting, JSON5-isms, a BOM, a body that is not an
 * object, escaped lone surrogates, byte flips. Pure (mutations.ts).
 */
import type { Rng } from "../../../sim/workloads/prng";

const pick = <T>(rng: Rng, items: readonly T[]): T => items[rng.int(0, items.length - 1)]!;
const utf8 = new TextEncoder();

/** One change to the JSON text or its bytes: what JSON.stringify cannot make. */
export function mutateText(text: string, rng: Rng): { label: string; bytes: Uint8Array } {
  const r = rng.next();
  const at = (s: string) => s.indexOf('"max_tokens"');
  const str = (s: string) => ({ bytes: utf8.encode(s) });
  if (r < 0.15) {
    // A duplicate key: the last one wins in JS, which is what the engine must see too.
    const dup = `"max_tokens":${pick(rng, ["99999999999", "-1", "2", '"x"', "null"])},`;
    return { label: "duplicate key", ...str(`{${dup}${text.slice(1)}`) };
  }
  if (r < 0.3) {
    const lit = pick(rng, [
      "NaN",
      "Infinity",
      "-Infinity",
      "1e400",
      "-0",
      "0x10",
      "01",
      "+1",
      ".5",
      "1.",
      "undefined",
    ]);
    const i = at(text);
    if (i < 0) return { label: "number literal", ...str(`{"max_tokens":${lit},${text.slice(1)}`) };
    return {
      label: "number literal",
      ...str(text.replace(/"max_tokens":-?[\d.e+]+/, `"max_tokens":${lit}`)),
    };
  }
  if (r < 0.45) {
    // Raw bytes inside a string: invalid UTF-8, CESU-8 lone surrogates, overlongs.
    const bad = pick(rng, [
      [0xff],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xed, 0xbf, 0xbf],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
      [0x80],
    ]);
    const bytes = utf8.encode(text);
    const quote =
      text.lastIndexOf('"}') >= 0 ? utf8.encode(text.slice(0, text.lastIndexOf('"}'))).length : bytes.length;
    const out = new Uint8Array(bytes.length + bad.length);
    out.set(bytes.subarray(0, quote));
    out.set(bad, quote);
    out.set(bytes.subarray(quote), quote + bad.length);
    return { label: "invalid UTF-8", bytes: out };
  }
  if (r < 0.55) return { label: "truncated", ...str(text.slice(0, rng.int(0, text.length - 1))) };
  if (r < 0.62)
    return {
      label: "trailing garbage",
      ...str(`${text}${pick(rng, ["}", ",", " x", "\u0000", "{}", "\n\n[]"])}`),
    };
  if (r < 0.7) {
    const d = rng.int(100, 200_000);
    const open = pick(rng, ["[", '{"a":']);
    const close = open === "[" ? "]" : "}";
    return { label: "deep nesting", ...str(`{"deep":${open.repeat(d)}0${close.repeat(d)},${text.slice(1)}`) };
  }
  if (r < 0.78)
    return {
      label: "JSON5-isms",
      ...str(text.replace(/"([a-z_]+)":/g, (_m, k: string) => (rng.next() < 0.5 ? `${k}:` : `'${k}':`))),
    };
  if (r < 0.84) return { label: "BOM and whitespace", ...str(`\ufeff \t\r\n${text}\n\n`) };
  if (r < 0.9)
    return { label: "not an object", ...str(pick(rng, ["[]", "null", "42", '"text"', `[${text}]`, ""])) };
  if (r < 0.95)
    return {
      label: "escaped lone surrogates",
      ...str(text.replace(/"content":"/, '"content":"\\ud800\\udbff\\u0000')),
    };
  // Byte flips anywhere.
  const bytes = utf8.encode(text);
  for (let k = rng.int(1, 6); k > 0; k--) bytes[rng.int(0, bytes.length - 1)] = rng.int(0, 255);
  return { label: "byte flips", bytes };
}
