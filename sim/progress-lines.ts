/**
 * How far a long command is, as whole lines on stderr: at most one line per
 * `everyMs` (5 s by default) and none in the first `everyMs`, so a run that
 * ends quickly prints nothing and a long one says where it is, on a terminal
 * or redirected to a log alike (analyze's bar, drawn in place, shows only on
 * a terminal). A label is built only when its line is due: callers may note
 * progress as often as they like.
 */

export interface ProgressLines {
  /** Prints `label()` if the last line (or the start) is at least `everyMs` ago. */
  note(label: () => string): void;
}

export const PROGRESS_EVERY_MS = 5_000;

/** "42s", "3m07s", "1h02m": the time since the command started. */
export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

export function progressLines(
  write: (s: string) => void,
  command: string,
  clock: () => number = () => performance.now(),
  everyMs = PROGRESS_EVERY_MS,
): ProgressLines {
  const start = clock();
  let last = start;
  return {
    note(label) {
      const now = clock();
      if (now - last < everyMs) return;
      last = now;
      write(`${command}: ${label()} (${elapsed(now - start)})\n`);
    },
  };
}
