#!/usr/bin/env python3
"""Probes one `bdrp router` on loopback the way a broken client or an attacker would, and prints
what the router holds meanwhile: a client that floods PINGs and never reads, 2,000 connections
that never say HELLO, 200 sessions that each start a 1 MB frame and stop, a predicate that encodes
to 27,648 filters, the largest predicate within the limits, a client that changes its predicate as
fast as it can, 100 sessions that say HELLO and then nothing, and 100 connections to the metrics
port. Then it is one neighbour, router 1, holding the router token (the router's config names
it): it claims routes for the router itself one millisecond into its next incarnation, for
made-up routers (one a week ahead of the clock) and asks for seqno 2^31-1; it sends DATA naming
the router, or a router without a route, as its source; it advertises 65,535 of the smallest
filters for each of 31 unused router numbers, a 1 MB advertisement that would be held as 16 MB,
and the match-all filter; it asks for the router's whole route table (TABLE_REQUEST) as fast as
it can; and it comes back as a neighbour that keeps the link up and never reads while it makes
the router owe it advertisements. Each probe prints what the router counted meanwhile (drops,
refusals, closed connections). Every probe also checks that a new client still gets its
HELLO_OK; a canary publisher and subscriber run beside them all and must
get every message, and the router's event-loop lag (p99 and the largest bucket) is printed
after each probe and for the whole run. Usage, from the repository root:

    python3 scripts/probe-limits.py

It starts the router itself (./bdrp router, ports 17400/17500/19400 on 127.0.0.1) and stops it
at the end.
"""
import hashlib
import hmac
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



# --- One neighbour: router 1 on a router-link session (docs/wire-protocol.md, "Router links") ---

TOKEN = b"probe-token"
ROUTER_HELLO, DV_HELLO, ROUTE_UPDATE, SEQNO_REQUEST = 0x20, 0x21, 0x22, 0x23
TABLE_REQUEST = 0x2F
PREDICATE_AD, PREDICATE_REQUEST, DATA, BYE = 0x24, 0x25, 0x26, 0x0A
ME = 1  # the router number the probe claims; the probe router is 0


def now_ms():
    return int(time.time() * 1000)


def varint(v):
    out = b""
    while True:
        b, v = v & 0x7F, v >> 7
        if not v:
            return out + bytes([b])
        out += bytes([b | 0x80])


def encode_filter(positions, bits):
    """One filter (ascending set positions) in its canonical, shorter form (EncodedPredicateCodec)."""
    n = len(positions)
    if n == 0:
        return varint(0)
    r = (bits // n).bit_length() - 1
    code, prev = [], -1
    for p in positions:
        g = p - prev - 1
        prev = p
        code.append("1" * (g >> r) + "0" + (format(g & ((1 << r) - 1), f"0{r}b") if r else ""))
    code = "".join(code)
    code += "0" * (-len(code) % 8)
    as_list = varint(2 * n) + int(code, 2).to_bytes(len(code) // 8, "big")
    words = (bits + 63) // 64
    if len(as_list) <= 1 + 8 * words:
        return as_list
    w = [0] * words
    for p in positions:
        w[p >> 6] |= 1 << (p & 63)
    return varint(1) + b"".join(struct.pack(">Q", x) for x in w)


def encoded_predicate(filters, bloom):
    """An encoded predicate of distinct filters (lists of positions), sorted as the codec wants:
    words compared unsigned from word 0."""
    bits, k, categories = bloom

    def key(f):  # the words up to the last non-zero one: a shorter tuple sorts first, as it should
        words = [0] * ((f[-1] >> 6) + 1 if f else 0)
        for p in f:
            words[p >> 6] |= 1 << (p & 63)
        return tuple(words)

    out = [struct.pack(">HBBH", bits, k, categories, len(filters))]
    out += [encode_filter(f, bits) for f in sorted(filters, key=key)]
    return b"".join(out)


# The golden vector of docs/wire-protocol.md: M 64, k 1, sharp, one filter of bits 0 and 4.
assert encoded_predicate([[0, 4]], (64, 1, 1)) == bytes.fromhex("004001010001040030")


def smallest_filters(count, bits):
    """`count` distinct filters of the fewest set bits short of none (the empty filter matches
    everything): every one-bit filter, then two-bit ones: 3 and 5 bytes each on the wire."""
    out = [[p] for p in range(min(count, bits))]
    a = 0
    while len(out) < count:
        for b in range(a + 1, bits):
            out.append([a, b])
            if len(out) == count:
                break
        a += 1
    return out


def predicate_ad(origin, epoch, seq, encoded):
    return frame(PREDICATE_AD, struct.pack(">HHqq", ME, origin, epoch, seq) + encoded)


def data_frame(source, dest, msg, mid, hop=16, broadcast=False):
    """A DATA frame (DataHeader): hop limit, flags, source, message id, D, message."""
    words = []
    if not broadcast:
        words = [0] * (max(dest) // 64 + 1)
        for d in dest:
            words[d // 64] |= 1 << (d % 64)
    body = bytes([hop, 1 if broadcast else 0]) + struct.pack(">HQH", source, mid, len(words))
    return frame(DATA, body + b"".join(struct.pack(">Q", w) for w in words) + msg)


def route_update(routes, sender=None):
    """ROUTE_UPDATE from the probe: routes as (destination, epoch, seqno, metric[, flags])."""
    body = struct.pack(">HH", ME if sender is None else sender, len(routes))
    for dest, epoch, seqno, metric, *flags in routes:
        body += struct.pack(">HqiHB", dest, epoch, seqno, metric, flags[0] if flags else 0)
    return frame(ROUTE_UPDATE, body)


M64 = (1 << 64) - 1


def siphash(key, data):
    """SipHash-2-4 of data under a 16-byte key, as the router tags UDP datagrams."""

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & M64

    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261,
         k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & M64; v[1] = rotl(v[1], 13) ^ v[0]; v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & M64; v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & M64; v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & M64; v[1] = rotl(v[1], 17) ^ v[2]; v[2] = rotl(v[2], 32)

    n = len(data) // 8 * 8
    for i in range(0, n, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[n:], "little")
    v[3] ^= last
    rounds(2)
    v[0] ^= last
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def udp_key(sender, receiver, sender_nonce, receiver_nonce, token=None):
    """The key of datagrams from sender to receiver on a session (DatagramAuth.key)."""
    mac = hmac.new(b"bdrp-udp" + (TOKEN if token is None else token), digestmod=hashlib.sha256)
    mac.update(b"bdrp udp v1" + struct.pack(">HH", sender, receiver))
    mac.update(sender_nonce + receiver_nonce)
    return mac.digest()[:16]


def sealed(key, seq, frame_bytes):
    """A UDP datagram carrying frame_bytes under key (auth.udp: mac): frame, seq, tag."""
    d = frame_bytes + struct.pack(">Q", seq)
    return d + struct.pack("<Q", siphash(key, d))


class Neighbour:
    """Router 1 (or `me`) on a session with the probe router, holding the router token: it
    sends ROUTER_HELLO with the network's parameters and reads the router's, then sends a DV_HELLO
    echoing the router's epoch every second and its routes every three (its own, and the
    router's through the router), so that the link stays up. With `read`, a thread reads
    everything the router sends (counting it, answering PINGs); without, it reads until the
    router's first DV_HELLO and never again. With `udp`, it announces a UDP socket of its own
    (`self.udp`), and `self.key` is the key of its datagrams to the router."""

    # The network's parameters as the probe router's hellos give them: router-link protocol,
    # maxRouters, Bloom M, k and categories, auth.udp. A first guess; the router corrects it.
    network = (6, 1024, 8192, 1, 1, 1)

    def __init__(self, read=True, rcvbuf=None, me=ME, udp=False):
        self.me = me
        self.udp = None
        if udp:
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(("127.0.0.1", 0))
        self.epoch = now_ms()
        # The dialler's ROUTER_HELLO goes first, with the network's parameters; a router that
        # refuses one for a parameter sends its own hello before the ERROR, so a wrong guess is
        # answered with the right values, and the second session uses them.
        for _ in range(2):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf:  # before connect, so that the window is small from the start
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.settimeout(30)
            s.connect(("127.0.0.1", ROUTERS))
            protocol, max_routers, bits, k, categories, protection = Neighbour.network
            nonce = os.urandom(16) if protection else b""
            s.sendall(
                frame(
                    ROUTER_HELLO,
                    struct.pack(
                        ">HHqIHBBHH", protocol, me, self.epoch, max_routers, bits, k, categories,
                        self.udp.getsockname()[1] if self.udp else 0, len(TOKEN),
                    )
                    + TOKEN
                    + bytes([protection, len(nonce)])
                    + nonce,
                )
            )
            f = read_frame(s)
            assert f and f[0] == ROUTER_HELLO, f
            (protocol, self.router, self.router_epoch, max_routers, bits, k, categories, _, _) = (
                struct.unpack(">HHqIHBBHH", f[1][:24])
            )
            token_len = struct.unpack(">H", f[1][22:24])[0]
            protection, nonce_len = f[1][24 + token_len], f[1][25 + token_len]
            router_nonce = f[1][26 + token_len : 26 + token_len + nonce_len]
            network = (protocol, max_routers, bits, k, categories, protection)
            if network == Neighbour.network:
                break
            Neighbour.network = network
            s.close()
        else:
            raise AssertionError("the router refused the hello with its own network's parameters")
        self.s = s
        self.bloom = (bits, k, categories)
        if protection:
            self.key = udp_key(me, self.router, nonce, router_nonce)
        self.lock = threading.Lock()
        self.counts = {}
        self.data = 0
        self.errors = []
        self.own_route = None  # the router's latest route to itself: (epoch, seqno)
        self.closed = False
        self.stop = threading.Event()
        self.up = threading.Event()
        if read:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            while not self.up.is_set():
                f = read_frame(s)
                assert f is not None, "the router closed the session during the hello"
                self._take(f)
        self.s.settimeout(None)
        threading.Thread(target=self._keepalive, daemon=True).start()
        assert self.up.wait(10), "the router sent no DV_HELLO within 10 s"

    def send(self, data):
        with self.lock:
            self.s.sendall(data)

    def _take(self, f):
        ftype, body = f
        self.counts[ftype] = self.counts.get(ftype, 0) + 1
        if ftype == DV_HELLO:
            self.router_epoch = struct.unpack(">q", body[2:10])[0]
            self.up.set()
        elif ftype == DATA:
            self.data += 1
        elif ftype == ROUTE_UPDATE:
            for i in range(struct.unpack(">H", body[2:4])[0]):
                dest, epoch, seqno, _, _ = struct.unpack(">HqiHB", body[4 + 17 * i : 21 + 17 * i])
                if dest == self.router:
                    self.own_route = (epoch, seqno)
        elif ftype == 0x05:
            self.errors.append(error_text(body))
        elif ftype == 0x08:
            self.send(frame(0x09, body))

    def _read(self):
        self.s.settimeout(None)
        try:
            while True:
                f = read_frame(self.s)
                if f is None:
                    break
                self._take(f)
        except OSError:
            pass
        self.closed = True

    def _keepalive(self):
        i = 0
        try:
            while not self.stop.is_set():
                self.send(
                    frame(DV_HELLO, struct.pack(">Hqq", self.me, self.epoch, self.router_epoch))
                )
                if i % 3 == 0:
                    # Its own route, and the router's poisoned (it goes through the router), which
                    # makes router 1 a child in the tree that the router's broadcasts follow.
                    routes = [(self.me, self.epoch, i // 3 + 1, 0)]
                    if self.own_route:
                        routes.append((self.router, *self.own_route, 0xFFFF, 1))
                    self.send(route_update(routes, self.me))
                i += 1
                self.stop.wait(1)
        except OSError:
            self.closed = True

    def close(self, bye=True):
        self.stop.set()
        try:
            if bye:
                self.send(frame(BYE, b""))
            self.s.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked writing to it
        except OSError:
            pass
        self.s.close()
        if self.udp:
            self.udp.close()


def snapshot():
    """Every series of the router's metrics now: {series: value}."""
    url = f"http://127.0.0.1:{METRICS}/metrics"
    out = {}
    for line in urllib.request.urlopen(url, timeout=5).read().decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


WATCHED = (
    "bdrp_drops_total",
    "bdrp_predicate_refused_total",
    "bdrp_predicate_rejected_total",
    "bdrp_control_refused_total",
    "bdrp_unicast_claims_overtaken_total",
    "bdrp_connections_closed_total",
    "bdrp_link_control_deferred_total",
    "bdrp_link_refused_total",
    "bdrp_protocol_errors_total",
    "bdrp_data_malformed_total",
    "bdrp_predicate_resyncs_total",
    "bdrp_udp_datagrams_dropped_total",
    "bdrp_udp_datagrams_received_total",
    "bdrp_unicast_tables_requested_total",
)
GAUGES = (
    "bdrp_predicate_origins",
    "bdrp_predicate_filter_bytes",
    "bdrp_predicate_match_all_origins",
    "bdrp_unicast_routes",
)


def print_changes(before, after=None):
    """What the router counted between two snapshots: the watched counters that moved, and the
    table-size gauges that changed."""
    after = after or snapshot()
    for name, v in sorted(after.items()):
        family = name.split("{")[0]
        if family in WATCHED and v != before.get(name, 0):
            print(f"  {name} +{v - before.get(name, 0):g}", flush=True)
        elif family in GAUGES and v != before.get(name):
            print(f"  {name} {before.get(name, 0):g} -> {v:g}", flush=True)



def canary_flowing(canary, seconds=2.0):
    """Whether the canary subscriber got messages over the next `seconds`, and whether a new
    subscriber gets a message from a new publisher (the router still serves should the canary's
    sessions have been cut)."""
    got = canary.got
    time.sleep(seconds)
    try:
        sub, pub = session("check-sub"), session("check-pub")
        sub.sendall(set_predicate(1, [[(EXISTS, "check", None)]]))
        assert read_frame(sub)[0] == 0x04
        pub.sendall(frame(0x06, struct.pack(">Q", 0) + message({"check": 1})))
        sub.settimeout(1)
        fresh, end = False, time.time() + 5
        while not fresh and time.time() < end:
            try:
                f = read_frame(sub)
            except socket.timeout:
                continue
            if f is None:
                break
            fresh = f[0] == 0x07
            if f[0] == 0x08:
                sub.sendall(frame(0x09, f[1]))
        sub.close()
        pub.close()
    except (OSError, AssertionError, TypeError):
        fresh = False
    return f"canary {'flowing' if canary.got > got else 'STOPPED'}, a new pair served: {fresh}"


def probe_claims(pid, canary, nb):
    """Routes and a sequence-number request about routers the neighbour is not: the probe router
    itself one millisecond into its next incarnation, a made-up router 5 and one (6) a week ahead
    of the clock, and seqno 2^31-1 for the probe router."""
    before = snapshot()
    route0 = nb.own_route
    nb.send(route_update([(nb.router, nb.router_epoch + 1, 1, 1), (5, now_ms() + 1, 1, 1)]))
    nb.send(route_update([(6, now_ms() + 7 * 86_400_000, 1, 1)]))
    nb.send(frame(SEQNO_REQUEST, struct.pack(">HHqiH", ME, nb.router, nb.router_epoch, 2**31 - 1, 64)))
    nb.send(frame(SEQNO_REQUEST, struct.pack(">HHqiH", ME, 5, now_ms() + 1, 2**31 - 1, 64)))
    time.sleep(5)  # the router's next full route update (every 4 s) shows what it did
    print(
        "route updates naming router 0 (epoch +1 ms), 5 (+1 ms) and 6 (+7 days), SEQNO_REQUESTs"
        f" for seqno 2^31-1: the router's route to itself {route0} -> {nb.own_route};"
        f" its DV_HELLO epoch now {nb.router_epoch}; session up: {not nb.closed};"
        f" {canary_flowing(canary)}; new client served: {hello_ok()};"
        f" rss {rss_mb(pid)} MB",
        flush=True,
    )
    print_changes(before)


def deliveries(spy, seconds=3):
    """DELIVER frames the spy session gets within `seconds` (answering PINGs); closes it."""
    spy.settimeout(1)
    delivered = 0
    end = time.time() + seconds
    try:
        while time.time() < end:
            f = read_frame(spy)
            if f is None:
                break
            if f[0] == 0x07:
                delivered += 1
            elif f[0] == 0x08:
                spy.sendall(frame(0x09, f[1]))
    except socket.timeout:
        pass
    spy.close()
    return delivered


def probe_sources(pid, canary, nb):
    """DATA from the neighbour whose source is the probe router itself, or router 9 (no route),
    each to a spy client of the probe router; the same from the neighbour's own number must
    arrive (the frames are well formed)."""
    spy = session("spy")
    spy.sendall(set_predicate(1, [[(EXISTS, "probe", None)]]))
    f = read_frame(spy)
    assert f and f[0] == 0x04, f
    before = snapshot()
    msg = message({"probe": 1})
    n = 1000
    for i in range(n):
        nb.send(data_frame(nb.router, [nb.router], msg, mid=i + 1))
        nb.send(data_frame(9, [nb.router], msg, mid=i + 1))
        nb.send(data_frame(9, [], msg, mid=n + i + 1, broadcast=True))
    nb.send(data_frame(ME, [nb.router], msg, mid=1))
    delivered = deliveries(spy)
    print(
        f"DATA from the neighbour: {n} naming the probe router as source, {n} from router 9"
        f" (no route) and {n} broadcasts from 9, then 1 from router 1: the spy got {delivered}"
        f" (1 expected); session up: {not nb.closed}; {canary_flowing(canary)}",
        flush=True,
    )
    print_changes(before)


def probe_udp(pid, canary):
    """Router 2, a neighbour whose link carries DATA by UDP (auth.udp: mac), sends from its own
    UDP address and port: 1,000 datagrams tagged under its session's key, each sent twice (a
    replay), 1,000 without a tag, 1,000 tagged under a key made with another router token, and
    1,000 genuine ones with one byte changed. Only the first copy of each genuine one may reach
    the spy client."""
    nb2 = Neighbour(me=2, udp=True)
    spy = session("udpspy")
    spy.sendall(set_predicate(1, [[(EXISTS, "udpprobe", None)]]))
    f = read_frame(spy)
    assert f and f[0] == 0x04, f
    time.sleep(2)  # the route to router 2 (DATA is taken only from a source with a route)
    before = snapshot()
    to = ("127.0.0.1", ROUTERS)
    wrong = udp_key(2, nb2.router, os.urandom(16), os.urandom(16), token=b"guess")
    n = 1000
    seq = 0
    for i in range(n):
        d = data_frame(2, [nb2.router], message({"udpprobe": i}), mid=i + 1)
        seq += 1
        genuine = sealed(nb2.key, seq, d)
        nb2.udp.sendto(genuine, to)
        nb2.udp.sendto(genuine, to)  # the same datagram again
        nb2.udp.sendto(d, to)  # no tag
        nb2.udp.sendto(sealed(wrong, seq + 10_000_000, d), to)
        seq += 1
        altered = bytearray(sealed(nb2.key, seq, d))
        altered[len(d) - 1] ^= 1  # the last byte of the message
        nb2.udp.sendto(bytes(altered), to)
        if i % 100 == 99:
            time.sleep(0.01)  # within the socket's receive buffer
    delivered = deliveries(spy)
    print(
        f"UDP from router 2's own address: {n} genuine datagrams each sent twice, {n} untagged,"
        f" {n} under another key, {n} altered: the spy got {delivered} ({n} expected);"
        f" {canary_flowing(canary)}",
        flush=True,
    )
    print_changes(before)
    nb2.close()


def probe_advertisements(pid, canary, nb):
    """PREDICATE_ADs for router numbers no one uses: 65,535 of the smallest filters each for
    origins 10..40, then 1,000 nearly full bitmaps (16 MB as held from a 1 MB frame) for 41, then
    the match-all filter for 42 (no route) and for the neighbour itself."""
    bits = nb.bloom[0]
    before = snapshot()
    rss0 = rss_mb(pid)
    small = encoded_predicate(smallest_filters(65_535, bits), nb.bloom)
    epoch = now_ms()
    t0 = time.time()
    for origin in range(10, 41):
        nb.send(predicate_ad(origin, epoch, 1, small))
    deadline = time.time() + 60
    while time.time() < deadline:
        now = snapshot()
        moved = sum(
            v - before.get(name, 0)
            for name, v in now.items()
            if name.startswith(("bdrp_predicate_origins", "bdrp_predicate_refused_total"))
        )
        if moved >= 31:
            break
        time.sleep(0.5)
    print(
        f"31 advertisements of 65,535 filters ({len(small) >> 10} KiB each) for unused origins"
        f" 10..40: taken within {time.time() - t0:.1f} s; rss {rss0} -> {rss_mb(pid)} MB;"
        f" session up: {not nb.closed}; new client served: {hello_ok()}",
        flush=True,
    )
    print_changes(before)
    before = snapshot()
    ones = (1 << 64) - 1
    dense = sorted(
        tuple(ones ^ (1 << (i % 64)) if w == i // 64 else ones for w in range(bits // 64))
        for i in range(1000)
    )
    ad = predicate_ad(
        41,
        epoch,
        1,
        struct.pack(">HBBH", *nb.bloom, len(dense))
        + b"".join(varint(1) + struct.pack(f">{len(d)}Q", *d) for d in dense),
    )
    nb.send(ad)
    time.sleep(3)
    print(
        f"1,000 bitmap filters of {bits - 1} bits for origin 41 ({len(ad) >> 10} KiB):"
        f" rss {rss_mb(pid)} MB; session up: {not nb.closed}; errors: {nb.errors}",
        flush=True,
    )
    print_changes(before)
    before = snapshot()
    match_all = encoded_predicate([[]], nb.bloom)
    nb.send(predicate_ad(42, epoch, 1, match_all))
    nb.send(predicate_ad(ME, nb.epoch, 1, match_all))
    t0 = time.time()
    while time.time() < t0 + 20 and snapshot().get("bdrp_predicate_match_all_origins", 0) < 2:
        time.sleep(0.5)
    taken = time.time() - t0
    data0 = nb.data
    time.sleep(3)
    print(
        f"the match-all filter for origin 42 (no route) and for router 1 itself: held after"
        f" {taken:.1f} s; router 1 then got {nb.data - data0} DATA frames in 3 s;"
        f" {canary_flowing(canary)}",
        flush=True,
    )
    nothing = encoded_predicate([], nb.bloom)
    nb.send(predicate_ad(42, epoch, 2, nothing))
    nb.send(predicate_ad(ME, nb.epoch, 2, nothing))
    time.sleep(1)
    print_changes(before)


def probe_table_requests(pid, canary, nb):
    """TABLE_REQUESTs from the neighbour, as fast as it can send them for 5 s: the router answers
    with its whole route table at most once per hello interval (1 s), whatever the rate, besides
    its periodic full updates (every 4 s less a jitter) and triggered ones."""
    before = snapshot()
    updates0 = nb.counts.get(ROUTE_UPDATE, 0)
    cpu0 = cpu_seconds(pid)
    batch = frame(TABLE_REQUEST, struct.pack(">H", ME)) * 1000
    sent = 0
    end = time.time() + 5
    while time.time() < end and not nb.closed:
        nb.send(batch)
        sent += 1000
    time.sleep(1)
    updates = nb.counts.get(ROUTE_UPDATE, 0) - updates0
    print(
        f"{sent:,} TABLE_REQUESTs in 5 s: {updates} ROUTE_UPDATEs back within 6 s; router CPU"
        f" {cpu_seconds(pid) - cpu0:.1f} s; session up: {not nb.closed};"
        f" {canary_flowing(canary)}; new client served: {hello_ok()}; rss {rss_mb(pid)} MB",
        flush=True,
    )
    print_changes(before)


def probe_deaf_neighbour(pid, canary):
    """Router 1 comes back, keeps sending DV_HELLOs and never reads (4 KiB receive buffer), while
    it makes the router owe it control traffic: it advertises 16 large origins and asks for them
    again (PREDICATE_REQUEST) 800 times a second, and a client of the router toggles between two
    predicates of 1,024 filters four times a second (within its rate limit)."""
    before = snapshot()
    nb = Neighbour(read=False, rcvbuf=4096)
    bits = nb.bloom[0]
    small = encoded_predicate(smallest_filters(65_535, bits), nb.bloom)
    epoch = now_ms()
    for origin in range(50, 66):
        nb.send(predicate_ad(origin, epoch, 1, small))
    stop = threading.Event()
    toggled = [0, 0]

    def toggle():
        s = session("big-toggler")
        i = 0
        while not stop.is_set():
            s.sendall(
                set_predicate(
                    1000 + i,
                    [[(EQ, f"k{c}_{j}", integer(c + 10_000 * (i % 2))) for j in range(4)]
                     for c in range(1024)],
                )
            )
            f = read_frame(s)
            toggled[0 if f and f[0] == 0x04 else 1] += 1
            i += 1
            stop.wait(0.25)
        s.close()

    threading.Thread(target=toggle, daemon=True).start()
    requests = b"".join(
        frame(PREDICATE_REQUEST, struct.pack(">HH", ME, o)) for o in [0] + list(range(50, 66))
    )

    def ask():  # blocks, not the probe, when the router stops reading the session
        try:
            while not stop.is_set():
                nb.send(requests)
                time.sleep(0.02)
        except OSError:
            pass

    threading.Thread(target=ask, daemon=True).start()

    def closed(snap, reason):
        return sum(
            v
            for name, v in snap.items()
            if name.startswith("bdrp_connections_closed_total")
            and 'port="routers"' in name
            and f'reason="{reason}"' in name
        )

    t0, peak, cut = time.time(), 0, None
    end = t0 + 45
    while time.time() < end:
        time.sleep(1)
        peak = max(peak, rss_mb(pid))
        now = snapshot()
        if cut is None and any(
            closed(now, r) > closed(before, r) for r in ("slow_consumer", "silent")
        ):
            cut = time.time() - t0
            end = min(end, time.time() + 5)
    served = hello_ok()
    stop.set()
    nb.close(bye=False)
    print(
        f"a neighbour that never reads, asked for 16 x {len(small) >> 10} KiB advertisements"
        f" 800 times a second, predicate toggled {toggled[0]} times ({toggled[1]} refused):"
        f" cut {'after %.1f s' % cut if cut is not None else 'not within 45 s'} (why: below);"
        f" peak rss {peak} MB, {rss_mb(pid)} MB after; new client served: {served};"
        f" {canary_flowing(canary)}",
        flush=True,
    )
    print_changes(before)


def main():
    conf = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    conf.write(
        f"router: 0\nlisten:\n  clients: 127.0.0.1:{CLIENTS}\n"
        f"  routers: 127.0.0.1:{ROUTERS}\n  metrics: 127.0.0.1:{METRICS}\n"
        "limits:\n  keepAliveMs: 2000\n"
        f"auth: {{routerToken: {TOKEN.decode()}}}\n"
        f"neighbours: [{{router: {ME}}}, {{router: 2, transport: udp}}]\n"
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
        # 9.-12. One neighbour, router 1, holding the router token.
        nb = Neighbour()
        print(
            f"router 1 linked: the probe router's hello has epoch {nb.router_epoch},"
            f" Bloom M {nb.bloom[0]} k {nb.bloom[1]}",
            flush=True,
        )
        time.sleep(2)
        for probe in (probe_claims, probe_sources, probe_advertisements, probe_table_requests):
            lag0 = lag_buckets()
            probe(pid, canary, nb)
            print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        lag0 = lag_buckets()
        probe_udp(pid, canary)
        print(f"  event-loop lag during it: {lag_summary(lag0)}", flush=True)
        nb.close()
        time.sleep(2)
        lag0 = lag_buckets()
        probe_deaf_neighbour(pid, canary)
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
