# Two bodies trickled on the max_concurrent=2 key, then a normal request on that key: on main a 429 (both
# slots held by uploads), after the fix a 200.
import socket, time, json, urllib.request, threading
body = json.dumps({"model": "llama", "max_tokens": 3, "messages": [{"role": "user", "content": "x" * 200}]}).encode()
socks = []
for i in range(2):
    s = socket.create_connection(("127.0.0.1", 8967))
    s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k2\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:10])
    socks.append(s)
time.sleep(1.5)
req = urllib.request.Request("http://127.0.0.1:8967/v1/chat/completions", data=json.dumps({"model": "llama", "max_tokens": 3, "messages": [{"role": "user", "content": "hello"}]}).encode(), headers={"Authorization": "Bearer k2", "content-type": "application/json"})
try:
    r = urllib.request.urlopen(req, timeout=10); print("third request while two bodies trickle:", r.status)
except urllib.error.HTTPError as e:
    print("third request while two bodies trickle:", e.code, e.read()[:160])
for s in socks:
    s.sendall(body[10:]); print("trickled one finished:", s.recv(200).split(b"\r\n")[0])
    s.close()
