import { describe, expect, it } from "vitest";
import { DEV_GATEWAY_PORT, parseDevOptions } from "./dev-options";

describe("npm run dev's flags", () => {
  it("serves the gateway on 8787 unless --port says otherwise", () => {
    expect(parseDevOptions([])).toEqual({ speed: 1, port: DEV_GATEWAY_PORT, noWrangler: false });
    // wrangler's message for a port in use: "specify a different port with --port".
    expect(parseDevOptions(["--port", "8790"])).toEqual({ speed: 1, port: 8790, noWrangler: false });
    expect(parseDevOptions(["--port=8791", "--speed", "2", "--no-wrangler"])).toEqual({
      speed: 2,
      port: 8791,
      noWrangler: true,
    });
  });

  it("refuses a port that is not one, and an unknown flag, saying which flags there are", () => {
    for (const bad of ["0", "65536", "87a", "-1", ""])
      expect(String(parseDevOptions([`--port=${bad}`]))).toContain("--port must be a TCP port (1..65535)");
    expect(String(parseDevOptions(["--speed", "0"]))).toContain("--speed must be a number > 0");
    expect(String(parseDevOptions(["--host", "0.0.0.0"]))).toContain(
      "(flags: --port P, --speed X, --no-wrangler)",
    );
  });
});
