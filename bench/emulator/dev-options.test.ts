import { describe, expect, it } from "vitest";
import { DEV_GATEWAY_PORT, emulatorStartError, parseDevOptions, unreadVarsWarnings } from "./dev-options";

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

describe("npm run dev's word for an emulator port in use", () => {
  const inUse = Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:8101"), {
    code: "EADDRINUSE",
  });

  it("says where the emulators' ports are set, and how to move them", () => {
    // The emulators' ports are BACKENDS' urls; `--port` moves only the gateway's (found by a new user whose
    // second checkout's `npm run dev` stopped at "listen EADDRINUSE" and nothing else).
    expect(emulatorStartError("emu-1", "http://127.0.0.1:8101/", inUse, true)).toBe(
      "dev: cannot start emulator emu-1 on http://127.0.0.1:8101/: port 8101 is in use. The emulators' ports are " +
        "BACKENDS' urls: copy .dev.vars.example to .dev.vars and give its urls free ports (--port moves only the gateway's)",
    );
    expect(emulatorStartError("emu-1", "http://127.0.0.1:8101/", inUse, false)).toContain(
      "port 8101 is in use. The emulators' ports are BACKENDS' urls: give the urls in .dev.vars free ports",
    );
  });

  it("passes any other failure on as it is", () => {
    expect(emulatorStartError("emu-2", "http://127.0.0.1:8102/", new Error("boom"), true)).toBe(
      "dev: cannot start emulator emu-2 on http://127.0.0.1:8102/: Error: boom",
    );
  });
});

describe("npm run dev's word for a var the gateway does not read", () => {
  it("names each, with the likely name, since wrangler dev drops it unseen", () => {
    const known = ["BACKENDS", "SHADOW", "MAX_INFLIGHT_PER_BACKEND"];
    expect(
      unreadVarsWarnings(["BACKENDS", "SHADOWS", "MAX_INFLIGHT_PER_BACKENDS", "MY_OWN"], known, ".dev.vars"),
    ).toEqual([
      "dev: .dev.vars: SHADOWS is not a var the gateway reads (did you mean SHADOW?); wrangler dev drops it",
      "dev: .dev.vars: MAX_INFLIGHT_PER_BACKENDS is not a var the gateway reads (did you mean MAX_INFLIGHT_PER_BACKEND?); wrangler dev drops it",
      "dev: .dev.vars: MY_OWN is not a var the gateway reads; wrangler dev drops it",
    ]);
  });
});
