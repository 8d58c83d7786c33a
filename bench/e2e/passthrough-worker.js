// The "passthrough" arm's Worker: the null gateway. It forwards each request
// to the backend the bench client chose (header x-e2e-backend, an index into
// BACKENDS; the client balances by least-outstanding like the direct arm) and
// streams the body back — no auth, parsing, prefix keys or RouterDO. Served by
// the same wrangler dev / workerd as the gateway, it measures what the local
// runtime itself adds, so the gateway's own cost is (gateway − passthrough).
// Plain JS: a bench fixture, bundled by nobody, type-checked by nobody.
let backends;

export default {
  async fetch(request, env) {
    backends ??= JSON.parse(env.BACKENDS);
    const i = Number(request.headers.get("x-e2e-backend"));
    const b = backends[i];
    if (b === undefined) return new Response("x-e2e-backend: no such backend", { status: 400 });
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    headers.delete("x-e2e-backend");
    if (b.apiKey !== undefined) headers.set("authorization", `Bearer ${b.apiKey}`);
    const upstream = await fetch(`${b.url}${url.pathname}`, {
      method: request.method,
      headers,
      body: request.body,
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  },
};
