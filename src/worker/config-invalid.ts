/**
 * What an invalid config tells whom. Its errors name backends, models and entries by position
 * (`BACKENDS[1].url: entry "gpu-7" is the same server as BACKENDS[0] ("gpu-6") for model "m"…`): the
 * operator's to read, not every caller's. Whoever can reach the URL (a load balancer's probe, a client, a
 * scanner) learns that the config is invalid and which vars and secrets to fix, by name: what a public
 * probe needs (Kubernetes and load balancers read the status code alone; Envoy keeps its details on the
 * admin interface). The reasons are in the Worker's log (config.ts configErrorLine, with the values) and
 * on /healthz for the admin.
 *
 * With the config invalid there is no parsed ADMIN_TOKEN to check a Bearer against; the raw one unlocks the
 * reasons only when no error names it, it is not the public example unless BACKENDS reads as a fleet on
 * loopback (`npm run dev`; the check that refuses the example elsewhere runs only once every field parses),
 * and no client key could be it (the raw GATEWAY_API_KEYS holds it nowhere).
 */
import { bearerToken, digestsEqual } from "./auth";
import { EXAMPLE_ADMIN_TOKEN, isLoopbackUrl } from "./example-secrets";
import { sha256 } from "./sha256";

/** Where a caller who is not the admin is sent for the reasons (not to /healthz when ADMIN_TOKEN is at fault). */
export function reasonsWhere(vars: readonly string[]): string {
  const log = "the reasons are in the Worker's log (wrangler dev's terminal; wrangler tail)";
  return vars.includes("ADMIN_TOKEN") ? log : `${log} and on GET /healthz with the ADMIN_TOKEN as Bearer`;
}

/** Whether the public example token may stand: BACKENDS reads as a fleet all on loopback (config.ts allows it there). */
function exampleMayStand(backends: string | undefined): boolean {
  try {
    const list: unknown = JSON.parse(backends ?? "");
    return (
      Array.isArray(list) &&
      list.length > 0 &&
      list.every((b) => typeof b?.url === "string" && isLoopbackUrl(b.url as string))
    );
  } catch {
    return false;
  }
}

/** The vars and secrets the errors name (`BACKENDS[2].url: …` → `BACKENDS`), each once, in order. */
export function invalidVars(errors: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const name = /^([A-Za-z_][A-Za-z0-9_-]*)/.exec(e)?.[1] ?? "config";
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Whether the Authorization header carries the ADMIN_TOKEN of a config that did not parse (see the header). */
export async function isAdminOfInvalid(
  env: { readonly ADMIN_TOKEN?: string; readonly GATEWAY_API_KEYS?: string; readonly BACKENDS?: string },
  errors: readonly string[],
  authorization: string | undefined,
): Promise<boolean> {
  const raw = env.ADMIN_TOKEN;
  if (typeof raw !== "string" || invalidVars(errors).includes("ADMIN_TOKEN")) return false;
  if (raw.trim() === EXAMPLE_ADMIN_TOKEN && !exampleMayStand(env.BACKENDS)) return false;
  if ((env.GATEWAY_API_KEYS ?? "").includes(raw.trim())) return false;
  // Hash even a missing token so the two paths cost the same (auth.ts matchToken).
  const [got, want] = await Promise.all([sha256(bearerToken(authorization) ?? ""), sha256(raw)]);
  return bearerToken(authorization) !== undefined && digestsEqual(got, want);
}
