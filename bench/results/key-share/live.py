"""Key A floods, key B asks steadily (branch key-share). Against `npm run dev -- --port 28300` with dev-vars.txt
(2 emulators, MAX_INFLIGHT_PER_BACKEND=4: 8 slots; KEY_RATE_LIMIT off, so the flood meets only the bound). A: WORKERS threads, each sending a streamed request as soon as
its last ended, and 50 ms after a 429 (it ignores retry-after, as a flood does). B: one request every B_EVERY s,
alone (it waits for its last one). Prints B's success rate and TTFT (send to first content event), A's counts.

    python3 live.py SECONDS LABEL [WORKERS] [B_EVERY]
"""
import http.client, json, statistics, sys, threading, time

PORT = 28300
KEY_A, KEY_B = "ks-key-flood-aaaaaaaa", "ks-key-light-bbbbbbbb"
SECONDS = float(sys.argv[1]); LABEL = sys.argv[2]
WORKERS = int(sys.argv[3]) if len(sys.argv) > 3 else 16
B_EVERY = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0

def body(tag):
    return json.dumps({"model": "m-share", "stream": True, "max_tokens": 64,
                       "messages": [{"role": "user", "content": f"{tag} tell me about the sea"}]})

def ask(key, tag):
    """(status, ttft s or None, total s, reason of a 429 or None)."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    c.request("POST", "/v1/chat/completions", body(tag),
              {"Authorization": f"Bearer {key}", "content-type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        text = r.read().decode()
        c.close()
        why = "key_share" if "fair share" in text else ("capacity" if "at capacity" in text else text[:80])
        return r.status, None, time.monotonic() - t0, why
    ttft = None
    while True:
        line = r.readline()
        if not line: break
        if ttft is None and line.startswith(b"data: {") and b'"content"' in line: ttft = time.monotonic() - t0
    c.close()
    return 200, ttft, time.monotonic() - t0, None

stop = time.monotonic() + SECONDS
a_counts = {"200": 0, "other": 0}
a_busy = [0.0]  # seconds of A's served requests, summed: its mean slots held = a_busy / SECONDS
lock = threading.Lock()

def flood(i):
    n = 0
    while time.monotonic() < stop:
        n += 1
        try: s, _, total, why = ask(KEY_A, f"a{i}-{n}")
        except Exception: s, total, why = -1, 0.0, "error"
        with lock:
            if s == 200:
                a_counts["200"] += 1
                a_busy[0] += total
            elif s == 429: a_counts[f"429 {why}"] = a_counts.get(f"429 {why}", 0) + 1
            else: a_counts["other"] += 1
        if s != 200: time.sleep(0.05)

threads = [threading.Thread(target=flood, args=(i,)) for i in range(WORKERS)]
for t in threads: t.start()
time.sleep(2)  # the flood fills the slots first
b = []
n = 0
while time.monotonic() < stop:
    start = time.monotonic(); n += 1
    b.append(ask(KEY_B, f"b-{n}"))
    time.sleep(max(0.0, B_EVERY - (time.monotonic() - start)))
for t in threads: t.join()
ok = [x for x in b if x[0] == 200]
ttfts = sorted(x[1] for x in ok if x[1] is not None)
reasons = {}
for x in b:
    if x[0] != 200: reasons[x[3]] = reasons.get(x[3], 0) + 1
print(f"{LABEL}: B asked {len(b)}, served {len(ok)} ({100 * len(ok) / max(1, len(b)):.0f}%), refused {reasons}; "
      f"B TTFT p50 {statistics.median(ttfts) * 1000:.0f} ms" if ttfts else f"{LABEL}: B asked {len(b)}, served 0, refused {reasons}",
      end="")
print(f"; A ({WORKERS} threads) {a_counts}, mean slots held {a_busy[0] / SECONDS:.1f}")
