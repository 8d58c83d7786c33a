/**
 * workerd's own diagnostic lines during the workerd tests. workerd logs a
 * peer that went away (a refused connection, a stream cut by a dying
 * backend, a client that left: what the fault tests do on purpose) as an
 * exception, "uncaught" even when the code caught it; those lines are
 * expected and dropped, with the stack line that follows each. Any other
 * uncaught exception is one no test expected: it is printed as it comes, and
 * the run fails when the tests are over (global-setup.ts). Vitest itself fails a run on a rejection nobody
 * handled; an exception thrown where no promise carries it (a timer, a
 * stream callback, a waitUntil of the runtime's own) only workerd sees.
 */

/** Disconnections (kj's DISCONNECTED kind, and the JS error the runtime makes of one). */
const EXPECTED: readonly RegExp[] = [/ disconnected: /, /Error: Network connection lost\./];
/** workerd's diagnostic lines, as the pool writes them: one message per write. */
const DIAGNOSTIC = /^(uncaught exception;|exception = |stack: )/;

/** Decides, line by line, what of workerd's log to print, and records what no test expected. */
export interface WorkerdLogFilter {
  /** Whether to print this write. */
  keep(text: string): boolean;
  /** The unexpected lines seen so far. */
  readonly unexpected: readonly string[];
}

export function workerdLogFilter(): WorkerdLogFilter {
  const unexpected: string[] = [];
  let dropNextStack = false;
  return {
    unexpected,
    keep(text: string): boolean {
      if (!DIAGNOSTIC.test(text)) return true;
      if (text.startsWith("stack: ")) {
        const keep = !dropNextStack;
        dropNextStack = false;
        return keep;
      }
      if (EXPECTED.some((re) => re.test(text))) {
        dropNextStack = true;
        return false;
      }
      dropNextStack = false;
      unexpected.push(text.trimEnd());
      return true;
    },
  };
}

type Write = NodeJS.WriteStream["write"];

/**
 * Filters what the process writes to stdout and stderr, where the pool
 * forwards workerd's log, until stop().
 */
export function watchWorkerdLog(): WorkerdLogFilter & { stop(): void } {
  const filter = workerdLogFilter();
  const restore = [process.stdout, process.stderr].map((stream) => {
    const original: Write = stream.write;
    const write = (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
      if (filter.keep(text)) return (original as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
      const done = rest.find((r): r is () => void => typeof r === "function");
      done?.();
      return true;
    };
    stream.write = write as Write;
    return () => {
      stream.write = original;
    };
  });
  return {
    keep: filter.keep,
    unexpected: filter.unexpected,
    stop: () => {
      for (const r of restore) r();
    },
  };
}
