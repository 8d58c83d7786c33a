/**
 * What Cloudflare's Deploy to Cloudflare button needs from the repository
 * (developers.cloudflare.com/workers/platform/deploy-buttons/), checked on
 * the files it reads: the wrangler config at the root, read by wrangler's
 * own reader (the one the button's build runs), with every Durable Object
 * class exported and migrated so it can be provisioned; the secrets it asks
 * for, from `.dev.vars.example`, each described in package.json's
 * `cloudflare.bindings`; the build and deploy scripts it pre-fills; and the
 * button itself in the README, with a placeholder repository URL nobody can
 * mistake for a real one.
 */
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), "utf8");

/** The parts of wrangler's resolved config this test reads. */
interface WranglerConfig {
  readonly name?: string;
  readonly main?: string;
  readonly vars: Record<string, unknown>;
  readonly secrets?: { readonly required?: readonly string[] };
  readonly durable_objects: { readonly bindings: readonly { name: string; class_name: string }[] };
  readonly migrations: readonly { new_classes?: string[]; new_sqlite_classes?: string[] }[];
  readonly placement?: { mode?: string; region?: string; host?: string; hostname?: string };
  readonly ratelimits?: readonly { name: string; namespace_id?: string }[];
}

interface PackageJson {
  readonly scripts: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly cloudflare?: { readonly bindings?: Record<string, { description?: string }> };
}

/** The keys of a dotenv file, as the button reads secrets from it. */
function dotenvKeys(text: string): string[] {
  return text
    .split("\n")
    .map((l) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(l.trim())?.[1])
    .filter((k): k is string => k !== undefined);
}

const BUTTON =
  "[![Deploy to Cloudflare](https://deploy.workers.cloudflare.com/button)](https://deploy.workers.cloudflare.com/?url=https://github.com/YOUR-ORG/prefix-gateway)";

let config: WranglerConfig;
const pkg = JSON.parse(read("package.json")) as PackageJson;

beforeAll(async () => {
  // wrangler's bundle is large: its import alone takes seconds on a busy machine.
  const wrangler = (await import("wrangler")) as unknown as {
    unstable_readConfig(args: { config: string }): WranglerConfig;
  };
  // Throws on any config error, as `wrangler deploy` would.
  config = wrangler.unstable_readConfig({ config: new URL("wrangler.toml", root).pathname });
}, 120_000);

describe("Deploy to Cloudflare", () => {
  it("finds a valid wrangler config at the repository root, its Worker entry and a name to rename", () => {
    expect(config.name).toBe("prefix-gateway");
    expect(config.main).toBeDefined();
    expect(existsSync(config.main!)).toBe(true);
    expect(existsSync(new URL("package-lock.json", root))).toBe(true);
  });

  it("can provision every Durable Object: each class is exported by the entry and created by a migration", () => {
    const entry = readFileSync(config.main!, "utf8");
    const migrated = config.migrations.flatMap((m) => [
      ...(m.new_sqlite_classes ?? []),
      ...(m.new_classes ?? []),
    ]);
    expect(config.durable_objects.bindings.length).toBeGreaterThan(0);
    for (const { class_name } of config.durable_objects.bindings) {
      expect(entry, class_name).toMatch(new RegExp(`export \\{ ${class_name} \\}`));
      expect(migrated, class_name).toContain(class_name);
    }
  });

  it("has a default for every binding property it cannot provision (the rate limiter's namespace)", () => {
    for (const r of config.ratelimits ?? []) expect(r.namespace_id, r.name).toMatch(/^\d+$/);
  });

  it("asks for exactly the required secrets, each described", () => {
    const asked = dotenvKeys(read(".dev.vars.example"));
    expect([...asked].sort()).toEqual([...(config.secrets?.required ?? [])].sort());
    const described = pkg.cloudflare?.bindings ?? {};
    for (const name of asked) expect(described[name]?.description?.length ?? 0, name).toBeGreaterThan(40);
  });

  it("describes only bindings that exist (secrets or vars), the location hint among them", () => {
    const known = new Set([...(config.secrets?.required ?? []), ...Object.keys(config.vars)]);
    const described = Object.keys(pkg.cloudflare?.bindings ?? {});
    for (const name of described) expect(known.has(name), name).toBe(true);
    expect(described).toContain("ROUTER_LOCATION_HINT");
  });

  it("pre-fills a build that only bundles and a deploy that deploys, with the repository's wrangler", () => {
    expect(pkg.scripts.build).toMatch(/^wrangler deploy --dry-run\b/);
    expect(pkg.scripts.deploy).toBe("wrangler deploy");
    // Workers Builds runs the wrangler version package.json pins, the one these tests read the config with.
    expect(pkg.devDependencies?.wrangler).toMatch(/^\^?\d+\./);
  });

  it("runs the Worker near the fleet ([placement] set, in one of its forms)", () => {
    const p = config.placement ?? {};
    expect(
      p.mode === "smart" || p.region !== undefined || p.host !== undefined || p.hostname !== undefined,
    ).toBe(true);
  });

  it("is in the README next to the manual steps, with a placeholder repository to replace", () => {
    const readme = read("README.md");
    const deploy = readme.slice(
      readme.indexOf("## Deploy to Cloudflare"),
      readme.indexOf("## Configuration"),
    );
    expect(deploy).toContain(BUTTON);
    expect(deploy).toContain("`YOUR-ORG/prefix-gateway`");
    expect(deploy).toMatch(/npx wrangler deploy/);
  });
});
