"""A client reading 1 KB/s, steadily, for SECONDS (argv[1]): is it cut? Prints inflight every 10 s."""
import sys, time
sys.argv += ["150"]
from live_common import open_stream, status_of, inflight
SECONDS = float(sys.argv[1])
s = open_stream("sr-key-two-bbbbbbbb", 4096); print("steady reader", status_of(s), flush=True)
got, t1, mark = 0, time.time(), 0
while time.time() - t1 < SECONDS:
    chunk = s.recv(100)
    if not chunk:
        print("steady reader: stream ended after", round(time.time() - t1, 1), "s", flush=True); break
    got += len(chunk); time.sleep(0.1)
    if time.time() - t1 >= mark: print(f"t={time.time()-t1:5.1f}s bytes={got} inflight={inflight()}", flush=True); mark += 10
print(f"steady reader: {got} bytes in {time.time()-t1:.1f}s; inflight={inflight()}", flush=True)
s.close()
