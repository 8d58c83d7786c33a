/**
 * Which BACKENDS entries name one server twice for a model: config.ts refuses them (sameServerTwice). The
 * comparison folds the spellings of one address; the url the gateway calls is left as the operator wrote it.
 */
import type { z } from "zod";
import { quoteClient } from "./errors";

/** What sameServerTwice reads of an entry (BackendConfig's fields, after their own validation). */
export interface ServerEntry {
  readonly id: string;
  readonly url: string;
  readonly models: readonly string[];
  readonly apiKey?: string | undefined;
}

/**
 * Names of this machine as a client reaches it: `localhost`, 127.0.0.1, ::1 (and ::ffff:127.0.0.1, as the URL
 * parser writes it), and the unspecified addresses, which Linux and macOS connect to the local host. An engine
 * listening on 0.0.0.0:8000 answers all of them. Other 127.x addresses are not folded: two engines may listen on
 * 127.0.0.1:8000 and 127.0.0.2:8000. Nor are names under `.localhost` (RFC 6761 §6.3), though they reach the
 * same listener: a name there is chosen to be a Host header, which a local proxy routes by (Traefik's Host rule
 * on `whoami.localhost`), so `a.localhost` and `b.localhost` may be two engines, as two path prefixes are.
 */
function isThisMachine(host: string): boolean {
  return (
    host === "localhost" ||
    host === "127.0.0.1" ||
    host === "[::1]" ||
    host === "[::ffff:7f00:1]" ||
    host === "0.0.0.0" ||
    host === "[::]"
  );
}

/**
 * One server's address however it is spelt: the URL parser folds the host's case, IPv4 shorthand (127.1) and
 * IPv6 forms, and drops a default port; then loopback names are one host, the port is the one the scheme implies
 * when none is written (so http://h:443 and https://h are one port: one listener cannot be both), and trailing
 * slashes and a `/v1` (which the url field refuses on its own) are cut. The path stays: two engines behind one
 * proxy under two path prefixes are two servers.
 */
export function serverAddress(url: string): string {
  const u = URL.parse(url);
  if (u === null) return url;
  const host = isThisMachine(u.hostname) ? "loopback" : u.hostname;
  const port = u.port !== "" ? u.port : u.protocol === "https:" ? "443" : "80";
  const path = u.pathname.replace(/\/+$/, "").replace(/\/v1$/i, "").replace(/\/+$/, "");
  return `${host}:${port}${path}`;
}

/**
 * One server listed in two entries that share a model (an entry copied and its id changed, its port not, or
 * `localhost` in one and `127.0.0.1` in the other): the pool then routes to one engine as to two, with two shares
 * of the load cap, two in-flight counts and two affinity records of one cache, and ejects half of it. Entries
 * under different models are one multi-model server in two pools, which is the operator's to say. Two entries
 * with two different apiKeys are two accounts on one hosted API (each with its own rate limit) and are
 * accepted: a self-hosted engine takes one key (vLLM's --api-key), so a copied entry keeps the same key, or none.
 * Each is its own backend everywhere (health, drains, metrics, cells, logs key by id, which must differ).
 */
export function sameServerTwice(list: readonly ServerEntry[], ctx: z.RefinementCtx): void {
  const first = new Map<string, number[]>();
  list.forEach((b, i) => {
    const address = serverAddress(b.url);
    for (const model of b.models) {
      const key = `${address}\u0000${model}`;
      const earlier = first.get(key) ?? [];
      const j = earlier.find((k) => !twoAccounts(list[k]!, b));
      if (j === undefined) {
        first.set(key, [...earlier, i]);
        continue;
      }
      const other = list[j]!;
      ctx.addIssue({
        code: "custom",
        path: [i, "url"],
        // Entries by position and id, never their urls: this message is in the public /healthz, and BACKENDS is
        // a secret (its addresses are the operator's to show).
        message: `entry "${b.id}" is the same server as BACKENDS[${j}] ("${other.id}") for model "${quoteClient(model)}" (urls are compared with the host's case, a default port, trailing slashes and /v1 folded, and localhost, 127.0.0.1 and ::1 as one host): one engine listed twice is routed to as two, with twice its share of the load; list all its models in one entry (two entries on one hosted API are accepted with two different apiKeys: two accounts)`,
      });
      return;
    }
  });
}

/** Both entries carry an apiKey and the keys differ: two accounts on one hosted endpoint. */
function twoAccounts(a: ServerEntry, b: ServerEntry): boolean {
  return a.apiKey !== undefined && b.apiKey !== undefined && a.apiKey !== b.apiKey;
}
