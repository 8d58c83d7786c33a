#!/usr/bin/env node
// prefix-gateway: the user-facing CLI. `analyze`: measure how much of your
// request log shares prefixes and whether prefix-aware routing would pay;
// `simulate`: replay it on a simulated fleet and compare routing policies.
// The TypeScript sources are loaded through tsx's ESM API (no build step).
import { register } from "tsx/esm/api";

const TOP_USAGE = `usage: prefix-gateway <command> [options]

commands:
  analyze    measure a request log (OpenAI log, Mooncake trace or the gateway's own
             wrangler tail output): shared prefixes, a fleet estimate, a verdict
             (enable / skip); see prefix-gateway analyze --help
  simulate   replay a trace (OpenAI request log or Mooncake JSONL) on a simulated
             fleet under each routing policy; see prefix-gateway simulate --help
`;

const [command, ...rest] = process.argv.slice(2);
if (command === undefined || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(TOP_USAGE);
  process.exitCode = command === undefined ? 2 : 0;
} else if (command === "simulate" || command === "analyze") {
  const unregister = register();
  try {
    if (command === "simulate") {
      const { simulateCommand } = await import("../sim/cli.ts");
      process.exitCode = await simulateCommand(rest);
    } else {
      const { analyzeCommand } = await import("../sim/analyze/cli.ts");
      process.exitCode = await analyzeCommand(rest);
    }
  } finally {
    await unregister();
  }
} else {
  process.stderr.write(`prefix-gateway: unknown command "${command}"\n\n${TOP_USAGE}`);
  process.exitCode = 2;
}
