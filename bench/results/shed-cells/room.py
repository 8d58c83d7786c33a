# How many shed requests found the other cell with room (fewer than 2 backends x 8 in flight), by the gateway's
# own log lines (requests-ARM-bound8.jsonl: the wrangler log's request lines): a served request is counted in
# flight in its backend's cell from its arrival to arrivedAt + durationMs (its stream's end). An estimate: a
# lease ends a little after its stream (its end is carried on a later route call, REPORT_CARRY_MS).
#   python3 bench/results/shed-cells/room.py
import json, os
here = os.path.dirname(os.path.abspath(__file__))
CELL = {"emu-1": 0, "emu-3": 0, "emu-2": 1, "emu-4": 1}  # assignCells(4 backends, K = 2): src/routing/cells.ts
for arm in ["main", "branch"]:
    reqs = [json.loads(l) for l in open(os.path.join(here, f"requests-{arm}-bound8.jsonl"))]
    served = [r for r in reqs if r["status"] == 200]
    shed = [r for r in reqs if r.get("shed")]
    room = 0
    for s in shed:
        t = s["arrivedAt"]
        inflight = [0, 0]
        for r in served:
            if r["arrivedAt"] <= t < r["arrivedAt"] + r["durationMs"]:
                inflight[CELL[r["backend"]]] += 1
        room += min(inflight) < 16
    print(f"{arm}: served {len(served)}, shed {len(shed)}, shed while a cell had room: {room}")
