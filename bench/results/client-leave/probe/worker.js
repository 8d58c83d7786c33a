// Reports to rec.mjs when request.signal fires and when its backend fetch settles.
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const t0 = Date.now();
    if (url.searchParams.get("hold") === "1") ctx.waitUntil(new Promise((r) => setTimeout(r, 8000)));
    request.signal.addEventListener("abort", () => {
      ctx.waitUntil(fetch(`${env.REC}/event?what=signal&ms=${Date.now() - t0}`).catch(() => {}));
    });
    try {
      const res = await fetch(`${env.REC}/slow?mode=${url.searchParams.get("mode") ?? "headers"}`, {
        signal: request.signal,
      });
      await fetch(`${env.REC}/event?what=fetch-resolved&ms=${Date.now() - t0}`);
      return new Response(res.body, { headers: { "content-type": "text/event-stream" } });
    } catch (e) {
      await fetch(`${env.REC}/event?what=fetch-rejected&ms=${Date.now() - t0}`);
      throw e;
    }
  },
};
