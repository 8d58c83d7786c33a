/**
 * A one-line progress bar on a terminal: redrawn in place on stderr at most
 * every `intervalMs`, erased when done. Off the terminal (a pipe, a file,
 * CI logs, tests) it writes nothing, so --json output and logs stay clean.
 */

export interface ProgressSink {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(s: string): unknown;
}

export interface Progress {
  /** `fraction` in [0, 1], or undefined when the total is unknown (stdin). */
  update(fraction: number | undefined, label: string): void;
  done(): void;
}

const BAR = 24;
const NONE: Progress = { update() {}, done() {} };

export function progressBar(
  sink: ProgressSink,
  clock: () => number = () => performance.now(),
  intervalMs = 100,
): Progress {
  if (sink.isTTY !== true) return NONE;
  let last = Number.NEGATIVE_INFINITY;
  let drawn = false;
  return {
    update(fraction, label) {
      const now = clock();
      if (now - last < intervalMs) return;
      last = now;
      let line = label;
      if (fraction !== undefined) {
        const f = Math.min(1, Math.max(0, fraction));
        const full = Math.round(f * BAR);
        line = `[${"#".repeat(full)}${"-".repeat(BAR - full)}] ${(f * 100).toFixed(0).padStart(3)}% ${label}`;
      }
      const width = Math.max(20, (sink.columns || 80) - 1);
      sink.write(`\r\x1b[2K${line.slice(0, width)}`);
      drawn = true;
    },
    done() {
      if (drawn) sink.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
