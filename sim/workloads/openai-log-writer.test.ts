import { describe, expect, it } from "vitest";
import { multiTurn } from "./multi-turn";
import { noSharedPrefix } from "./no-shared-prefix";
import { LOG_EPOCH_MS, openAILogLine, segmentMessages } from "./openai-log-writer";
import { traceRecordRequest } from "./trace-file";

describe("generated workloads as OpenAI request logs", () => {
  it("writes multi-turn chat as system, user, assistant, …, user; one-segment prompts as one user message", () => {
    const turns = multiTurn({ rate: 10, seed: 3, requests: 40 }).requests;
    const third = turns.find((r) => r.prompt.kind === "segments" && r.prompt.segments.length === 4)!;
    expect(segmentMessages(third).map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    const unique = noSharedPrefix({ rate: 10, seed: 3, requests: 1 }).requests[0]!;
    expect(segmentMessages(unique).map((m) => m.role)).toEqual(["user"]);
  });

  it("reads back as the same request: arrival, output, and the segments' tokens plus the roles'", async () => {
    const r = multiTurn({ rate: 10, seed: 3, requests: 40 }).requests[7]!;
    const line = JSON.parse(openAILogLine(r, "m")) as Record<string, unknown>;
    const back = await traceRecordRequest(line);
    if (typeof back === "string") throw new Error(back);
    expect(back.format).toBe("openai");
    expect(back.request.arrivalMs).toBe(LOG_EPOCH_MS + Math.floor(r.arrivalMs));
    expect(back.request.outputTokens).toBe(r.outputTokens);
    // Each message adds its role and two newlines (a few tokens) to the segments' own tokens.
    const messages = (line.messages as unknown[]).length;
    expect(back.request.promptTokens).toBeGreaterThan(r.promptTokens);
    expect(back.request.promptTokens).toBeLessThanOrEqual(r.promptTokens + 3 * messages);
  });
});
