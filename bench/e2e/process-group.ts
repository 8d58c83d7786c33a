/**
 * Child processes that die with their whole tree. wrangler dev starts
 * esbuild and workerd as grandchildren; killing only the wrangler pid would
 * leave workerd listening. Each child is spawned as the leader of its own
 * process group (detached) and stopped by signalling the group: SIGTERM,
 * then SIGKILL after a grace period.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";

export interface GroupProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the leader exits. */
  readonly exited: Promise<number | string>;
  /** Stops the whole group; idempotent. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnGroupOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** File receiving stdout and stderr (kept for diagnosis when readiness fails). */
  readonly logFile: string;
}

const live = new Set<GroupProcess>();
let exitHookInstalled = false;

/** Last-resort cleanup when the bench itself is interrupted or throws past its finally blocks. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = (): void => {
    for (const p of live) signalGroup(p.pid, "SIGKILL");
  };
  process.once("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Group already gone.
  }
}

export function spawnGroup(command: string, args: readonly string[], opts: SpawnGroupOptions): GroupProcess {
  installExitHook();
  const log = createWriteStream(opts.logFile, { flags: "a" });
  const child = spawn(command, [...args], {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  if (child.pid === undefined) throw new Error(`could not spawn ${command}`);
  const pid = child.pid;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  let stopping: Promise<void> | undefined;
  const proc: GroupProcess = {
    pid,
    child,
    exited,
    stop(graceMs = 3000) {
      stopping ??= (async () => {
        signalGroup(pid, "SIGTERM");
        const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), graceMs).unref());
        if ((await Promise.race([exited, timer])) === "timeout") signalGroup(pid, "SIGKILL");
        // Grandchildren (workerd) may outlive the leader: always sweep the group.
        signalGroup(pid, "SIGKILL");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 1000).unref())]);
        live.delete(proc);
        log.end();
      })();
      return stopping;
    },
  };
  live.add(proc);
  return proc;
}
