/**
 * One line of the Prometheus text exposition format (version 0.0.4, what
 * vLLM's and SGLang's prometheus_client serve on /metrics) → its sample, or
 * nothing for a comment, a HELP or TYPE line, a blank line or a line it
 * cannot read. Lenient by design: a scraper that meets a line it does not
 * understand skips it and reads on, since one odd metric must not cost the
 * gauges the router needs.
 *
 *   metric_name{label="value",…} value [timestamp]
 *
 * Names may hold colons (vllm:num_requests_waiting). Label values are
 * quoted, with \\ \" \n escapes, and may hold spaces, commas and braces.
 * Values are Go floats: NaN, +Inf and -Inf included.
 */

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** NaN, ±Infinity as written. */
  readonly value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** A sample value as Prometheus writes it (Go's ParseFloat); undefined when it is none. */
export function parsePromValue(text: string): number | undefined {
  switch (text) {
    case "NaN":
      return Number.NaN;
    case "+Inf":
    case "Inf":
      return Number.POSITIVE_INFINITY;
    case "-Inf":
      return Number.NEGATIVE_INFINITY;
  }
  if (text === "" || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** The metric name a line is about, without reading the rest (undefined for comments and blanks). */
export function sampleName(line: string): string | undefined {
  const m = NAME.exec(line.trimStart());
  return m === null ? undefined : m[0];
}

/** Reads `{a="x",b="y"}` from `s` at `at` (the `{`); the labels and where the text after `}` starts. */
function readLabels(s: string, at: number): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === "}") return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(s.slice(i));
    if (name === null) return undefined;
    i += name[0].length;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] !== "=") return undefined;
    i++;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] !== '"') return undefined;
    i++;
    let value = "";
    for (;;) {
      const c = s[i];
      if (c === undefined) return undefined;
      if (c === '"') break;
      if (c === "\\") {
        const e = s[i + 1];
        value += e === "n" ? "\n" : (e ?? "");
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name[0]] = value;
    i++;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === ",") i++;
    else if (s[i] !== "}") return undefined;
  }
}

/** The sample on a line; undefined for comments, HELP/TYPE lines, blank or unreadable lines. */
export function parsePromLine(raw: string): PromSample | undefined {
  const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  const s = line.trimStart();
  if (s === "" || s.startsWith("#")) return undefined;
  const name = NAME.exec(s);
  if (name === null) return undefined;
  let rest = name[0].length;
  let labels: Record<string, string> = {};
  if (s[rest] === "{") {
    const read = readLabels(s, rest);
    if (read === undefined) return undefined;
    labels = read.labels;
    rest = read.end;
  }
  // Value, then an optional timestamp.
  const fields = s
    .slice(rest)
    .trim()
    .split(/[ \t]+/);
  if (fields.length < 1 || fields.length > 2) return undefined;
  const value = parsePromValue(fields[0]!);
  if (value === undefined) return undefined;
  return { name: name[0], labels, value };
}
