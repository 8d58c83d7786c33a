import { describe, expect, it } from "vitest";
import { POLICY_NAMES } from "../src/routing/types";
import { BASELINE_NAMES } from "./baselines/index";
import { routerFactory, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { GATEWAY_VIEW, routeRequest } from "./request-view";
import { simulatePolicy } from "./simulator";
import { segmentRequest } from "./workloads/request";
import type { Workload } from "./workloads/types";

/** The same 30,000-token prompt twice, the second long after the first finished. */
const longTwice: Workload = {
  name: "long-twice",
  blockTokens: 16,
  malformed: 0,
  requests: [0, 60_000].map((t) => segmentRequest(t, [{ key: "doc", tokens: 30_000 }], 8)),
};
const w = prepareWorkload(longTwice, { prefixTokens: 8192 });
const fleet = { backends: 4, kvCacheTokens: 200_000, seed: 1 };

describe("what each router is given", () => {
  it("gives our policies the gateway's keys and every peer the whole prompt's", () => {
    for (const p of POLICY_NAMES) expect(viewOf(p)).toEqual(GATEWAY_VIEW);
    for (const p of BASELINE_NAMES) expect(viewOf(p).keys).toBe("whole-prompt");
    expect(routeRequest(w, 0, GATEWAY_VIEW).blocks).toHaveLength(8192 / 16);
    expect(routeRequest(w, 0, viewOf("sglang")).blocks).toHaveLength(30_000 / 16);
    expect(routeRequest(w, 0, viewOf("sglang")).blocks.slice(0, 512)).toEqual(w.gatewayBlocks[0]);
  });

  it("gives a prompt with no full block the gateway's whole-prompt key, only in the gateway's view", () => {
    const short: Workload = {
      name: "short",
      blockTokens: 16,
      malformed: 0,
      requests: ["a", "b", "a"].map((k, i) => segmentRequest(i * 1000, [{ key: k, tokens: 9 }], 4)),
    };
    const p = prepareWorkload(short);
    const keys = [0, 1, 2].map((i) => routeRequest(p, i, GATEWAY_VIEW).promptKey);
    expect(keys[0]).toBeDefined();
    expect(keys[0]).toBe(keys[2]);
    expect(keys[1]).not.toBe(keys[0]);
    expect(routeRequest(p, 0, viewOf("sagemaker")).promptKey).toBeUndefined();
    expect(routeRequest(w, 0, GATEWAY_VIEW).promptKey).toBeUndefined();
  });

  it("lets SGLang's match ratio (match / whole prompt) pass its 0.3 threshold on a long prompt", () => {
    const sglang = (view = viewOf("sglang")) =>
      simulatePolicy(w, fleet, "sglang", routerFactory("sglang", w.blockTokens), view);
    // Its own inputs: the repeat matches all 30,000 tokens, ratio 1 → the tree's worker.
    expect(sglang().reasons.affinity).toBe(1);
    // Cut to our 8,192-token window it could match at most 8,192 / 30,000 = 0.27: never affinity.
    expect(sglang(GATEWAY_VIEW).reasons.affinity).toBe(0);
  });
});
