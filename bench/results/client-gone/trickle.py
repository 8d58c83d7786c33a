import socket, time, json
body = json.dumps({"model":"llama","max_tokens":4,"messages":[{"role":"user","content":"x"*400}]}).encode()
s = socket.create_connection(("127.0.0.1", 8797))
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer live-key-one\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
t0 = time.time(); s.settimeout(0.01); got = b""; i = 0
while time.time() - t0 < 20:
    if i < len(body):
        try: s.sendall(body[i:i+1]); i += 1
        except Exception as e: print("send failed", e); break
    try:
        d = s.recv(65536)
        if not d: break
        got += d
        if b"\r\n\r\n" in got and b"}" in got: break
    except socket.timeout: pass
    time.sleep(0.2)
print("answer after %.2f s, %d of %d body bytes sent:" % (time.time()-t0, i, len(body)))
print(got.decode(errors="replace").split("\r\n")[0]); print(got.decode(errors="replace").split("\r\n\r\n",1)[-1][:300])
