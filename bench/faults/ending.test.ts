import { describe, expect, it } from "vitest";
import { endingOf } from "./ending";

describe("endingOf", () => {
  it("a 200 stream through [DONE] is done", () => {
    expect(endingOf({ outcome: "ok", status: 200 })).toBe("done");
  });
  it("a 200 stream that carried an SSE error event ended honestly", () => {
    expect(endingOf({ outcome: "error", status: 200 })).toBe("error_event");
  });
  it("a non-200 answer is an HTTP error", () => {
    expect(endingOf({ outcome: "error", status: 429 })).toBe("http_error");
    expect(endingOf({ outcome: "error", status: 503 })).toBe("http_error");
  });
  it("no answer, or a stream cut without [DONE] or an error event, is broken", () => {
    expect(endingOf({ outcome: "lost", status: 0 })).toBe("broken");
    expect(endingOf({ outcome: "lost", status: 200 })).toBe("broken");
  });
});
