/**
 * "Did you mean": the known names closest to a mistyped one, so that a command refusing `--backend` can name
 * `--backends`. Closeness is the edit distance (insert, delete, substitute, swap two neighbours); a name the
 * typed one begins, or that begins the typed one, also counts (`--kv` for `--kv-tokens`). No guess is better
 * than a far one: past the threshold nothing is suggested.
 */

/** Optimal string alignment distance: Levenshtein plus the swap of two adjacent characters. */
export function editDistance(a: string, b: string): number {
  const w = b.length + 1;
  // The (a.length + 1) × (b.length + 1) table, row by row; at(i, j) = distance of a's first i and b's first j.
  const d = new Array<number>((a.length + 1) * w).fill(0);
  const at = (i: number, j: number): number => d[i * w + j] ?? 0;
  for (let i = 0; i <= a.length; i++) d[i * w] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * w + j] = best;
    }
  return at(a.length, b.length);
}

/** Up to `max` known names near `typed`, nearest first; empty when none is near enough to be a likely typo. */
export function suggestions(typed: string, known: readonly string[], max = 3): string[] {
  // One edit in a short name is already most of it: allow 1 up to 4 characters, 2 beyond.
  const limit = typed.length <= 4 ? 1 : 2;
  const scored = known
    .map((name) => {
      const prefix = typed.length >= 2 && (name.startsWith(typed) || typed.startsWith(name));
      return { name, d: prefix ? 0.5 : editDistance(typed, name) };
    })
    .filter((s) => s.d <= limit && s.name !== typed)
    .sort((x, y) => x.d - y.d || x.name.localeCompare(y.name));
  return scored.slice(0, max).map((s) => s.name);
}

/** ", did you mean --a or --b?" for an unknown option, or "" when no known option is near. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const near = suggestions(typed, known).map((n) => `--${n}`);
  if (near.length === 0) return "";
  const list = near.length === 1 ? near[0] : `${near.slice(0, -1).join(", ")} or ${near[near.length - 1]}`;
  return `; did you mean ${list}?`;
}
