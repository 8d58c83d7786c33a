import socket, json, time, urllib.request
body = json.dumps({"model": "m-long", "messages": [{"role": "user", "content": "hi"}], "stream": True, "max_tokens": 1000000}).encode()
socks = []
for i in range(4):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", 28300))
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rt11-client-key-three\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body)
    s.recv(200); socks.append(s)
def stats():
    req = urllib.request.Request("http://127.0.0.1:28300/admin/stats", headers={"Authorization": "Bearer rt11-admin-token-xyz123"})
    d = json.load(urllib.request.urlopen(req))["pools"]["m-long"]
    return [(b["id"], b["inflight"]) for b in d["backends"]], d.get("counters")
t0=time.time()
for k in range(8):
    print(round(time.time()-t0), stats(), flush=True); time.sleep(5)
for s in socks: s.close()
