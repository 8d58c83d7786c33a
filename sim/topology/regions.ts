/**
 * The regions the topology model knows, the round-trip times between them,
 * and what each region is called in the two placement settings (a Durable
 * Object location hint, a Worker placement region). Data only, each figure
 * with its source: the model (path-model.ts) takes them as inputs, and
 * `--rtt` replaces any of them with your own measurement.
 */
import type { LocationHint } from "../../src/routing/defaults";

export const REGIONS = ["us-east", "us-west", "eu-west", "ap-northeast", "ap-southeast", "oc"] as const;
export type Region = (typeof REGIONS)[number];

export function isRegion(s: string): s is Region {
  return (REGIONS as readonly string[]).includes(s);
}

/** Each region: the AWS region its round-trip times were measured from, and the settings that point at it. */
export interface RegionSite {
  /** The AWS region the published figures were measured in. */
  readonly aws: string;
  readonly city: string;
  /** ROUTER_LOCATION_HINT for a fleet here (Cloudflare's Durable Object location hints). */
  readonly hint: LocationHint;
  /** wrangler.toml `[placement] region` for a fleet here. */
  readonly placement: string;
}

export const SITES: Readonly<Record<Region, RegionSite>> = {
  "us-east": { aws: "us-east-1", city: "N. Virginia", hint: "enam", placement: "aws:us-east-1" },
  "us-west": { aws: "us-west-2", city: "Oregon", hint: "wnam", placement: "aws:us-west-2" },
  "eu-west": { aws: "eu-west-1", city: "Ireland", hint: "weur", placement: "aws:eu-west-1" },
  "ap-northeast": { aws: "ap-northeast-1", city: "Tokyo", hint: "apac-ne", placement: "aws:ap-northeast-1" },
  "ap-southeast": {
    aws: "ap-southeast-1",
    city: "Singapore",
    hint: "apac-se",
    placement: "aws:ap-southeast-1",
  },
  oc: { aws: "ap-southeast-2", city: "Sydney", hint: "oc", placement: "aws:ap-southeast-2" },
};

/**
 * Where the inter-region figures come from: the average ping between EC2
 * instances in two AWS regions, one table measured both ways ("Latency
 * Between AWS Global Regions", as tabulated in "AWS Regions", A Computer
 * Scientist Learns AWS, April 2017). Newer single measurements agree within
 * ~15%: us-east-1 → eu-west-1 66.6 ms (average of 10 pings EC2 → EC2
 * endpoint, gist.github.com/caius/21eca095ba281393f0616e2325410278), and
 * cloudping.co's live matrix puts ap-east-1 (Hong Kong) → us-east-1 at 202 ms.
 */
export const RTT_SOURCE =
  "https://acomputerscientistlearnsaws.blogspot.com/2017/04/aws-regions.html (average EC2-to-EC2 ping, each pair measured both ways)";

/** [a, b, a → b ms, b → a ms] as published; the model uses the mean of the two directions. */
const PUBLISHED: readonly (readonly [Region, Region, number, number])[] = [
  ["us-east", "us-west", 86.98, 88.68],
  ["us-east", "eu-west", 80.55, 80.52],
  ["us-east", "ap-northeast", 145.3, 145.3],
  ["us-east", "ap-southeast", 216.7, 216.7],
  ["us-east", "oc", 230, 229.7],
  ["us-west", "eu-west", 137, 137],
  ["us-west", "ap-northeast", 89.1, 89.16],
  ["us-west", "ap-southeast", 161.4, 161.4],
  ["us-west", "oc", 162.2, 161.9],
  ["eu-west", "ap-northeast", 212.4, 212.4],
  ["eu-west", "ap-southeast", 239, 238.1],
  ["eu-west", "oc", 309.6, 309.6],
  ["ap-northeast", "ap-southeast", 73.79, 73.81],
  ["ap-northeast", "oc", 103.9, 103.9],
  ["ap-southeast", "oc", 175.3, 175.4],
];

const pairKey = (a: Region, b: Region): string => (a < b ? `${a}|${b}` : `${b}|${a}`);

/** Round-trip times between two different regions, ms, by unordered pair. */
export type RttTable = ReadonlyMap<string, number>;

/** The published table, each pair's two directions averaged. */
export function publishedRtts(): RttTable {
  return new Map(PUBLISHED.map(([a, b, ab, ba]) => [pairKey(a, b), (ab + ba) / 2]));
}

/** `table` with some pairs replaced (`--rtt us-east:eu-west=70`). */
export function withRtts(
  table: RttTable,
  overrides: readonly (readonly [Region, Region, number])[],
): RttTable {
  const out = new Map(table);
  for (const [a, b, ms] of overrides) {
    if (a === b) throw new RangeError(`an override needs two different regions, got ${a}:${b}`);
    if (!(ms > 0)) throw new RangeError(`${a}:${b} must be a positive number of ms, got ${ms}`);
    out.set(pairKey(a, b), ms);
  }
  return out;
}

/** The round-trip time between two regions; `localMs` within one. */
export function rttBetween(table: RttTable, a: Region, b: Region, localMs: number): number {
  if (a === b) return localMs;
  const ms = table.get(pairKey(a, b));
  if (ms === undefined) throw new RangeError(`no round-trip time for ${a} ↔ ${b}`);
  return ms;
}
