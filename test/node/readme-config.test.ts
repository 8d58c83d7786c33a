/**
 * README.md's configuration reference is what an operator sets the gateway by: its Secrets and Vars tables
 * must name exactly the vars the config reads (src/worker/config.ts), each with the default the code applies
 * when the var is left out, and a range the config really accepts at both ends and refuses just past them;
 * and no other part of the README may name a var or constant that does not exist. Checked against the
 * config's behaviour (parseConfig), not against a second copy of the figures.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as defaults from "../../src/routing/defaults";
import { POLICY_NAMES } from "../../src/routing/types";
import { CONFIG_KEYS, parseConfig, type RawConfigEnv, SECRET_NAMES } from "../../src/worker/config";
import { meantName } from "../../src/worker/config-names";

const root = new URL("../../", import.meta.url);
const readme = readFileSync(new URL("README.md", root), "utf8");

/** The rows of the first markdown table after `heading`, as cells (header and rule left out). */
function tableAfter(heading: string): string[][] {
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md has no "${heading}"`);
  const lines = readme.slice(at).split("\n").slice(2);
  const start = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/\s\|\s/)
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

const unquote = (cell: string): string => cell.replace(/^`|`$/g, "");
/** The backticked values of a cell: `` `""` `` is the empty string. */
const ticked = (cell: string): string[] =>
  [...cell.matchAll(/`([^`]*)`/g)].map((m) => (m[1] === '""' ? "" : m[1]!));

const secretsTable = tableAfter("### Secrets");
const varsTable = tableAfter("### Vars (`wrangler.toml`)");
const varRows = new Map(varsTable.map((r) => [unquote(r[0]!), r]));

/** A config every check varies one var of: real-looking secrets, not loopback, not the examples. */
const base: RawConfigEnv = {
  BACKENDS: JSON.stringify([{ id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 }]),
  GATEWAY_API_KEYS: "client-key-0123456789",
  ADMIN_TOKEN: "admin-token-0123456789",
};
const accepts = async (name: string, value: string, also: RawConfigEnv = {}): Promise<boolean> =>
  (await parseConfig({ ...base, ...also, [name]: value })).ok;

describe("README configuration reference", () => {
  it("its Secrets table names the secrets, its Vars table every other var the config reads, once each", () => {
    expect(secretsTable.map((r) => unquote(r[0]!))).toEqual([...SECRET_NAMES]);
    const documented = varsTable.map((r) => unquote(r[0]!));
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(CONFIG_KEYS.filter((k) => !SECRET_NAMES.includes(k)).sort());
  });

  it("lists the fields of a BACKENDS entry the config takes, and the entries' bounds", async () => {
    const [, format, notes] = secretsTable.find((r) => r[0] === "`BACKENDS`")!;
    const documented = [...format!.matchAll(/"(\w+)"/g)].map((m) => m[1]!);
    // The config names every field it takes when it refuses another.
    const backend = { id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 };
    const refused = await parseConfig({ ...base, BACKENDS: JSON.stringify([{ ...backend, zzz: 1 }]) });
    const taken = /a backend has ([\w, ]+)\)/.exec(refused.ok ? "" : refused.errors.join("\n"))?.[1];
    expect(taken?.split(", ")).toEqual(documented);
    const withBackend = (extra: object): Promise<boolean> =>
      parseConfig({ ...base, BACKENDS: JSON.stringify([{ ...backend, ...extra }]) }).then((r) => r.ok);
    const [lo, hi] = /`maxInflight` \(optional, (\d[\d,]*) … (\d[\d,]*)/
      .exec(notes!)!
      .slice(1)
      .map((n) => Number(n.replaceAll(",", "")));
    expect([await withBackend({ maxInflight: lo }), await withBackend({ maxInflight: hi })]).toEqual([
      true,
      true,
    ]);
    expect([
      await withBackend({ maxInflight: lo! - 1 }),
      await withBackend({ maxInflight: hi! + 1 }),
    ]).toEqual([false, false]);
    const keys = secretsTable.find((r) => r[0] === "`GATEWAY_API_KEYS`")![2]!;
    const [klo, khi] = /in-flight limit \((\d[\d,]*) … (\d[\d,]*)/
      .exec(keys)!
      .slice(1)
      .map((n) => Number(n.replaceAll(",", "")));
    expect(await accepts("GATEWAY_API_KEYS", `k-0123456789abcdef max_concurrent=${klo}`)).toBe(true);
    expect(await accepts("GATEWAY_API_KEYS", `k-0123456789abcdef max_concurrent=${khi}`)).toBe(true);
    expect(await accepts("GATEWAY_API_KEYS", `k-0123456789abcdef max_concurrent=${khi! + 1}`)).toBe(false);
  });

  it("gives each var the default the config applies when it is left out", async () => {
    const unset = await parseConfig(base);
    expect(unset.ok).toBe(true);
    for (const [name, row] of varRows) {
      const stated = ticked(row[1]!);
      expect(stated.length, `${name}'s default cell`).toBe(1);
      expect(await parseConfig({ ...base, [name]: stated[0] }), `${name} = "${stated[0]}"`).toEqual(unset);
    }
  });

  it("gives each numeric range as the config accepts it: both ends taken, one step past refused", async () => {
    let ranges = 0;
    for (const [name, row] of varRows) {
      const range = row[2]!;
      const m = /(\d[\d,.]*) … (\d[\d,.]*)/.exec(range);
      if (!m) continue;
      ranges++;
      const [lo, hi] = [Number(m[1]!.replaceAll(",", "")), Number(m[2]!.replaceAll(",", ""))];
      // BALANCE_FACTOR may have a point; the rest are whole numbers.
      const step =
        name in defaults.SETTINGS && !defaults.SETTINGS[name as defaults.SettingName].integer ? 0.01 : 1;
      // "1 … 1,048,576, ≥ `BLOCK_TOKENS`": the low end is taken where the other var allows it.
      const floor = /≥ `([A-Z_]+)`/.exec(range)?.[1];
      const low: RawConfigEnv = floor === undefined ? {} : { [floor]: String(lo) };
      expect(await accepts(name, String(lo), low), `${name} = ${lo}`).toBe(true);
      expect(await accepts(name, String(hi)), `${name} = ${hi}`).toBe(true);
      expect(await accepts(name, String(hi + step)), `${name} = ${hi + step}`).toBe(false);
      // "`0` (off), or 100 … 60,000": 0 is taken, and what lies between 0 and the range is not.
      const offToo = range.startsWith("`0` (off)");
      if (offToo) expect(await accepts(name, "0"), `${name} = 0 (off)`).toBe(true);
      const below = Math.round((lo - step) * 100) / 100;
      if (below >= 0 && !(offToo && below === 0))
        expect(await accepts(name, String(below), low), `${name} = ${below}`).toBe(false);
    }
    expect(ranges).toBeGreaterThanOrEqual(Object.keys(defaults.SETTINGS).length);
  });

  it("lists values the config takes, and every policy where the list is closed", async () => {
    for (const [name, row] of varRows) {
      for (const value of ticked(row[2]!)) {
        if (/^[A-Z_]+$/.test(value) || /^\d/.test(value)) continue; // another var's name; a figure
        expect(await accepts(name, value), `${name} = "${value}"`).toBe(true);
      }
    }
    expect(ticked(varRows.get("ROUTING_POLICY")![2]!)).toEqual([...POLICY_NAMES]);
    const hints = readme.slice(readme.indexOf("**`ROUTER_LOCATION_HINT` = your fleet's region**"));
    for (const hint of defaults.LOCATION_HINTS) expect(hints.slice(0, 600), hint).toContain(`\`${hint}\``);
  });

  it("names, anywhere, only vars, bindings and defaults.ts constants that exist", () => {
    const wrangler = readFileSync(new URL("wrangler.toml", root), "utf8");
    const bindings = [...wrangler.matchAll(/^name = "([A-Z_]+)"$/gm)].map((m) => m[1]!);
    const known = new Set<string>([...CONFIG_KEYS, ...bindings, ...Object.keys(defaults)]);
    // Not the gateway's: the tests' Chromium (test/ensure-chromium.sh).
    known.add("CHROMIUM_PATH");
    // Not the gateway's: where examples/openai-quickstart.ts calls (its header reads it).
    known.add("GATEWAY_URL");
    // The near misses README gives as examples of what the config refuses: named on purpose, and each must
    // really be one (config-names.ts takes it for a var the config reads).
    const missIntro = "A var whose name is a near miss of one below (";
    const misses = readme.slice(readme.indexOf(missIntro) + missIntro.length).split(")")[0]!;
    for (const [, miss] of misses.matchAll(/`([A-Za-z][A-Za-z0-9_-]+)`/g)) {
      expect(meantName(miss!, CONFIG_KEYS), miss).toBeDefined();
      known.add(miss!);
    }
    const named = new Set([...readme.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => m[0]));
    expect([...named].filter((n) => !known.has(n))).toEqual([]);
  });

  it("quotes a numeric var's default in prose as the code has it: `NAME` (N)", () => {
    let quoted = 0;
    for (const m of readme.matchAll(/`([A-Z_]+)` \((\d[\d,.]*)(?: by default)?\)/g)) {
      const name = m[1]! as defaults.SettingName;
      if (!(name in defaults.SETTINGS)) continue;
      quoted++;
      expect(Number(m[2]!.replaceAll(",", "")), m[0]).toBe(defaults.SETTINGS[name].default);
    }
    expect(quoted).toBeGreaterThan(0);
  });
});
