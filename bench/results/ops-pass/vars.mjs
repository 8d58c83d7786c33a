// Writes a wrangler dev env file for the ops pass: node vars.mjs OUT [ports=8101,8102,8103,8104] [KEY=VALUE ...]
// A port may carry a weight and a different id/port pair: "8101", "8101:w3" (weight 3), "emu-1@8105" (id emu-1 at :8105).
// Two client keys: pgw-local-dev-key (unlimited) and pgw-flood-key (max_concurrent=4).
import { writeFileSync } from "node:fs";
const [out, ports = "8101,8102,8103,8104", ...extra] = process.argv.slice(2);
const backends = ports.split(",").map((spec) => {
  const [idPort, w] = spec.split(":");
  const [id, port] = idPort.includes("@") ? idPort.split("@") : [`emu-${Number(idPort) - 8100}`, idPort];
  return { id, url: `http://127.0.0.1:${port}`, models: ["llama-3.1-8b-instruct"], apiKey: "emu-key",
    weight: w ? Number(w.slice(1)) : 1, kvCacheTokens: 262144 };
});
const lines = [
  `BACKENDS='${JSON.stringify(backends)}'`,
  "GATEWAY_API_KEYS=pgw-local-dev-key, pgw-flood-key max_concurrent=4",
  "ADMIN_TOKEN=pgw-local-admin-token",
  ...extra,
];
writeFileSync(out, lines.join("\n") + "\n");
