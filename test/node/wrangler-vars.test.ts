/**
 * wrangler.toml's [vars] are what an operator reads and edits: they must be
 * exactly the defaults the code applies (src/routing/defaults.ts), every var
 * the config knows must be there, and nothing else.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_AB_POLICY,
  DEFAULT_AB_STICKY,
  DEFAULT_CORS_ALLOW_ORIGINS,
  DEFAULT_KEY_RATE_LIMIT,
  DEFAULT_POLICY,
  DEFAULT_PREFIX_SCOPE,
  DEFAULT_ROUTER_CELLS,
  DEFAULT_ROUTER_LOCATION_HINT,
  DEFAULT_SHADOW,
  defaultVar,
  SETTINGS,
  type SettingName,
} from "../../src/routing/defaults";

/** The [vars] table of wrangler.toml: `KEY = "value"` lines up to the next table. */
function wranglerVars(): Map<string, string> {
  const text = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");
  const start = text.indexOf("\n[vars]");
  if (start < 0) throw new Error("wrangler.toml has no [vars] table");
  const out = new Map<string, string>();
  for (const line of text.slice(start + 7).split("\n")) {
    if (/^\s*\[/.test(line)) break;
    const m = /^\s*([A-Z_]+)\s*=\s*"([^"]*)"\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

describe("wrangler.toml [vars]", () => {
  it("carry every default from src/routing/defaults.ts, and nothing else", () => {
    const vars = wranglerVars();
    const expected = new Map<string, string>([
      ["ROUTING_POLICY", DEFAULT_POLICY],
      ["PREFIX_SCOPE", DEFAULT_PREFIX_SCOPE],
      ["KEY_RATE_LIMIT", DEFAULT_KEY_RATE_LIMIT],
      ["AB_POLICY", DEFAULT_AB_POLICY],
      ["AB_STICKY", DEFAULT_AB_STICKY],
      ["SHADOW", DEFAULT_SHADOW],
      ["ROUTER_CELLS", DEFAULT_ROUTER_CELLS],
      ["ROUTER_LOCATION_HINT", DEFAULT_ROUTER_LOCATION_HINT],
      ["CORS_ALLOW_ORIGINS", DEFAULT_CORS_ALLOW_ORIGINS],
    ]);
    for (const name of Object.keys(SETTINGS) as SettingName[]) expected.set(name, defaultVar(name));
    expect(Object.fromEntries(vars)).toEqual(Object.fromEntries(expected));
  });
});
