/**
 * One 15 MiB message made of a single letter (under the 16 MiB body cap),
 * with 20 ordinary streams running: how much isolate CPU it costs and how
 * long the others wait behind it.
 *
 * The backends answer it with a 400 at once, as vLLM does for a prompt past
 * max_model_len (an emulator fault matching a run of the letter): the
 * emulators share this machine and tokenize prompts themselves, and their
 * tokenizer must not stand in the gateway's figure.
 */

import { round } from "../measure";
import { MODEL } from "../rig";
import type { Scenario } from "../scenario";

const LETTERS = 15 * 1024 * 1024;

export const hugeMessage: Scenario = {
  id: "huge-message",
  fault: "one 15 MiB message made of a single letter",
  asFiled: "~10 s of isolate CPU; others waited up to 8.7 s",
  async run(ctx) {
    const { rig } = ctx;
    for (const e of rig.emulators)
      e.setFault({
        kind: "status",
        status: 400,
        match: "a".repeat(256),
        message: "This model's maximum context length is 131072 tokens.",
      });
    const body = JSON.stringify({
      model: MODEL,
      stream: true,
      max_tokens: 16,
      messages: [{ role: "user", content: "a".repeat(LETTERS) }],
    });
    ctx.mark("fault");
    const cpu0 = rig.cpuMs();
    const r = await ctx.send({ body, id: "huge-message-1", timeoutMs: 300_000 });
    const cpuMs = rig.cpuMs() - cpu0;
    // Let the requests queued behind it show their TTFT.
    await ctx.sleep(2000);
    const reached = rig.emulators.reduce((n, e) => n + e.state().stats.faulted.status, 0);
    for (const e of rig.emulators) e.setFault(null);
    ctx.mark("clear");
    const seconds = round((r.endMs - r.startMs) / 1000, 2);
    return {
      now: `answered ${r.status} after ${seconds} s, ${round(cpuMs / 1000, 2)} s of workerd CPU; ${reached === 0 ? "not sent to a backend" : "forwarded to a backend"} (others: see TTFT during)`,
      figures: {
        bodyBytes: body.length,
        status: r.status,
        secondsToAnswer: seconds,
        workerdCpuMsWhileItRan: cpuMs,
        forwardedToBackends: reached,
      },
    };
  },
};
