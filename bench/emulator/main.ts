/**
 * CLI: one emulated vLLM replica.
 *
 *   npm run emulator -- --port 8101 --model llama-3.1-8b-instruct [--api-key K] [--speed X]
 *     [--preset llama-3.1-8b-h100-vllm] [--kv-tokens T] [--prefill-tps N] [--max-running N]
 *     [--block-tokens N] [--max-batched-tokens N] [--decode-base-ms X] [--decode-per-seq-ms X]
 *     [--decode-per-ktoken-ms X] [--host H]
 */
import { parseArgs } from "node:util";
import { ENGINE_PRESETS } from "../model/presets";
import type { EngineConfig } from "../model/types";
import { startEmulator } from "./server";

const USAGE =
  "usage: npm run emulator -- --port P --model M [--api-key K] [--speed X] [--preset NAME] [--kv-tokens T]\n" +
  "  [--prefill-tps N] [--max-running N] [--block-tokens N] [--max-batched-tokens N]\n" +
  "  [--decode-base-ms X] [--decode-per-seq-ms X] [--decode-per-ktoken-ms X] [--host H]\n" +
  `  presets: ${Object.keys(ENGINE_PRESETS).join(", ")}`;

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
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
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

  const overrides: Partial<Record<keyof EngineConfig, number>> = {};
  const set = (key: keyof EngineConfig, v: number | undefined): void => {
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
  const speed = num("speed", s("speed"), { min: Number.MIN_VALUE }) ?? 1;

  startEmulator({
    port,
    host: s("host"),
    model,
    apiKey: s("api-key"),
    speed,
    engine: { ...preset, ...overrides },
  }).then(
    (emu) => {
      process.stdout.write(`emulator: ${model} on ${emu.url} (speed ×${speed})\n`);
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
