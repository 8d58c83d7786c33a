import { describe, expect, it } from "vitest";
import { parseGatewayLog } from "./gateway-log";

describe("parseGatewayLog", () => {
  it("keeps request lines by id, skipping other output and cut lines", () => {
    const text = [
      "workerd/server/server.c++:1234: info: something",
      '{"msg":"request","requestId":"soak-1-2","status":200,"backend":"emu-3","retriedFrom":"emu-1"}',
      '{"msg":"request","requestId":"soak-1-3","sta',
      'prefix {"msg":"request","requestId":"soak-1-4","status":429,"retryRefused":true}',
      "",
    ].join("\n");
    const m = parseGatewayLog(text);
    expect([...m.keys()]).toEqual(["soak-1-2", "soak-1-4"]);
    expect(m.get("soak-1-2")?.retriedFrom).toBe("emu-1");
    expect(m.get("soak-1-4")?.retryRefused).toBe(true);
  });
});
