#!/usr/bin/env python3
"""Probes one `bdrp router` on loopback the way a broken client or an attacker would, and prints
what the router holds meanwhile: a client that floods PINGs and never reads, 2,000 connections
that never say HELLO, 200 sessions that each start a 1 MB frame and stop, a predicate that encodes
to 27,648 filters, the largest predicate within the limits, a client that changes its predicate as
fast as it can, 100 sessions that say HELLO and then nothing, and 100 connections to the metrics
port. Every probe also checks that a new client still gets its HELLO_OK; a canary publisher and
subscriber run beside them all and must get every message, and the router's event-loop lag
(p99 and the largest bucket) is printed at the end. Usage, from the repository root:

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


def hello(name):
    n = name.encode()
    return frame(0x01, bytes([1, len(n)]) + n + struct.pack(">H", 0))


def predicate(conjunctions):
    """Encodes a predicate: a list of conjunctions, each a list of (op, name, value-bytes or None)."""
    out = struct.pack(">H", len(conjunctions))
    for conj in conjunctions:
        out += bytes([len(conj)])
        for op, name, value in sorted(conj, key=lambda c: c[1]):
            n = name.encode()
            out += bytes([op, len(n)]) + n + (value or b"")
    return out


def integer(v):
    return bytes([2]) + struct.pack(">q", v)


EXISTS, EQ = 10, 1


def set_predicate(cid, conjunctions):
    return frame(0x03, struct.pack(">Q", cid) + predicate(conjunctions))


def message(attrs, body=b""):
    out = struct.pack(">H", len(attrs))
    for name, v in sorted(attrs.items()):
        n = name.encode()
        out += bytes([2, len(n)]) + n + struct.pack(">q", v)
    return out + struct.pack(">I", len(body)) + body


def read_frame(s):
    """(type, body) of the next frame, or None at the end of the stream."""
    head = b""
    while len(head) < 6:
        d = s.recv(6 - len(head))
        if not d:
            return None
        head += d
    length, _, ftype = struct.unpack(">IBB", head)
    body = b""
    while len(body) < length - 2:
        d = s.recv(length - 2 - len(body))
        if not d:
            return None
        body += d
    return ftype, body


def error_text(body):
    code, tlen = struct.unpack(">HH", body[8:12])
    return code, body[12 : 12 + tlen].decode()


def session(name):
    s = socket.create_connection(("127.0.0.1", CLIENTS), timeout=30)
    s.sendall(hello(name))
    f = read_frame(s)
    assert f and f[0] == 0x02, f
    return s


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


class Canary:
    """A subscriber and a publisher of 200 messages a second beside the probes: every one must
    arrive."""

    def __init__(self):
        self.sub = session("canary-sub")
        self.sub.sendall(set_predicate(1, [[(EXISTS, "canary", None)]]))
        f = read_frame(self.sub)
        assert f and f[0] == 0x04, f
        self.pub = session("canary-pub")
        self.sent = 0
        self.got = 0
        self.stop = threading.Event()
        threading.Thread(target=self._publish, daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _publish(self):
        while not self.stop.is_set():
            self.pub.sendall(frame(0x06, struct.pack(">Q", 0) + message({"canary": self.sent})))
            self.sent += 1
            time.sleep(0.005)

    def _receive(self):
        self.sub.settimeout(None)
        while True:
            f = read_frame(self.sub)
            if f is None:
                return
            if f[0] == 0x07:
                self.got += 1
            elif f[0] == 0x08:  # PING: answer, as every client must
                self.sub.sendall(frame(0x09, f[1]))

    def finish(self):
        self.stop.set()
        deadline = time.time() + 10
        while self.got < self.sent and time.time() < deadline:
            time.sleep(0.1)
        return self.sent, self.got


def lag_buckets():
    """The event-loop lag histogram now: {upper bound in s: cumulative count}."""
    out = {}
    for line in metrics("bdrp_event_loop_lag_seconds_bucket"):
        le = line.split('le="')[1].split('"')[0]
        out[float("inf") if le == "+Inf" else float(le)] = float(line.split()[-1])
    return out


def lag_summary(since=None):
    """p99 and the largest non-empty bucket of the event-loop lag, in ms, since a snapshot."""
    now = lag_buckets()
    since = since or {}
    buckets = sorted((le, c - since.get(le, 0)) for le, c in now.items())
    total = max((c for _, c in buckets), default=0)
    if not total:
        return "no samples"
    p99 = next(le for le, c in buckets if c >= 0.99 * total)
    worst = next(le for le, c in buckets if c >= total)
    return f"{int(total)} samples, p99 <= {p99 * 1000:g} ms, all <= {worst * 1000:g} ms"


def main():
    conf = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    conf.write(
        f"router: 0\nlisten:\n  clients: 127.0.0.1:{CLIENTS}\n"
        f"  routers: 127.0.0.1:{ROUTERS}\n  metrics: 127.0.0.1:{METRICS}\n"
        "limits:\n  keepAliveMs: 2000\n"
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
        canary = Canary()

        lag0 = lag_buckets()
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

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
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

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
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

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        # 4. A predicate of 1,024 conjunctions of three untyped exists: 27,648 filters.
        s = session("big")
        t0 = time.time()
        s.sendall(
            set_predicate(
                7,
                [[(EXISTS, f"a{i}", None), (EXISTS, f"b{i}", None), (EXISTS, f"c{i}", None)]
                 for i in range(1024)],
            )
        )
        f = read_frame(s)
        answer = error_text(f[1]) if f and f[0] == 0x05 else f
        s.sendall(PING)
        pong = read_frame(s)
        print(
            f"1,024 x 3 untyped exists (27,648 filters): answered in {time.time() - t0:.2f} s:"
            f" {answer}; the session goes on: {pong is not None and pong[0] == 0x09}",
            flush=True,
        )
        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        # 5. The largest predicate the limits let through: 1,024 conjunctions of four equalities.
        t0 = time.time()
        s.sendall(
            set_predicate(
                8, [[(EQ, f"k{i}_{j}", integer(i)) for j in range(4)] for i in range(1024)]
            )
        )
        f = read_frame(s)
        print(
            f"1,024 x 4 equalities (1,024 filters): {'OK' if f[0] == 0x04 else error_text(f[1])}"
            f" in {time.time() - t0:.2f} s",
            flush=True,
        )
        s.close()

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        # 6. A client that changes its predicate as fast as it can for 10 s.
        s = session("toggler")
        ok = refused = 0
        end = time.time() + 10
        i = 0
        while time.time() < end:
            s.sendall(set_predicate(100 + i, [[(EQ, "t", integer(i % 2))]]))
            f = read_frame(s)
            if f[0] == 0x04:
                ok += 1
            else:
                refused += 1
            i += 1
        s.close()
        print(f"predicate toggled for 10 s: {ok} set, {refused} refused (OVERLOADED)", flush=True)

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        # 7. 100 sessions that say HELLO and then nothing (keepAliveMs: 2000 here).
        mute = [session(f"mute{i}") for i in range(100)]
        time.sleep(6)
        closed = 0
        for m in mute:
            m.setblocking(False)
            try:
                while True:
                    d = m.recv(4096)
                    if not d:
                        closed += 1
                        break
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
            m.close()
        print(
            f"100 silent sessions after HELLO: {closed} closed within 6 s (keepAliveMs 2000);"
            f" new client served: {hello_ok()}",
            flush=True,
        )

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        # 8. 100 connections to the metrics port that send nothing.
        held = []
        for _ in range(100):
            try:
                held.append(socket.create_connection(("127.0.0.1", METRICS), timeout=3))
            except OSError:
                pass
        time.sleep(1)
        open_now = 0
        for h in held:
            h.setblocking(False)
            try:
                if h.recv(1) == b"":
                    continue
            except BlockingIOError:
                open_now += 1
            except OSError:
                continue
        time.sleep(11)
        for h in held:
            h.close()
        print(
            f"100 silent metrics connections: {open_now} held open after 1 s; scrape after 11 s"
            f" works: {bool(metrics('bdrp_clients'))}",
            flush=True,
        )

        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        sent, got = canary.finish()
        print(f"canary: {got} of {sent} messages delivered", flush=True)
        print(f"event-loop lag over the whole run: {lag_summary()}", flush=True)
        print("closed by the router, by reason:", flush=True)
        for line in metrics("bdrp_connections_closed_total"):
            print("  " + line, flush=True)
        print("requests refused, by reason:", flush=True)
        for line in metrics("bdrp_client_requests_refused_total"):
            print("  " + line, flush=True)
    finally:
        os.killpg(router.pid, 15)
        router.wait(30)
        os.unlink(conf.name)


if __name__ == "__main__":
    main()
