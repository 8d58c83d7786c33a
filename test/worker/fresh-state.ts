/**
 * Setup file of the workers project (vitest.config.ts): the files share one workerd (isolate: false), so each
 * starts as it would in a workerd of its own, with no Durable Object — no RouterDO, cell or KeyLimiterDO state
 * (leases, health, retry budget, counters, storage) left by the files before it. Each test inside a file still
 * sees what the tests before it did, as before.
 */
import { reset } from "cloudflare:test";
import { beforeAll } from "vitest";

beforeAll(async () => {
  await reset();
});
