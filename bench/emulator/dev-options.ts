/**
 * `npm run dev`'s flags, read apart from dev.ts (which starts processes when imported) so they can be
 * tested. `--port` is the gateway's: wrangler's own message for a port in use says "specify a different
 * port with --port", and `npm run dev -- --port P` must then do what it says.
 */
import { parseArgs } from "node:util";
import { meantName } from "../../src/worker/config-names";

export const DEV_GATEWAY_PORT = 8787;

export interface DevOptions {
  /** Emulator speed factor (> 0). */
  readonly speed: number;
  /** The port wrangler dev serves the gateway on. */
  readonly port: number;
  readonly noWrangler: boolean;
}

/** The options, or an Error whose message says which flag is wrong and what it takes. */
export function parseDevOptions(argv: readonly string[]): DevOptions | Error {
  let values: { speed?: string; port?: string; "no-wrangler"?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { speed: { type: "string" }, port: { type: "string" }, "no-wrangler": { type: "boolean" } },
      strict: true,
    }));
  } catch (err) {
    return new Error(
      `${err instanceof Error ? err.message : String(err)} (flags: --port P, --speed X, --no-wrangler)`,
    );
  }
  const speed = values.speed === undefined ? 1 : Number(values.speed);
  if (!(Number.isFinite(speed) && speed > 0))
    return new Error(`--speed must be a number > 0, got "${values.speed}"`);
  const port =
    values.port === undefined ? DEV_GATEWAY_PORT : /^\d+$/.test(values.port) ? Number(values.port) : NaN;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    return new Error(`--port must be a TCP port (1..65535), got "${values.port}"`);
  return { speed, port, noWrangler: values["no-wrangler"] === true };
}

/**
 * The line for an emulator that did not start. A port in use is the usual cause (a second checkout, another
 * engineer's stack), and the emulators' ports are not a flag: they are BACKENDS' urls in the vars file, which
 * `npm run dev` reads from `.dev.vars.example` until a `.dev.vars` exists. Said, since `--port` (wrangler's
 * own advice for a port in use) moves the gateway only.
 */
export function emulatorStartError(id: string, url: string, err: unknown, fromExample: boolean): string {
  const head = `dev: cannot start emulator ${id} on ${url}: `;
  if ((err as { code?: unknown } | null)?.code !== "EADDRINUSE") return `${head}${String(err)}`;
  const port = URL.parse(url)?.port ?? "?";
  const where = fromExample
    ? "copy .dev.vars.example to .dev.vars and give its urls free ports"
    : "give the urls in .dev.vars free ports";
  return `${head}port ${port} is in use. The emulators' ports are BACKENDS' urls: ${where} (--port moves only the gateway's)`;
}

/**
 * A warning for each name in the vars file the gateway does not read. wrangler dev hands the Worker only the
 * names wrangler.toml declares ([vars] and [secrets]), so any other line of `.dev.vars` is dropped before the
 * gateway's config could refuse it: `SHADOWS=on` or `MAX_INFLIGHT_PER_BACKENDS=4` left its setting at the
 * default with no word anywhere. The likely name is given when there is one (config-names.ts).
 */
export function unreadVarsWarnings(
  names: readonly string[],
  known: readonly string[],
  file: string,
): string[] {
  return names
    .filter((name) => !known.includes(name))
    .map((name) => {
      const meant = meantName(name, known);
      return `dev: ${file}: ${name} is not a var the gateway reads${meant === undefined ? "" : ` (did you mean ${meant}?)`}; wrangler dev drops it`;
    });
}
