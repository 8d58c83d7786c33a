import { describe, expect, it } from "vitest";
import { DEPLOYMENTS, LIMITER_DEPLOYMENTS, topologyOf } from "./deployments";
import { compare, directPath, gatewayPath, HANDSHAKE_ROUND_TRIPS, type PathInputs, WARM } from "./path-model";
import { publishedRtts, REGIONS, type Region, rttBetween } from "./regions";

const inputs: PathInputs = {
  rtts: publishedRtts(),
  accessMs: 10,
  localMs: 2,
  gatewayMs: 5,
  // Deadlines no round trip in these tests reaches, except where a test lowers them.
  routerTimeoutMs: 1000,
  limiterTimeoutMs: 1000,
};
const R = (a: Region, b: Region): number => rttBetween(inputs.rtts, a, b, inputs.localMs);
const deployment = (id: string) => [...DEPLOYMENTS, ...LIMITER_DEPLOYMENTS].find((d) => d.id === id)!;
const added = (id: string, client: Region, fleet: Region = "us-east", far: Region = "ap-southeast") =>
  compare(inputs, topologyOf(deployment(id), client, fleet, far), WARM).addedMs;
const farClients = REGIONS.filter((r) => r !== "us-east");

describe("the direct path", () => {
  it("is one round trip on a reused connection, and the handshakes more on a new one", () => {
    const warm = directPath(inputs, "eu-west", "us-east", WARM).ms;
    expect(warm).toBeCloseTo(10 + R("eu-west", "us-east"), 9);
    const cold = directPath(inputs, "eu-west", "us-east", { client: "cold", upstream: "warm" }).ms;
    expect(cold).toBeCloseTo((HANDSHAKE_ROUND_TRIPS + 1) * warm, 9);
  });
});

describe("the gateway path", () => {
  it("without placement, crosses the long distance twice (route call, backend) where a direct client crosses it once", () => {
    for (const client of farClients) {
      const path = gatewayPath(inputs, topologyOf(deployment("edge"), client, "us-east", "oc"), WARM);
      const long = path.legs.filter((l) => l.rttMs === R(client, "us-east"));
      expect(long.map((l) => l.hop)).toEqual(["Worker ↔ RouterDO", "Worker ↔ backend"]);
      expect(added("edge", client)).toBeCloseTo(R(client, "us-east") + inputs.gatewayMs, 9);
    }
  });

  it("with placement and the RouterDO near the fleet, adds two local round trips and its own work, wherever the client is", () => {
    for (const client of farClients)
      expect(added("placed", client)).toBeCloseTo(2 * inputs.localMs + inputs.gatewayMs, 9);
    // A client in the fleet's region is served where it lands: no forwarding hop.
    expect(added("placed", "us-east")).toBeCloseTo(added("edge", "us-east"), 9);
    expect(added("placed", "us-east")).toBeCloseTo(inputs.localMs + inputs.gatewayMs, 9);
  });

  it("with placement but the RouterDO made far away, pays the fleet ↔ far round trip on every request", () => {
    for (const client of REGIONS)
      expect(added("placed-far", client) - added("placed", client)).toBeCloseTo(
        R("us-east", "ap-southeast") - inputs.localMs,
        9,
      );
  });

  it("costs something on reused connections under every deployment: it never beats a warm direct client", () => {
    for (const d of [...DEPLOYMENTS, ...LIMITER_DEPLOYMENTS])
      for (const client of REGIONS) {
        const c = compare(inputs, topologyOf(d, client, "us-east", "ap-southeast"), WARM);
        expect(c.addedMs, `${d.id} ${client}`).toBeGreaterThan(0);
      }
  });

  it("on a new client connection, pays the handshakes to the nearby colo only", () => {
    const conn = { client: "cold", upstream: "warm" } as const;
    for (const client of farClients) {
      const t = topologyOf(deployment("placed"), client, "us-east", "oc");
      const saved = HANDSHAKE_ROUND_TRIPS * R(client, "us-east");
      expect(compare(inputs, t, conn).addedMs).toBeCloseTo(compare(inputs, t, WARM).addedMs - saved, 9);
    }
  });

  it("on a new backend connection, pays the handshakes over the Worker ↔ fleet distance", () => {
    const conn = { client: "warm", upstream: "cold" } as const;
    const edge = topologyOf(deployment("edge"), "eu-west", "us-east", "oc");
    const placed = topologyOf(deployment("placed"), "eu-west", "us-east", "oc");
    expect(compare(inputs, edge, conn).addedMs - compare(inputs, edge, WARM).addedMs).toBeCloseTo(
      HANDSHAKE_ROUND_TRIPS * R("eu-west", "us-east"),
      9,
    );
    expect(compare(inputs, placed, conn).addedMs - compare(inputs, placed, WARM).addedMs).toBeCloseTo(
      HANDSHAKE_ROUND_TRIPS * inputs.localMs,
      9,
    );
  });

  it("waits no longer than ROUTER_TIMEOUT_MS for a far RouterDO, then the isolate decides alone", () => {
    const t = topologyOf(deployment("edge"), "ap-southeast", "us-east", "oc");
    const patient = gatewayPath(inputs, t, WARM);
    expect(patient.routedBy).toBe("router");
    const hasty = gatewayPath({ ...inputs, routerTimeoutMs: 50 }, t, WARM);
    expect(hasty.routedBy).toBe("local");
    expect(hasty.legs.find((l) => l.hop === "Worker ↔ RouterDO")).toEqual({
      hop: "Worker ↔ RouterDO",
      roundTrips: 1,
      rttMs: 50,
      cut: true,
    });
    expect(patient.ms - hasty.ms).toBeCloseTo(R("ap-southeast", "us-east") - 50, 9);
    // Near the fleet the deadline is never reached.
    const placed = topologyOf(deployment("placed"), "ap-southeast", "us-east", "oc");
    expect(gatewayPath({ ...inputs, routerTimeoutMs: 50 }, placed, WARM).routedBy).toBe("router");
  });

  it("goes ahead without a slot past the KeyLimiterDO's deadline", () => {
    const t = topologyOf(deployment("edge-hint"), "oc", "eu-west", "oc");
    const leg = gatewayPath({ ...inputs, limiterTimeoutMs: 300 }, t, WARM).legs.find(
      (l) => l.hop === "Worker ↔ KeyLimiterDO",
    );
    expect(R("oc", "eu-west")).toBeGreaterThan(300);
    expect(leg).toMatchObject({ rttMs: 300, cut: true });
  });

  it("calls the KeyLimiterDO only when limits are on, where its hint or its first caller put it", () => {
    const off = gatewayPath(inputs, topologyOf(deployment("edge"), "eu-west", "us-east", "oc"), WARM);
    expect(off.legs.some((l) => l.hop === "Worker ↔ KeyLimiterDO")).toBe(false);
    const limiterRtt = (id: string) =>
      gatewayPath(inputs, topologyOf(deployment(id), "eu-west", "us-east", "oc"), WARM).legs.find(
        (l) => l.hop === "Worker ↔ KeyLimiterDO",
      )?.rttMs;
    expect(limiterRtt("edge-nohint")).toBe(inputs.localMs);
    expect(limiterRtt("edge-hint")).toBe(R("eu-west", "us-east"));
    expect(limiterRtt("placed-hint")).toBe(inputs.localMs);
  });
});
