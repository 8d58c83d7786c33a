/**
 * Vars whose name is a near miss of one the gateway reads. The Worker's env holds every var and secret the
 * deployment binds, and the config reads its own by name, so a misspelt one (`ROUTNG_POLICY`,
 * `max_inflight_per_backend`, `SHADOWS`) was ignored and its setting silently stayed at the default: a
 * shedding bound or an A/B split the operator believed on was off. A name that differs from a known one only
 * in case, `-` and `_`, or by one edit (two for names of 10 characters or more), is taken for that one;
 * any other name is the operator's own business (a var for another tool) and left alone. Only strings are
 * looked at: bindings (Durable Objects, rate limiters) are objects.
 */

/** A name with case, `-`, `_` and blanks folded away. */
const fold = (name: string): string => name.toUpperCase().replace(/[^A-Z0-9]/g, "");

/** Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps), cut at `max + 1`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** The known name `name` most likely meant, or undefined when it is no near miss of any (or is one itself). */
export function meantName(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return undefined;
  const f = fold(name);
  const exact = known.find((k) => fold(k) === f);
  if (exact !== undefined) return exact;
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const fk = fold(k);
    const max = fk.length >= 10 ? 2 : 1;
    const d = editDistance(f, fk, max);
    if (d <= max && (best === undefined || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

/** Each string-valued entry of `env` whose name is a near miss of a known one, in the env's order. */
export function misspeltVars(
  env: Readonly<Record<string, unknown>>,
  known: readonly string[],
): { readonly name: string; readonly meant: string }[] {
  const out: { name: string; meant: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string") continue;
    const meant = meantName(name, known);
    if (meant !== undefined) out.push({ name, meant });
  }
  return out;
}
