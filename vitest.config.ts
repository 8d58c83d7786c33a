import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// wrangler reads wrangler.toml for the workerd tests and says which secrets it found and that the
// required ones are missing: the tests bind their own below, so only its errors are worth printing.
process.env.WRANGLER_LOG ??= "error";

/**
 * wrangler.toml's [vars] as it states them. The plugin builds the Worker's bindings as `wrangler dev` does, so a
 * developer's .dev.vars next to wrangler.toml overrode any of them (and the required secrets) for every test:
 * with ROUTER_CELLS=2 in it, admin.test.ts failed (its pool cut in two cells). The plugin has no option to leave
 * .dev.vars out (it passes wrangler no envFiles), so each var is bound again here, over what .dev.vars says; keys
 * that are neither a var nor a required secret wrangler already leaves out of .dev.vars (the [secrets] block).
 */
function wranglerVars(): Record<string, string> {
  const vars = unstable_readConfig({ config: "./wrangler.toml" }).vars;
  return Object.fromEntries(
    Object.entries(vars).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/** Secrets and vars the workerd tests run with (test/worker/helpers.ts mirrors the names). */
function workerTestBindings(
  urls: readonly string[],
  spareUrls: readonly string[],
  faultUrls: readonly string[],
  cellFaultUrls: readonly string[],
  scrapeUrls: readonly string[],
  metricsFaultUrl: string,
): Record<string, string> {
  return {
    // Not secrets the Worker reads: the spare and fault fleets' addresses, for tests that swap BACKENDS.
    TEST_SPARE_URLS: JSON.stringify(spareUrls),
    TEST_FAULT_URLS: JSON.stringify(faultUrls),
    TEST_CELL_FAULT_URLS: JSON.stringify(cellFaultUrls),
    // The /metrics scrape tests' own emulators, and a fake backend whose /metrics misbehaves.
    TEST_SCRAPE_URLS: JSON.stringify(scrapeUrls),
    TEST_METRICS_FAULT_URL: metricsFaultUrl,
    BACKENDS: JSON.stringify(
      urls.map((url, i) => ({
        id: `emu-${i + 1}`,
        url,
        models: ["test-model"],
        apiKey: "emu-test-key",
        weight: 1,
        kvCacheTokens: 262144,
      })),
    ),
    // A third key with no in-flight limit (the default, KEY_MAX_CONCURRENT 0): the per-key slot's release, run in
    // waitUntil when a client leaves, kept the request's context alive for the others; a client that leaves on
    // this key shows what a deployment without per-key limits does (client-gone.test.ts).
    GATEWAY_API_KEYS: "test-client-key-alpha, test-client-key-beta, test-key-unlimited max_concurrent=0",
    ADMIN_TOKEN: "test-admin-token-0123456789",
    HEALTH_PROBE_SECONDS: "1",
    // Every test runs with a (generous) in-flight limit per key, so the whole suite goes through the
    // KeyLimiterDO and the releasing body wrapper; wrangler.toml's default is 0 (off).
    KEY_MAX_CONCURRENT: "64",
    // The Worker's wait for its RouterDO's answer (ROUTER_TIMEOUT_MS, 50 ms in wrangler.toml and deployed): so
    // generous here that no loaded test machine misses it. Past it the Worker decides alone (reason `local`)
    // and then for ROUTER_BACKOFF_MS more, so a test that reads a decision's reason or the RouterDO's counters,
    // leases or throttle would see that request missing, now and then, under a full suite on two busy cores.
    // A test of the fallback itself asks for the deployed deadline (router-fallback.test.ts).
    ROUTER_TIMEOUT_MS: "10000",
    // No scrape of the emulators' /metrics (wrangler.toml's default too, said here so it stays off in tests
    // whatever the default becomes): a test that wants it sets ENGINE_SCRAPE_MS itself.
    ENGINE_SCRAPE_MS: "0",
    // No check of the backends' /v1/models either (wrangler.toml's default is 300 s): every RouterDO of every
    // test would ask its backends once at its first route call; test/worker/backend-check.test.ts turns it on.
    BACKEND_CHECK_SECONDS: "0",
  };
}

// Two projects: code that needs no Workers runtime (routing core, prompt keying, the Worker's pure
// modules, simulator, emulator) under plain Node, and the Worker + Durable Objects inside workerd
// through @cloudflare/vitest-plugin.
export default defineConfig({
  test: {
    // A passing test prints nothing (the Worker logs a JSON line per request); a failing one shows its output.
    silent: "passed-only",
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          // A hang guard, not a speed assertion: vitest's 5 s default failed six pure tests (tokenizer,
          // routing core) in a full run on two cores at load 10-14, tests that take well under a second
          // on an idle machine (bench/results/red-team.md). No test here times itself against this.
          testTimeout: 30_000,
          // The files share one worker and its loaded modules instead of a fresh one each: importing the
          // tokenizer, the routing core and the simulator again for each of ~145 files cost ~240 s of a full
          // run on two busy cores. A test that needs a module's first load imports a fresh instance itself
          // (test/node/tokenizer.test.ts).
          isolate: false,
          include: [
            "src/routing/**/*.test.ts",
            "src/prefix/**/*.test.ts",
            // Worker modules that need no Workers runtime (the app and its bindings are tested in workerd).
            "src/worker/**/*.test.ts",
            "sim/**/*.test.ts",
            "bench/**/*.test.ts",
            "test/node/**/*.test.ts",
            // The RouterDO's helpers that need no Workers runtime (the object itself is tested in workerd).
            "durable-objects/**/*.test.ts",
          ],
        },
      },
      {
        // The real Worker and RouterDO in workerd, against real backend emulators (HTTP on loopback)
        // that test/worker/global-setup.ts starts on ephemeral ports before the Worker boots.
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                ...wranglerVars(),
                ...workerTestBindings(
                  inject<string[]>("emulatorUrls"),
                  inject<string[]>("spareEmulatorUrls"),
                  inject<string[]>("faultEmulatorUrls"),
                  inject<string[]>("cellFaultEmulatorUrls"),
                  inject<string[]>("scrapeEmulatorUrls"),
                  inject<string>("metricsFaultUrl"),
                ),
              },
              // The same kind of binding as wrangler.toml's KEY_RATE_LIMITER, with a limit a test can reach;
              // key-limits.test.ts swaps it in. Its own namespace, so its counters are its own.
              ratelimits: {
                TEST_KEY_RATE_LIMITER: { namespace_id: "4243", simple: { limit: 3, period: 60 } },
                // wrangler.toml's own limiter, still called on every request (KEY_RATE_LIMIT = "on"), with room for
                // the whole run: the files share one workerd and so its counters (isolate: false below), and the
                // fuzz files alone send more than wrangler.toml's 600 a minute on the default key. Reaching a
                // limit is tested with TEST_KEY_RATE_LIMITER (key-limits.test.ts, cors.test.ts).
                KEY_RATE_LIMITER: { namespace_id: "4244", simple: { limit: 1_000_000, period: 60 } },
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/worker/**/*.test.ts"],
          // One workerd for all the files, not one per file: starting it and loading the Worker's modules into
          // it cost ~12 s a file on two busy cores, ~400 s of a full run (bench/results/red-team.md "The whole
          // suite"). Files run one at a time, so none sees another's requests in flight, nor has its Durable
          // Objects reset under it by another file's fresh-state.ts: said here (maxWorkers), not left to the
          // core count (vitest's default is 1 on two cores only). Each file starts with no Durable Object, as in
          // a workerd of its own (fresh-state.ts); what files share is the Worker's module state, the rate
          // limiter's counters (room for the whole run above) and the emulators (shared before too).
          isolate: false,
          maxWorkers: 1,
          setupFiles: ["test/worker/fresh-state.ts"],
          globalSetup: ["test/worker/global-setup.ts"],
          testTimeout: 20_000,
        },
      },
    ],
  },
});
