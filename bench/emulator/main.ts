/**
 * CLI: one emulated vLLM replica.
 *
 *   npm run emulator -- --port 8101 --model llama-3.1-8b-instruct [--api-key K] [--speed X]
 *     [--preset llama-3.1-8b-h100-vllm] [--kv-tokens T] [--prefill-tps N] [--max-running N]
 *     [--block-tokens N] [--max-batched-tokens N] [--decode-base-ms X] [--decode-per-seq-ms X]
 *     [--decode-per-ktoken-ms X] [--kv-allocation incremental|reserve] [--host H] [--control] [--fault JSON]
 *
 * --control serves the fault-injection endpoint (control.ts); --fault starts
 * with a fault already set (a FaultSpec, fault-spec.ts); --help documents both.
 */
import { parseArgs } from "node:util";
import { DEFAULT_KV_ALLOCATION, kvAllocationFlag } from "../../sim/model/engine-config";
import { ENGINE_PRESETS } from "../../sim/model/presets";
import type { EngineConfig, KvAllocation } from "../../sim/model/types";
import { type FaultSpec, parseFaultSpec } from "./fault-spec";
import { startEmulator } from "./server";

/** The engine settings this emulator takes as numbers (kvAllocation is --kv-allocation's). */
type NumericEngineKey = Exclude<keyof EngineConfig, "kvAllocation">;

const USAGE =
  "usage: npm run emulator -- --port P --model M [--api-key K] [--speed X] [--preset NAME] [--kv-tokens T]\n" +
  "  [--prefill-tps N] [--max-running N] [--block-tokens N] [--max-batched-tokens N]\n" +
  "  [--decode-base-ms X] [--decode-per-seq-ms X] [--decode-per-ktoken-ms X] [--host H]\n" +
  "  [--kv-allocation incremental|reserve] [--control] [--fault JSON]\n" +
  `  --kv-allocation: how the engine takes KV blocks (default ${DEFAULT_KV_ALLOCATION}: step by step with preemption,\n` +
  "    as vLLM V1's scheduler does; reserve: prompt + output at admission, never preempted, the default before)\n" +
  `  presets: ${Object.keys(ENGINE_PRESETS).join(", ")}`;

/** The fault-injection part of --help (control.ts, fault-spec.ts). */
const FAULT_HELP =
  "fault injection (for failure tests):\n" +
  "  --fault JSON   start with this fault set (the JSON of a spec, below)\n" +
  "  --control      serve the control endpoint; without it /_control/* is 404 like any unknown path.\n" +
  "                 Control requests need no API key and never meet a fault; each answers\n" +
  '                 {"fault", "health", "up", "stats"}; bad input is a 400 naming the field.\n' +
  "    GET    /_control/fault    the state and counts (requests, served, faulted by kind, abandoned, held, ...)\n" +
  "    POST   /_control/fault    set the fault (body: a spec)\n" +
  "    DELETE /_control/fault    clear it: hung requests are then served, stalled streams closed\n" +
  '    POST   /_control/health   /health fails on its own: {"status": 400..599} (default 503)\n' +
  "    DELETE /_control/health   /health is itself again\n" +
  '    POST   /_control/down     {"ms": 1..60000}: 202, then the process is killed (connections refused)\n' +
  "                              and restarted on the same port after ms with a fresh engine\n" +
  '  spec: {"kind": "status" | "hang" | "stall" | "cut" | "reset", ...}\n' +
  '    status  {"status": 400..599 (503), "retryAfterSeconds": N (429: 1; 429/503 only), "message": S}\n' +
  "    hang    reads the request, sends nothing until the fault is cleared or the client leaves\n" +
  '    stall   {"afterChunks": N (0), "chunkIntervalMs": X (0)}: headers and N chunks, then silence\n' +
  '    cut     {"afterChunks": N (1), "chunkIntervalMs": X (0)}: headers and N chunks, then the\n' +
  "            connection closes mid-body (no [DONE])\n" +
  "    reset   reads the request, then resets the connection without answering\n" +
  '    any     {"match": S} only prompts containing S; {"probability": p in (0,1], "seed": N (1)}\n' +
  '            a seeded share of them; {"health": "follow"} /health behaves as the fault (no match)\n' +
  '  e.g. --control --fault \'{"kind":"status","status":429,"probability":0.2,"seed":7}\'';

function fail(message: string): never {
  process.stderr.write(`emulator: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function num(
  name: string,
  raw: string | undefined,
  opts: { int?: boolean; min: number },
): number | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(v) || v < opts.min || (opts.int === true && !Number.isInteger(v)))
    fail(`--${name} must be ${opts.int === true ? "an integer" : "a number"} ≥ ${opts.min}, got "${raw}"`);
  return v;
}

function kvAllocationOption(raw: string | undefined): KvAllocation {
  try {
    return kvAllocationFlag(raw);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e));
  }
}

function faultOption(raw: string | undefined): FaultSpec | undefined {
  if (raw === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    fail(`--fault must be JSON, got "${raw}"`);
  }
  const parsed = parseFaultSpec(json);
  if (!parsed.ok) fail(`--fault: ${parsed.message}`);
  return parsed.value;
}

function main(): void {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: "string" },
        host: { type: "string" },
        model: { type: "string" },
        "api-key": { type: "string" },
        speed: { type: "string" },
        preset: { type: "string" },
        "kv-tokens": { type: "string" },
        "prefill-tps": { type: "string" },
        "max-running": { type: "string" },
        "block-tokens": { type: "string" },
        "max-batched-tokens": { type: "string" },
        "decode-base-ms": { type: "string" },
        "decode-per-seq-ms": { type: "string" },
        "decode-per-ktoken-ms": { type: "string" },
        "kv-allocation": { type: "string" },
        control: { type: "boolean" },
        fault: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n\n${FAULT_HELP}\n`);
    return;
  }
  const s = (k: string): string | undefined => values[k] as string | undefined;
  const port = num("port", s("port"), { int: true, min: 0 });
  if (port === undefined || port > 65535) fail("--port is required (0-65535)");
  const model = s("model");
  if (model === undefined || model === "") fail("--model is required");
  const presetName = s("preset");
  const preset = presetName === undefined ? undefined : ENGINE_PRESETS[presetName];
  if (presetName !== undefined && preset === undefined) fail(`unknown --preset "${presetName}"`);

  const overrides: Partial<Record<NumericEngineKey, number>> = {};
  const set = (key: NumericEngineKey, v: number | undefined): void => {
    if (v !== undefined) overrides[key] = v;
  };
  set("kvCacheTokens", num("kv-tokens", s("kv-tokens"), { int: true, min: 1 }));
  set("prefillTokensPerSec", num("prefill-tps", s("prefill-tps"), { min: 1 }));
  set("maxRunning", num("max-running", s("max-running"), { int: true, min: 1 }));
  set("blockTokens", num("block-tokens", s("block-tokens"), { int: true, min: 1 }));
  set("maxBatchedTokens", num("max-batched-tokens", s("max-batched-tokens"), { int: true, min: 1 }));
  set("decodeStepBaseMs", num("decode-base-ms", s("decode-base-ms"), { min: 0 }));
  set("decodeStepPerSeqMs", num("decode-per-seq-ms", s("decode-per-seq-ms"), { min: 0 }));
  set("decodeStepPerKTokenMs", num("decode-per-ktoken-ms", s("decode-per-ktoken-ms"), { min: 0 }));
  const kvAllocation = kvAllocationOption(s("kv-allocation"));
  const speed = num("speed", s("speed"), { min: Number.MIN_VALUE }) ?? 1;
  const fault = faultOption(s("fault"));

  startEmulator({
    port,
    host: s("host"),
    model,
    apiKey: s("api-key"),
    speed,
    engine: { ...preset, ...overrides, kvAllocation },
    control: values.control === true,
  }).then(
    (emu) => {
      if (fault !== undefined) emu.setFault(fault);
      const extras = [
        values.control === true ? "control on" : "",
        fault === undefined ? "" : `fault ${fault.kind}`,
      ];
      const notes = extras.filter((x) => x !== "").join(", ");
      process.stdout.write(
        `emulator: ${model} on ${emu.url} (speed ×${speed}${notes === "" ? "" : `, ${notes}`})\n`,
      );
      const stop = (): void => {
        emu.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    },
    (err: unknown) => fail(err instanceof Error ? err.message : String(err)),
  );
}

main();
