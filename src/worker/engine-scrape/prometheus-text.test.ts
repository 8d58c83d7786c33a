import { describe, expect, it } from "vitest";
import { parsePromLine, parsePromValue, sampleName } from "./prometheus-text";

describe("parsePromLine", () => {
  it.each([
    ["vllm:num_requests_running 3", { name: "vllm:num_requests_running", labels: {}, value: 3 }],
    [
      'vllm:num_requests_waiting{model_name="meta-llama/Llama-3.1-8B-Instruct",engine="0"} 1.0',
      {
        name: "vllm:num_requests_waiting",
        labels: { model_name: "meta-llama/Llama-3.1-8B-Instruct", engine: "0" },
        value: 1,
      },
    ],
    ['x_total{a="1"} 1.5e+06 1712345678000', { name: "x_total", labels: { a: "1" }, value: 1.5e6 }],
    ['h_bucket{le="+Inf"} 42', { name: "h_bucket", labels: { le: "+Inf" }, value: 42 }],
    ['g{a="x", b = "y" ,} -0.5', { name: "g", labels: { a: "x", b: "y" }, value: -0.5 }],
    ["  g\t7\r", { name: "g", labels: {}, value: 7 }],
  ])("reads %j", (line, sample) => {
    expect(parsePromLine(line)).toEqual(sample);
  });

  it("reads escaped and awkward label values: quotes, backslashes, newlines, braces, commas, spaces", () => {
    const s = parsePromLine('m{path="a \\"b\\", c} {d}",w="x\\\\y\\nz"} 2');
    expect(s).toEqual({ name: "m", labels: { path: 'a "b", c} {d}', w: "x\\y\nz" }, value: 2 });
  });

  it("reads NaN and the infinities as Go writes them", () => {
    expect(parsePromLine("g NaN")!.value).toBeNaN();
    expect(parsePromLine("g +Inf")!.value).toBe(Number.POSITIVE_INFINITY);
    expect(parsePromLine("g -Inf")!.value).toBe(Number.NEGATIVE_INFINITY);
    expect(parsePromValue("Inf")).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([
    "",
    "   ",
    "# HELP vllm:num_requests_running Number of requests in model execution batches.",
    "# TYPE vllm:num_requests_running gauge",
    "# a comment",
    "g",
    'g{a="1"}',
    "g abc",
    "g 1 2 3",
    'g{a="1" 1',
    "g{a=1} 1",
    'g{="1"} 1',
    "1g 1",
    "g 0x10",
  ])("skips %j", (line) => {
    expect(parsePromLine(line)).toBeUndefined();
  });

  it("names a sample line without reading it, and nothing else", () => {
    expect(sampleName('vllm:kv_cache_usage_perc{engine="0"} 0.5')).toBe("vllm:kv_cache_usage_perc");
    expect(sampleName("# TYPE vllm:kv_cache_usage_perc gauge")).toBeUndefined();
    expect(sampleName("")).toBeUndefined();
  });
});
