# The peer of `cargo xtask bench eval`: ipykernel driven by jupyter_client.
# Prints one JSON line: start times (ms) and per-cell round trips (ms).
import json
import statistics
import sys
import time

from jupyter_client.manager import KernelManager

starts, rounds = int(sys.argv[1]), int(sys.argv[2])
code = "x = 1; x + 1"
start_ms = []
for i in range(starts):
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    start_ms.append((time.perf_counter() - t0) * 1e3)
    if i < starts - 1:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

def run_cell():
    got = []
    reply = kc.execute_interactive(code, output_hook=lambda m: got.append(m), timeout=30)
    assert reply["content"]["status"] == "ok", reply
    assert any(m["msg_type"] == "execute_result" and m["content"]["data"]["text/plain"] == "2" for m in got), got

for _ in range(10):
    run_cell()
trip_ms = []
for _ in range(rounds):
    t0 = time.perf_counter()
    run_cell()
    trip_ms.append((time.perf_counter() - t0) * 1e3)
kc.stop_channels()
km.shutdown_kernel(now=True)
print(json.dumps({"start_ms": start_ms, "trip_ms": trip_ms}))
