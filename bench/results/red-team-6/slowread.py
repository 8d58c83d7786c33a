# A client that opens N fast 100 MB streams and reads nothing (or a trickle) for S seconds; prints the
# gateway's workerd RSS and what the backend managed to write.
import socket, sys, time, json
N, S, PID = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
def rss():
    for l in open(f"/proc/{PID}/status"):
        if l.startswith("VmRSS"): return l.split()[1] + " kB"
body = json.dumps({"model": "m-big", "stream": True, "messages": [{"role": "user", "content": "go"}]})
print("rss before", rss())
socks = []
for i in range(N):
    s = socket.create_connection(("127.0.0.1", 8967))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall((f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n" + body).encode())
    socks.append(s)
for t in range(int(S)):
    time.sleep(1)
    if t % 5 == 4: print(f"t={t+1}s rss", rss(), flush=True)
got = sum(len(s.recv(65536)) for s in socks)
print("read", got, "bytes from the first recv of each; rss", rss())
for s in socks: s.close()
time.sleep(3)
print("rss after close", rss())
