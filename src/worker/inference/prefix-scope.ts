/**
 * PREFIX_SCOPE: who may share a prompt's prefix — in the router's affinity, and in the engine's cache.
 *
 * `shared` (the default) is the gateway as it always was: the prefix hashes are seeded by the model and the
 * tenant key (`prompt_cache_key` / `x-prefix-cache-key`) only, so any client that sends a prompt another
 * client sent, under the same tenant name, is routed to it on affinity and told so
 * (`x-prefix-gateway-route: affinity`, `x-prefix-gateway-cached-tokens-expected`). Tenant names are not
 * secret, so this is an oracle across gateway keys (red-team.md, eighth pass, left item 1).
 *
 * `key` seeds the hashes with the gateway key's id (config.ts GatewayKey.id: 16 hex of the key's SHA-256,
 * never the key) before the tenant, so a tenant name means something only under its own key, and no key's
 * request ever matches another key's blocks. That closes the gateway's oracle. The engine keeps its own (a
 * cached prefix answers sooner, and says so in `usage.prompt_tokens_details.cached_tokens`); vLLM closes it
 * with the request's `cache_salt`, which it folds into the hash of the prompt's first block so that requests
 * of different salts share no cached block. A backend marked `cacheSalt` in BACKENDS is sent a salt derived
 * from the same scope: 256 bits of SHA-256 over the key's `saltSecret` (config.ts: itself a hash of the key),
 * the tenant and the client's salt, so the engine and its logs never see the key or its id, and nobody
 * without the key can compute the salt (vLLM's advice: unpredictable, 256 bits). What the router expects to
 * find cached and what the engine can find are then the same set.
 *
 * A client's own `cache_salt` is combined, not replaced and not passed through: it is hashed in with the
 * scope. Passed through, a key could name another key's salt and be back in its cache; replaced, a client
 * that splits its own users by salt (one gateway key in front of many end users) would lose that split
 * without being told. Combined, it still splits what the client split, and only inside the client's key.
 * It also seeds the prefix hashes, for the same reason the salt follows the hashes: the router must not
 * expect a hit the engine cannot give. In `shared` scope the client's salt goes upstream as sent and seeds
 * the hashes beside the tenant, for that same reason.
 */
import type { GatewayConfig, GatewayKey } from "../config";
import { badRequest } from "../errors";
import { replaceMemberValue } from "../request/json-members";
import { sha256Hex } from "../sha256";

export interface PrefixScope {
  /** What seeds the prefix hashes beside the model (request-keys.ts PrefixOptions.tenant); undefined: nothing. */
  readonly chainTenant: string | undefined;
  /** `key` scope: the `cache_salt` a backend marked `cacheSalt` is sent; undefined in `shared` scope or with none. */
  readonly cacheSalt: string | undefined;
}

/** Bytes of SHA-256 in the salt: 256 bits, 64 hex digits (vLLM takes any non-empty string; hex is safe for every cache connector). */
const SALT_BYTES = 32;
/** Domain separation: the salt is no other hash the gateway makes of the same inputs. */
const SALT_DOMAIN = "prefix-gateway cache_salt v1";

/** The client's `cache_salt`, checked where the gateway reads it (key scope): vLLM's own rule, a non-empty string. */
function clientSaltOf(raw: Record<string, unknown>): string | undefined {
  if (!Object.hasOwn(raw, "cache_salt") || raw.cache_salt === null) return undefined;
  const salt = raw.cache_salt;
  if (typeof salt !== "string" || salt === "")
    throw badRequest("cache_salt must be a non-empty string when given", "cache_salt");
  return salt;
}

/**
 * The request's scope. `key` is the gateway key it authenticated with, `tenant` its tenant key (undefined
 * when none or empty), `raw` its parsed body (for `cache_salt`), `salted` whether any backend is sent a salt
 * (BACKENDS cacheSalt): only then is one hashed, since no other request's path reads it.
 */
export async function prefixScopeOf(
  scope: GatewayConfig["prefixScope"],
  key: GatewayKey,
  tenant: string | undefined,
  raw: Record<string, unknown>,
  salted: boolean,
): Promise<PrefixScope> {
  if (scope === "shared") {
    // The client's salt goes to the engine as sent; it must seed the chain too, or the router would expect a
    // hit across salts that the engine, which hashes the salt into the first block, never gives. Not checked
    // here (an engine without the field may ignore any value): only a non-empty string splits.
    const salt = raw.cache_salt;
    if (typeof salt !== "string" || salt === "") return { chainTenant: tenant, cacheSalt: undefined };
    return { chainTenant: JSON.stringify([tenant ?? null, salt]), cacheSalt: undefined };
  }
  // JSON arrays, so no choice of tenant or salt can spell another key's scope (or another split of the same).
  const rest = [tenant ?? null, clientSaltOf(raw) ?? null];
  return {
    chainTenant: JSON.stringify([key.id, ...rest]),
    cacheSalt: salted
      ? await sha256Hex(JSON.stringify([SALT_DOMAIN, key.saltSecret, ...rest]), SALT_BYTES)
      : undefined,
  };
}

/**
 * `text` (the body going upstream; `raw` is the client's body parsed) with `cache_salt` set to `salt`: every
 * copy of the member replaced when the client sent one, else appended. Only that value changes, in the text
 * (json-members.ts): every other byte is the client's.
 */
export function withCacheSalt(text: string, raw: Record<string, unknown>, salt: string): string {
  const json = JSON.stringify(salt);
  if (Object.hasOwn(raw, "cache_salt")) return replaceMemberValue(text, "cache_salt", json);
  // A validated body is a non-empty object, so its text ends with `}` (and maybe whitespace).
  const close = text.lastIndexOf("}");
  return `${text.slice(0, close)},"cache_salt":${json}${text.slice(close)}`;
}
