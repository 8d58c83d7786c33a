// Bounded reproduction: one in-process emulator (as the fuzz rig ran them) on 127.0.0.1:PORT, a steady
// stream from a client in the same process, and one chat of 3.5 M spaces: how late do this process's
// timers run, and how long does the giant take to answer?
import { monitorEventLoopDelay } from "node:perf_hooks";
const [root, port] = [process.argv[2]!, Number(process.argv[3])];
const { startEmulator } = await import(`${root}/bench/emulator/server.ts`);
const emu = await startEmulator({ port, host: "127.0.0.1", model: "m", speed: 20 });
const post = (content: string, max: number) =>
  fetch(`${emu.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", max_tokens: max, messages: [{ role: "user", content }] }) });
await (await post("warm", 2)).text();
const lag = monitorEventLoopDelay({ resolution: 10 }); lag.enable();
const cpu0 = process.cpuUsage(); const t0 = performance.now();
const giant = post(" ".repeat(3_500_000), 4).then(async (r) => ({ status: r.status, body: (await r.text()).slice(0, 160), ms: Math.round(performance.now() - t0) }));
const small = post("a small request sent just after", 4).then(async (r) => ({ status: r.status, ms: Math.round(performance.now() - t0) }));
const [g, s] = await Promise.all([giant, small]);
lag.disable(); const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ root, giant: g, small: s, maxLagMs: Math.round(lag.max / 1e6), cpuMs: Math.round((cpu.user + cpu.system) / 1000) }));
await emu.close();
