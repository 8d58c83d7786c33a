import { describe, expect, it } from "vitest";
import { workerdConfig } from "./workerd-runtime";

describe("workerdConfig", () => {
  const shape = {
    scriptPath: "index.js",
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["nodejs_compat"],
    text: { BACKENDS: '[{"id":"emu-1","url":"http://127.0.0.1:8101"}]', ROUTING_POLICY: "prefix_aware" },
    durableObjects: { ROUTER: "RouterDO" },
    sqliteClasses: new Set(["RouterDO"]),
    workerName: "prefix-gateway",
  };

  it("binds text values escaped, the DO namespace with SQLite on local disk, and one socket", () => {
    const capnp = workerdConfig(shape, 8787, "/tmp/state/do");
    // JSON inside a capnp string literal: the quotes are escaped, not cut short.
    expect(capnp).toContain(
      String.raw`(name = "BACKENDS", text = "[{\"id\":\"emu-1\",\"url\":\"http://127.0.0.1:8101\"}]")`,
    );
    expect(capnp).toContain('(name = "ROUTER", durableObjectNamespace = "RouterDO")');
    expect(capnp).toContain(
      '(className = "RouterDO", uniqueKey = "prefix-gateway-RouterDO", enableSql = true)',
    );
    expect(capnp).toContain('durableObjectStorage = (localDisk = "do-disk")');
    expect(capnp).toContain('(name = "do-disk", disk = (path = "/tmp/state/do", writable = true))');
    expect(capnp).toContain('address = "127.0.0.1:8787"');
    expect(capnp).toContain('compatibilityFlags = ["nodejs_compat"]');
  });

  it("declares no storage for a Worker without Durable Objects", () => {
    const capnp = workerdConfig({ ...shape, durableObjects: {}, sqliteClasses: new Set() }, 1, "/d");
    expect(capnp).toContain("durableObjectNamespaces = []");
    expect(capnp).toContain("durableObjectStorage = (none = void)");
  });
});
