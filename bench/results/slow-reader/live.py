"""Live check of CLIENT_STALL_TIMEOUT_MS (branch slow-reader): npm run dev -- --port 28600 --speed 5 with the
.dev.vars in dev-vars.txt. Phase 1: key one opens 4 streams (2 backends x MAX_INFLIGHT_PER_BACKEND 2) on sockets
with a 4 KiB receive buffer and reads nothing; key two asks every 2 s. Phase 2: one stream read at 1 KB/s for 40 s."""
import json, socket, sys, time, urllib.request

from live_common import BODY, PORT, inflight, open_stream, status_of

t0 = time.time()
held = []
for i in range(4):
    s = open_stream("sr-key-one-aaaaaaaa", 4096); print("unread", i, status_of(s), flush=True); held.append(s)
freed = None
while time.time() - t0 < 90:
    other = open_stream("sr-key-two-bbbbbbbb"); st = status_of(other); other.close()
    print(f"t={time.time()-t0:5.1f}s inflight={inflight()} other key: {st}", flush=True)
    if st == "200" and freed is None: freed = time.time() - t0
    if freed is not None and time.time() - t0 > freed + 4: break
    time.sleep(2)
print("other key first served at", None if freed is None else round(freed, 1), "s", flush=True)
for s in held: s.close()
time.sleep(3)

# Phase 2: a slow but steady reader (1 KB/s) is not cut.
s = open_stream("sr-key-two-bbbbbbbb", 4096); print("slow reader", status_of(s), flush=True)
got, t1, last = 0, time.time(), b""
while time.time() - t1 < 40:
    chunk = s.recv(100)
    if not chunk: print("slow reader: stream ended after", round(time.time()-t1, 1), "s", flush=True); break
    got += len(chunk); last = chunk; time.sleep(0.1)
print(f"slow reader: {got} bytes in {time.time()-t1:.1f}s, still open: {bool(last)}; inflight={inflight()}", flush=True)
print("tail:", last[-80:], flush=True)
s.close()
