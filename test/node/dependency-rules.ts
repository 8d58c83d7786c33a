/**
 * The direction of dependencies between the repo's folders (README
 * "Layout"), as rules over import specifiers: the product (src/,
 * durable-objects/) never reaches into the simulator or the harness, the
 * simulator never into the harness, and the two pure layers of the product
 * import nothing of the repo outside themselves.
 */
import { posix } from "node:path";

/** One import of one file: the importing file and the specifier as written. */
export interface ImportEdge {
  /** Repo-relative, forward slashes. */
  readonly file: string;
  readonly specifier: string;
}

export interface Violation extends ImportEdge {
  readonly rule: string;
}

const isTest = (file: string): boolean => /\.test\.[cm]?[jt]s$/.test(file);
const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** The repo-relative path a relative specifier points at (no extension resolution), or null for a package. */
export function target(edge: ImportEdge): string | null {
  if (!edge.specifier.startsWith(".")) return null;
  return posix.normalize(posix.join(posix.dirname(edge.file), edge.specifier));
}

interface Rule {
  readonly name: string;
  /** Files the rule governs. */
  readonly applies: (file: string) => boolean;
  /** True when the import breaks the rule (`to` null: a package or builtin). */
  readonly breaks: (to: string | null, specifier: string) => boolean;
}

const RULES: readonly Rule[] = [
  {
    name: "imports stay inside the repo",
    applies: () => true,
    breaks: (to) => to !== null && (to === ".." || to.startsWith("../")),
  },
  {
    name: "src/routing imports nothing outside itself (no packages either)",
    // Tests beside the code import their runner, and may build realistic keys with src/prefix.
    applies: (f) => within(f, "src/routing") && !isTest(f),
    breaks: (to) => to === null || !within(to, "src/routing"),
  },
  {
    name: "src/prefix imports nothing of the repo outside itself",
    applies: (f) => within(f, "src/prefix") && !isTest(f),
    breaks: (to) => to !== null && !within(to, "src/prefix"),
  },
  {
    name: "src/ reaches durable-objects/ only through src/index.ts",
    applies: (f) => within(f, "src") && f !== "src/index.ts",
    breaks: (to) => to !== null && within(to, "durable-objects"),
  },
  {
    name: "src/ and durable-objects/ import nothing of the simulator, the harness or the tests",
    applies: (f) => within(f, "src") || within(f, "durable-objects"),
    breaks: (to) => to !== null && ["sim", "bench", "test"].some((d) => within(to, d)),
  },
  {
    name: "sim/ imports nothing of bench/",
    applies: (f) => within(f, "sim"),
    breaks: (to) => to !== null && within(to, "bench"),
  },
  {
    name: "bin/ imports nothing of bench/",
    applies: (f) => within(f, "bin"),
    breaks: (to) => to !== null && within(to, "bench"),
  },
];

export function violations(edges: readonly ImportEdge[]): Violation[] {
  const out: Violation[] = [];
  for (const e of edges) {
    const to = target(e);
    for (const r of RULES)
      if (r.applies(e.file) && r.breaks(to, e.specifier)) out.push({ ...e, rule: r.name });
  }
  return out;
}
