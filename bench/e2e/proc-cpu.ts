/**
 * CPU time of processes from /proc (Linux): how much of the machine the
 * gateway (workerd) used, independent of the client's view. Resolution is
 * one clock tick (10 ms), so callers measure over batches.
 */
import { readdirSync, readFileSync } from "node:fs";
import { WORKERD_CONFIG_NAME } from "./workerd-runtime";

/** Linux USER_HZ; getconf CLK_TCK is 100 on every mainstream kernel config. */
const TICKS_PER_SEC = 100;

interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly pgrp: number;
  /** utime + stime, ms. */
  readonly cpuMs: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces: split after the last ')'.
  const close = text.lastIndexOf(")");
  const comm = text.slice(text.indexOf("(") + 1, close);
  const f = text.slice(close + 2).split(" ");
  // After comm: state(0) ppid(1) pgrp(2) ... utime(11) stime(12).
  return {
    pid,
    comm,
    pgrp: Number(f[2]),
    cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SEC,
  };
}

/** Every live process of a process group. */
export function groupProcesses(pgid: number): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (st !== undefined && st.pgrp === pgid) out.push(st);
  }
  return out;
}

/**
 * wrangler dev runs two workerd processes: an entry proxy (wrangler's own,
 * on the public port) and the runtime of the Worker and its Durable Objects
 * (the one with an inspector). Told apart by that flag. Served by workerd
 * alone (workerd-runtime.ts), the one process runs the Worker.
 */
function role(p: ProcStat): string {
  if (p.comm !== "workerd") return p.comm;
  let cmd = "";
  try {
    cmd = readFileSync(`/proc/${p.pid}/cmdline`, "utf8");
  } catch {
    return "workerd";
  }
  return cmd.includes("--inspector-addr") || cmd.includes(WORKERD_CONFIG_NAME)
    ? "workerd:worker"
    : "workerd:proxy";
}

/** CPU ms by role (workerd:worker, workerd:proxy, node, esbuild ...) within a process group. */
export function groupCpuByCommand(pgid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of groupProcesses(pgid)) {
    const r = role(p);
    out[r] = (out[r] ?? 0) + p.cpuMs;
  }
  return out;
}

export function diffCpu(
  after: Record<string, number>,
  before: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}
