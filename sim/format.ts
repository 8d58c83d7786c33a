/** Number formatting shared by the Markdown report and the CLI table. */

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`;
}

export function fmtPct(x: number, digits = 1): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : "–";
}

export function fmtNum(x: number, digits = 2): string {
  return Number.isFinite(x) ? x.toFixed(digits) : "–";
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
