"""What live.py and steady.py share (branch slow-reader): the dev stack's port, the long stream's body, a raw socket
that opens a stream (optionally with a small receive buffer), its status, and the pool's in-flight counts."""
import json, socket, sys, time, urllib.request

PORT = 28600
BODY = json.dumps({"model": "m-long", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                   "max_tokens": 120000}).encode()

def open_stream(key, rcvbuf=None):
    s = socket.socket()
    if rcvbuf: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", PORT))
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % (key.encode(), len(BODY)) + BODY)
    return s

def status_of(s):
    head = s.recv(200).decode("latin1")
    return head.split(" ")[1] if " " in head else "?"

def inflight():
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/admin/stats",
                                 headers={"Authorization": "Bearer sr-admin-token-xyz123"})
    d = json.load(urllib.request.urlopen(req))["pools"]["m-long"]
    return [b["inflight"] for b in d["backends"]]

