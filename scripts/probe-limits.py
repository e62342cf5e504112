#!/usr/bin/env python3
"""Probes one `bdrp router` on loopback the way a broken client or an attacker would, and prints
what the router holds meanwhile: a client that floods PINGs and never reads, 2,000 connections
that never say HELLO, and 200 sessions that each start a 1 MB frame and stop. Every probe also
checks that a new client still gets its HELLO_OK. Usage, from the repository root:

    python3 scripts/probe-limits.py

It starts the router itself (./bdrp router, ports 17400/17500/19400 on 127.0.0.1) and stops it
at the end.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENTS, ROUTERS, METRICS = 17400, 17500, 19400


def frame(frame_type, body):
    return struct.pack(">IBB", 2 + len(body), 1, frame_type) + body


HELLO = frame(0x01, bytes([1, 5]) + b"probe" + struct.pack(">H", 0))
PING = frame(0x08, struct.pack(">Q", 7))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return -1


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().split(")")[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(prefix):
    url = f"http://127.0.0.1:{METRICS}/metrics"
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return [l for l in text.splitlines() if l.startswith(prefix) and not l.endswith(" 0")]


def hello_ok():
    try:
        with socket.create_connection(("127.0.0.1", CLIENTS), timeout=3) as s:
            s.sendall(HELLO)
            d = s.recv(64)
            return len(d) > 5 and d[5] == 0x02
    except OSError:
        return False


def main():
    conf = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    conf.write(
        f"router: 0\nlisten:\n  clients: 127.0.0.1:{CLIENTS}\n"
        f"  routers: 127.0.0.1:{ROUTERS}\n  metrics: 127.0.0.1:{METRICS}\n"
    )
    conf.close()
    log = open(os.path.join(tempfile.gettempdir(), "probe-limits-router.log"), "w")
    router = subprocess.Popen(
        [os.path.join(ROOT, "bdrp"), "router", "--config", conf.name],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for _ in range(600):
            if hello_ok():
                break
            if router.poll() is not None:
                sys.exit(f"the router exited; see {log.name}")
            time.sleep(1)
        pid = int(subprocess.check_output(["pgrep", "-f", conf.name]).split()[-1])
        print(f"router up: rss {rss_mb(pid)} MB", flush=True)

        # 1. A client that floods PINGs and never reads its socket, for 33 s.
        stop = threading.Event()
        sent = [0]

        def flood():
            s = socket.create_connection(("127.0.0.1", CLIENTS))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(HELLO)
            burst = PING * 4096
            try:
                while not stop.is_set():
                    s.sendall(burst)
                    sent[0] += len(burst)
            except OSError as e:
                print(f"  flooder: {e}", flush=True)

        threading.Thread(target=flood, daemon=True).start()
        cpu0, peak, served = cpu_seconds(pid), 0, True
        for i in range(33):
            time.sleep(1)
            peak = max(peak, rss_mb(pid))
            if i % 3 == 0:
                served &= hello_ok()
        stop.set()
        print(
            f"PING flood, never read, 33 s: peak rss {peak} MB, router cpu"
            f" {cpu_seconds(pid) - cpu0:.1f} s, flooder wrote {sent[0] >> 20} MB,"
            f" new clients served throughout: {served}",
            flush=True,
        )
        time.sleep(5)
        cpu1 = cpu_seconds(pid)
        time.sleep(10)
        print(
            f"  10 s later: rss {rss_mb(pid)} MB, cpu {(cpu_seconds(pid) - cpu1) / 10:.3f} cores,"
            f" new client served: {hello_ok()}",
            flush=True,
        )

        # 2. 2,000 connections that never say HELLO.
        idle = []
        for _ in range(2000):
            idle.append(socket.create_connection(("127.0.0.1", CLIENTS), timeout=3))
        time.sleep(7)
        closed = 0
        for s in idle:
            s.setblocking(False)
            try:
                while s.recv(4096):
                    pass
                closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
            s.close()
        print(
            f"2,000 connections without HELLO: {closed} closed by the router within 7 s;"
            f" rss {rss_mb(pid)} MB; new client served: {hello_ok()}",
            flush=True,
        )

        # 3. 200 sessions that each start a 1 MB frame and stop.
        partial = []
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", CLIENTS))
            s.sendall(HELLO)
            s.recv(64)
            s.sendall(struct.pack(">IBB", (1 << 20) - 8, 1, 0x05) + bytes(500_000))
            partial.append(s)
        time.sleep(3)
        held = metrics("bdrp_inbound")
        print(
            f"200 partial 1 MB frames: rss {rss_mb(pid)} MB; new client served: {hello_ok()}",
            flush=True,
        )
        for line in held:
            print("  " + line, flush=True)
        for s in partial:
            s.close()
        time.sleep(2)
        print("closed by the router, by reason:", flush=True)
        for line in metrics("bdrp_connections_closed_total"):
            print("  " + line, flush=True)
    finally:
        os.killpg(router.pid, 15)
        router.wait(30)
        os.unlink(conf.name)


if __name__ == "__main__":
    main()
