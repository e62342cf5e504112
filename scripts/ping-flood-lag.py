#!/usr/bin/env python3
"""The event-loop lag of one `bdrp router` while two clients flood it with PINGs: first clients
that never read their socket, then clients that read every PONG. Prints, for each, the megabytes
of PINGs the flooders wrote and the p99 and the largest bucket of `bdrp_event_loop_lag_seconds`
over the flood. Uses the frames and helpers of scripts/probe-limits.py (the same ports on
127.0.0.1). Usage, from the repository root:

    python3 scripts/ping-flood-lag.py [SECONDS]

It starts the router itself (./bdrp router) and stops it at the end.
"""
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location(
    "probe_limits", os.path.join(ROOT, "scripts", "probe-limits.py"))
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)

SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
FLOODERS = 2


def flood(reading, stop, sent, got):
    s = socket.create_connection(("127.0.0.1", probe.CLIENTS))
    if not reading:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(probe.HELLO)
    if reading:
        def drain():
            try:
                while True:
                    b = s.recv(1 << 16)
                    if not b:
                        return
                    got[0] += len(b)
            except OSError:
                pass
        threading.Thread(target=drain, daemon=True).start()
    burst = probe.PING * 4096
    try:
        while not stop.is_set():
            s.sendall(burst)
            sent[0] += len(burst)
    except OSError:
        pass  # a flooder that never reads is cut as a slow consumer
    s.close()


def main():
    conf = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    conf.write(
        f"router: 0\nlisten:\n  clients: 127.0.0.1:{probe.CLIENTS}\n"
        f"  routers: 127.0.0.1:{probe.ROUTERS}\n  metrics: 127.0.0.1:{probe.METRICS}\n")
    conf.close()
    log = open(os.path.join(tempfile.gettempdir(), "ping-flood-lag-router.log"), "w")
    router = subprocess.Popen(
        [os.path.join(ROOT, "bdrp"), "router", "--config", conf.name],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(600):
            if probe.hello_ok():
                break
            if router.poll() is not None:
                sys.exit(f"the router exited; see {log.name}")
            time.sleep(1)
        time.sleep(3)
        for reading in (False, True):
            lag0 = probe.lag_buckets()
            stop, sent, got = threading.Event(), [0], [0]
            threads = [threading.Thread(target=flood, args=(reading, stop, sent, got), daemon=True)
                       for _ in range(FLOODERS)]
            for t in threads:
                t.start()
            time.sleep(SECONDS)
            stop.set()
            time.sleep(2)
            who = "reading every PONG" if reading else "never reading"
            print(f"{FLOODERS} flooders {who}, {SECONDS} s: wrote {sent[0] >> 20} MB of PINGs,"
                  f" read {got[0] >> 20} MB; lag {probe.lag_summary(lag0)}", flush=True)
    finally:
        os.killpg(router.pid, 15)
        router.wait()
        os.unlink(conf.name)


if __name__ == "__main__":
    main()
