/**
 * Where a figure comes from: the machine, the runtime (workerd's version),
 * and the gateway code measured — the commit checked out, the last commit
 * that touched the gateway itself (src/, durable-objects/, wrangler.toml),
 * and whether that code had uncommitted changes.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { machine } from "../../sim/report";
import { RUNTIME_DESCRIPTION } from "../e2e/gateway";
import { workerdBinary } from "../e2e/workerd-runtime";

export interface Provenance {
  readonly command: string;
  readonly startedAt: string;
  readonly machine: string;
  readonly loadAverageAtStart: readonly number[];
  readonly runtime: string;
  readonly commit: string;
  /** The last commit that changed the gateway's own code. */
  readonly gatewayCommit: string;
  /** The gateway's code differed from gatewayCommit (uncommitted changes). */
  readonly gatewayDirty: boolean;
}

const GATEWAY_PATHS = ["src", "durable-objects", "wrangler.toml"];

function run(cmd: string, args: readonly string[]): string {
  try {
    return execFileSync(cmd, [...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
}

export function provenance(command: string, projectDir = process.cwd()): Provenance {
  const git = (...args: string[]) => run("git", ["-C", projectDir, ...args]);
  return {
    command,
    startedAt: new Date().toISOString(),
    machine: machine(),
    loadAverageAtStart: loadavg().map((x) => Number(x.toFixed(2))),
    runtime: `${RUNTIME_DESCRIPTION.workerd}; ${run(workerdBinary(projectDir), ["--version"])}`,
    commit: git("rev-parse", "--short=12", "HEAD"),
    gatewayCommit: git("log", "-1", "--format=%h %s", "--abbrev=12", "--", ...GATEWAY_PATHS).slice(0, 80),
    gatewayDirty: git("status", "--porcelain", "--", ...GATEWAY_PATHS) !== "",
  };
}
