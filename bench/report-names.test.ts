import { describe, expect, it } from "vitest";
import { raceReportName } from "./report-names";

describe("raceReportName", () => {
  it("drops a scrape run's -scrapeN, so it pairs with the race's report", () => {
    expect(raceReportName("zipf-8b-r40-scrape1000-scoring-s3.json")).toBe("zipf-8b-r40-scoring-s3.json");
    expect(raceReportName("mooncake-8b-x2-scrape1000-scoring-qwen3-30b-a3b-h100-vllm.json")).toBe(
      "mooncake-8b-x2-scoring-qwen3-30b-a3b-h100-vllm.json",
    );
  });

  it("leaves a race report's name alone", () => {
    expect(raceReportName("zipf-8b-r40-scoring-s3.json")).toBe("zipf-8b-r40-scoring-s3.json");
  });
});
