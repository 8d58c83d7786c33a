import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects: pure code (routing core, simulator, emulator) under plain Node,
// and the Worker + RouterDO inside workerd through @cloudflare/vitest-plugin.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["src/routing/**/*.test.ts", "bench/**/*.test.ts", "test/node/**/*.test.ts"],
        },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
        test: {
          name: "workers",
          include: ["test/worker/**/*.test.ts"],
        },
      },
    ],
  },
});
