// The env file of the edge-pass-2 gateway: the 4 dev emulators (llama-3.1-8b-instruct), and per fault mode of
// fault-backend.mjs a pool of its own (solo-<mode>: that backend alone) and a pool with a good backend beside it
// (m-<mode>, m2-<mode>: the fault and /ok). Prints it on stdout.
const emu = [1, 2, 3, 4].map((i) => ({ id: `emu-${i}`, url: `http://127.0.0.1:810${i}`, models: ["llama-3.1-8b-instruct"], apiKey: "emu-key", weight: 1, kvCacheTokens: 262144 }));
const fb = (id, mode, model) => ({ id, url: `http://127.0.0.1:8201/${mode}`, models: [model], apiKey: "fault-backend-key", kvCacheTokens: 65536 });
const b = [...emu];
for (const m of ["e400", "e404", "e413", "e422", "e500", "e503ra", "e504", "empty200", "err200", "noheaders", "stall"])
  b.push(fb(`fb-${m}`, m, `m-${m}`), fb(`ok-${m}`, "ok", `m-${m}`));
for (const m of ["e400", "e404", "e413", "e422", "e500", "e503ra", "e504", "empty200", "err200", "noheaders", "stall", "hdronly", "sseerr"])
  b.push(fb(`solo-${m}`, m, `solo-${m}`));
for (const m of ["hdronly", "sseerr", "empty200"]) b.push(fb(`fb2-${m}`, m, `m2-${m}`), fb(`ok2-${m}`, "ok", `m2-${m}`));
console.log(`BACKENDS='${JSON.stringify(b)}'\nGATEWAY_API_KEYS=pgw-local-dev-key\nADMIN_TOKEN=pgw-local-admin-token`);
