/** Number formatting shared by the Markdown report and the CLI table. */

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`;
}

/**
 * toFixed without a sign on zero: a small negative figure rounds to "-0" (`analyze` printed "Prefill
 * GPU-seconds saved per hour …: -0" for a log that shares nothing), a sign that says nothing true.
 */
function fixed(x: number, digits: number): string {
  const s = x.toFixed(digits);
  return /^-0(\.0+)?$/.test(s) ? s.slice(1) : s;
}

export function fmtPct(x: number, digits = 1): string {
  return Number.isFinite(x) ? `${fixed(x * 100, digits)}%` : "–";
}

export function fmtNum(x: number, digits = 2): string {
  return Number.isFinite(x) ? fixed(x, digits) : "–";
}

/** A GitHub-flavoured Markdown table (also readable as plain text). */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((v, c) => v.padEnd(widths[c]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** A report's "Reproduce:" block: the command in a fenced block (`lang` "sh" or none), then a blank line. */
export function reproduceLines(command: string, lang = ""): string[] {
  return ["Reproduce:", "", `\`\`\`${lang}`, command, "```", ""];
}
