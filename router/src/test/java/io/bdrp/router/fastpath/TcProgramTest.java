package io.bdrp.router.fastpath;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.encoding.Message;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.EthernetFrames;
import io.bdrp.transport.SipHash;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TC program on crafted packets ({@code BPF_PROG_TEST_RUN}), in two network namespaces this
 * test makes: "router" holds this router (number 1) with one interface per neighbour, "peers" the
 * other ends, where UDP sockets at the neighbours' addresses receive the copies the program sends.
 * The copies are compared byte for byte with the frames the JVM path would send ({@link
 * DataHeader}), with the addresses and UDP ports a router's socket would use; a copy whose checksum
 * the program got wrong never reaches the socket.
 *
 * <p>Needs root and the sidecar library (CI has both: there it fails without them).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcProgramTest {
  private static final String NS = "bdrp-tc-" + ProcessHandle.current().pid();
  private static final String ROUTER_NS = NS + "-r";
  private static final String PEERS_NS = NS + "-p";
  private static final int ROUTER_PORT = 7500;
  private static final int PEER_PORT = 7600;
  private static final int SELF = 1;

  /** Neighbour i (routers 0, 2, 3) is on link i: veth r{i} (router side) and p{i} (peer side). */
  private static final int[] NEIGHBOURS = {0, 2, 3};

  private static ExecutorService routerThread;
  private static ExecutorService peersThread;
  private static EbpfFastPath fp;
  private static final List<DatagramChannel> peers = new ArrayList<>();
  private static int[] ifindex = new int[NEIGHBOURS.length];
  private static boolean made;

  private static String mac(String side, int link) {
    return "02:bd:00:00:0" + link + (side.equals("r") ? ":01" : ":02");
  }

  private static String routerAddress(int link) {
    return "10.77." + link + ".1";
  }

  private static String peerAddress(int link) {
    return "10.77." + link + ".2";
  }

  private static void sh(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed: " + out.strip());
    }
  }

  @BeforeAll
  static void setUp() throws Exception {
    if (!EbpfFastPath.isAvailable()) {
      String why = "kernel fast path unavailable: " + EbpfFastPath.unavailabilityReason();
      if (System.getenv("CI") != null) {
        fail(why + " (CI installs the toolchain and runs as root)");
      }
      Assumptions.abort(why);
    }
    sh("ip", "netns", "add", ROUTER_NS);
    sh("ip", "netns", "add", PEERS_NS);
    made = true;
    for (int i = 0; i < NEIGHBOURS.length; i++) {
      String r = "r" + i;
      String p = "p" + i;
      sh(
          "ip",
          "-n",
          ROUTER_NS,
          "link",
          "add",
          r,
          "address",
          mac("r", i),
          "type",
          "veth",
          "peer",
          "name",
          p,
          "address",
          mac("p", i),
          "netns",
          PEERS_NS);
      sh("ip", "-n", ROUTER_NS, "addr", "add", routerAddress(i) + "/24", "dev", r);
      sh("ip", "-n", PEERS_NS, "addr", "add", peerAddress(i) + "/24", "dev", p);
      // Room for the longest datagram the program verifies (FastPathTable.MAX_AUTH_BYTES).
      sh("ip", "-n", ROUTER_NS, "link", "set", r, "mtu", "9000", "up");
      sh("ip", "-n", PEERS_NS, "link", "set", p, "mtu", "9000", "up");
      sh(
          "ip",
          "-n",
          ROUTER_NS,
          "neigh",
          "replace",
          peerAddress(i),
          "lladdr",
          mac("p", i),
          "dev",
          r,
          "nud",
          "permanent");
    }
    sh("ip", "-n", PEERS_NS, "link", "set", "lo", "up");
    routerThread = Executors.newSingleThreadExecutor();
    peersThread = Executors.newSingleThreadExecutor();
    routerThread
        .submit(
            () -> {
              EbpfNative.enterNetworkNamespace("/var/run/netns/" + ROUTER_NS);
              for (int i = 0; i < NEIGHBOURS.length; i++) {
                ifindex[i] = java.net.NetworkInterface.getByName("r" + i).getIndex();
              }
              fp = EbpfFastPath.open(SELF);
              return null;
            })
        .get();
    peersThread
        .submit(
            () -> {
              EbpfNative.enterNetworkNamespace("/var/run/netns/" + PEERS_NS);
              for (int i = 0; i < NEIGHBOURS.length; i++) {
                DatagramChannel c = DatagramChannel.open();
                c.bind(new InetSocketAddress(peerAddress(i), PEER_PORT));
                c.socket().setSoTimeout(5_000);
                peers.add(c);
              }
              return null;
            })
        .get();
  }

  @AfterAll
  static void tearDown() throws Exception {
    for (DatagramChannel c : peers) {
      c.close();
    }
    if (fp != null) {
      routerThread
          .submit(
              () -> {
                fp.close();
                return null;
              })
          .get();
    }
    if (routerThread != null) {
      routerThread.shutdownNow();
      peersThread.shutdownNow();
    }
    if (made) {
      sh("ip", "netns", "del", ROUTER_NS);
      sh("ip", "netns", "del", PEERS_NS);
    }
  }

  // ---- tables and packets ----

  private static long generation;

  private static Inet4Address v4(String a) throws IOException {
    return (Inet4Address) InetAddress.getByName(a);
  }

  private static long[] set(int... routers) {
    long[] d = new long[1];
    for (int r : routers) {
      d[r >>> 6] |= 1L << r;
    }
    return d;
  }

  /** Router 1 with 64 router numbers: routers 0 and 5 behind neighbour 0, 2 and 4 behind 2, 3. */
  private static FastPathTable table(boolean neighbour3OverUdp) throws IOException {
    FastPathTable t = new FastPathTable(++generation, SELF, 64, ROUTER_PORT);
    long[][] behind = {set(0, 5), set(2, 4), set(3)};
    for (int i = 0; i < NEIGHBOURS.length; i++) {
      boolean kernel = NEIGHBOURS[i] != 3 || neighbour3OverUdp;
      t.neighbour(
          NEIGHBOURS[i],
          v4(peerAddress(i)),
          PEER_PORT,
          v4(routerAddress(i)),
          kernel ? ifindex[i] : 0,
          EthernetFrames.mac(mac("r", i)),
          EthernetFrames.mac(mac("p", i)),
          false,
          behind[i]);
    }
    return t;
  }

  private static final Message MESSAGE =
      Message.builder().put("price", 42).put("sym", "bdrp").build();

  private static byte[] frame(int hop, boolean broadcast, long[] d) {
    return frame(0, hop, broadcast, d);
  }

  /** A DATA frame that names {@code source} as the router that published it. */
  private static byte[] frame(int source, int hop, boolean broadcast, long[] d) {
    return frame(source, hop, broadcast, d, MESSAGE);
  }

  private static byte[] frame(int source, int hop, boolean broadcast, long[] d, Message m) {
    ByteBuf b =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT, hop, broadcast, source, 0x1122334455667788L, d, m);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** An Ethernet frame from neighbour 0 (on link 0) to this router's UDP port. */
  private static byte[] packet(byte[] payload, int sourcePort, int destPort) {
    try {
      return EthernetFrames.udp(
          EthernetFrames.mac(mac("r", 0)),
          EthernetFrames.mac(mac("p", 0)),
          v4(peerAddress(0)),
          sourcePort,
          v4(routerAddress(0)),
          destPort,
          payload);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- running it ----

  private record Run(int verdict, byte[] out, long[] counters, long[] forwarded) {
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("verdict " + verdict + ", counters");
      for (FastPathCounter c : FastPathCounter.values()) {
        if (counters[c.ordinal()] != 0) {
          b.append(' ').append(c).append('=').append(counters[c.ordinal()]);
        }
      }
      return b.append(", forwarded ").append(Arrays.toString(forwarded)).toString();
    }
  }

  private static final int TC_ACT_UNSPEC = -1;
  private static final int TC_ACT_SHOT = 2;

  private static Run run(FastPathTable table, byte[] packet) throws Exception {
    return routerThread
        .submit(
            () -> {
              if (table != null) {
                fp.setTable(table);
              }
              long[] before = fp.counters();
              long[] fwdBefore = fp.forwarded(NEIGHBOURS);
              byte[] out = new byte[packet.length + 64];
              long r = fp.testRun(packet, ifindex[0], out);
              long[] after = fp.counters();
              long[] fwdAfter = fp.forwarded(NEIGHBOURS);
              for (int i = 0; i < after.length; i++) {
                after[i] -= before[i];
              }
              for (int i = 0; i < fwdAfter.length; i++) {
                fwdAfter[i] -= fwdBefore[i];
              }
              return new Run((int) (r >> 32), Arrays.copyOf(out, (int) r), after, fwdAfter);
            })
        .get();
  }

  /** The datagram that arrived at neighbour {@code link}'s socket, and from where. */
  private static byte[] received(int link, InetSocketAddress[] from) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(65536);
    DatagramChannel c = peers.get(link);
    var s = c.socket();
    var p = new java.net.DatagramPacket(b.array(), b.capacity());
    try {
      s.receive(p);
    } catch (SocketTimeoutException e) {
      fail("no copy reached neighbour " + NEIGHBOURS[link]);
    }
    from[0] = (InetSocketAddress) p.getSocketAddress();
    return Arrays.copyOf(p.getData(), p.getLength());
  }

  private static void assertCopy(int link, byte[] expected) throws IOException {
    InetSocketAddress[] from = new InetSocketAddress[1];
    byte[] got = received(link, from);
    assertArrayEquals(expected, got, "the copy to router " + NEIGHBOURS[link]);
    assertEquals(
        new InetSocketAddress(routerAddress(link), ROUTER_PORT),
        from[0],
        "a copy comes from this router's address on the link and its UDP port");
  }

  private static void assertOnly(long[] counters, FastPathCounter c) {
    long[] expected = new long[FastPathCounter.values().length];
    expected[c.ordinal()] = 1;
    assertArrayEquals(expected, counters, "counters: one " + c);
  }

  private static byte[] payloadOf(byte[] packet) {
    return Arrays.copyOfRange(packet, 42, packet.length);
  }

  // ---- the cases ----

  @Test
  void splitsDAcrossTwoNextHopsAndDropsTheOriginal() throws Exception {
    Run r = run(table(true), packet(frame(5, false, set(2, 3)), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.SPLIT);
    assertArrayEquals(new long[] {0, 1, 1}, r.forwarded);
    assertCopy(1, frame(4, false, set(2)));
    assertCopy(2, frame(4, false, set(3)));
  }

  @Test
  void oneNextHopForSeveralRouters() throws Exception {
    Run r = run(table(true), packet(frame(9, false, set(2, 4)), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertArrayEquals(new long[] {0, 1, 0}, r.forwarded);
    assertCopy(1, frame(8, false, set(2, 4)));
  }

  @Test
  void manyNextHopsIncludingBackToTheSender() throws Exception {
    Run r = run(table(true), packet(frame(3, false, set(0, 2, 3, 4, 5)), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertArrayEquals(new long[] {1, 1, 1}, r.forwarded);
    assertCopy(0, frame(2, false, set(0, 5)));
    assertCopy(1, frame(2, false, set(2, 4)));
    assertCopy(2, frame(2, false, set(3)));
  }

  @Test
  void selfInDForwardsTheRestAndPassesUpOneCopyForThisRouter() throws Exception {
    byte[] in = packet(frame(5, false, set(1, 2, 4)), PEER_PORT, ROUTER_PORT);
    Run r = run(table(true), in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.SPLIT_LOCAL);
    assertCopy(1, frame(4, false, set(2, 4)));
    // Up as it came (addresses, ports, hop limit and checksums), with D = {this router}.
    assertArrayEquals(packet(frame(5, false, set(1)), PEER_PORT, ROUTER_PORT), r.out);
  }

  @Test
  void edgeCasesGoUpUntouched() throws Exception {
    FastPathTable t = table(true);
    record Case(String name, byte[] packet, FastPathCounter counter) {}
    byte[] truncated = frame(5, false, set(2));
    truncated = Arrays.copyOf(truncated, truncated.length - 3);
    byte[] garbage = new byte[40];
    Arrays.fill(garbage, (byte) 0x5a);
    // Five routers over two words: a bitmap (a list of them would be no shorter).
    byte[] wide = frame(5, false, new long[] {0b11100L, 0b11L});
    // Two routers over two words: a list, which the program leaves to the router.
    byte[] list = frame(5, false, new long[] {1L << 2, 1L});
    byte[] badVersion = frame(5, false, set(2));
    badVersion[4] = 9;
    List<Case> cases =
        List.of(
            new Case(
                "hop limit 1",
                packet(frame(1, false, set(2)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_HOP_LIMIT),
            new Case(
                "a broadcast",
                packet(frame(5, true, null), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_BROADCAST),
            new Case(
                "D longer than the table's words",
                packet(wide, PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_WIDE),
            new Case(
                "D as a list of routers",
                packet(list, PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_D_LIST),
            new Case(
                "a truncated frame",
                packet(truncated, PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_MALFORMED),
            new Case(
                "garbage", packet(garbage, PEER_PORT, ROUTER_PORT), FastPathCounter.UP_MALFORMED),
            new Case(
                "another version",
                packet(badVersion, PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_MALFORMED),
            new Case(
                "a router without a route",
                packet(frame(5, false, set(2, 7)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_NO_ROUTE),
            new Case(
                "this router alone",
                packet(frame(5, false, set(1)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_LOCAL_ONLY),
            new Case(
                "an unknown sender",
                packet(frame(5, false, set(2)), 9999, ROUTER_PORT),
                FastPathCounter.UP_UNKNOWN_SENDER),
            new Case(
                "this router named as the source",
                packet(frame(SELF, 5, false, set(2)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_SOURCE),
            new Case(
                "a source without a route",
                packet(frame(7, 5, false, set(2)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_SOURCE));
    for (Case c : cases) {
      Run r = run(t, c.packet);
      assertEquals(TC_ACT_UNSPEC, r.verdict, c.name);
      assertArrayEquals(c.packet, r.out, c.name + ": untouched");
      assertOnly(r.counters, c.counter);
      assertArrayEquals(new long[3], r.forwarded, c.name + ": no copy sent");
    }
  }

  @Test
  void aCopyForANeighbourOverTcpSendsThePacketUp() throws Exception {
    byte[] in = packet(frame(5, false, set(2, 3)), PEER_PORT, ROUTER_PORT);
    Run r = run(table(false), in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out);
    assertOnly(r.counters, FastPathCounter.UP_TCP_HOP);
  }

  @Test
  void aNextHopWithoutAnEthernetAddressYetSendsThePacketUp() throws Exception {
    FastPathTable t = new FastPathTable(++generation, SELF, 64, ROUTER_PORT);
    t.neighbour(
        0,
        v4(peerAddress(0)),
        PEER_PORT,
        v4(routerAddress(0)),
        ifindex[0],
        EthernetFrames.mac(mac("r", 0)),
        EthernetFrames.mac(mac("p", 0)),
        false,
        set(0));
    t.neighbour(
        2,
        v4(peerAddress(1)),
        PEER_PORT,
        v4(routerAddress(1)),
        0,
        new byte[6],
        new byte[6],
        true,
        set(2));
    byte[] in = packet(frame(5, false, set(2)), PEER_PORT, ROUTER_PORT);
    Run r = run(t, in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out);
    assertOnly(r.counters, FastPathCounter.UP_NO_NEIGH);
  }

  @Test
  void aDatagramForAnotherPortIsNotTouchedNorCounted() throws Exception {
    byte[] in = packet(frame(5, false, set(2)), PEER_PORT, ROUTER_PORT + 1);
    Run r = run(table(true), in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out);
    assertArrayEquals(new long[FastPathCounter.values().length], r.counters);
  }

  // ---- authenticated links (udpProtection: mac) ----

  /** The top bit of a seq: sent by a kernel fast path. */
  private static final long KERNEL = Long.MIN_VALUE;

  /** The last link session used: the kernel keeps its link state across tables and tests. */
  private static long session;

  /** The key of router {@code from}'s datagrams to router {@code to} in link session {@code s}. */
  private static byte[] key(int from, int to, long s) {
    byte[] k = new byte[16];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) (from * 31 + to * 7 + s * 13 + i * 17);
    }
    return k;
  }

  /** {@link #table(boolean)} (every neighbour over UDP) with auth on, every link in session s. */
  private static FastPathTable authTable(long s, long jvmFloor, long kernelFloor)
      throws IOException {
    FastPathTable t = new FastPathTable(++generation, SELF, 64, ROUTER_PORT).auth(true);
    long[][] behind = {set(0, 5), set(2, 4), set(3)};
    for (int i = 0; i < NEIGHBOURS.length; i++) {
      t.neighbour(
              NEIGHBOURS[i],
              v4(peerAddress(i)),
              PEER_PORT,
              v4(routerAddress(i)),
              ifindex[i],
              EthernetFrames.mac(mac("r", i)),
              EthernetFrames.mac(mac("p", i)),
              false,
              behind[i])
          .session(
              s, key(NEIGHBOURS[i], SELF, s), key(SELF, NEIGHBOURS[i], s), jvmFloor, kernelFloor);
    }
    return t;
  }

  private static FastPathTable authTable(long s) throws IOException {
    return authTable(s, 0, 0);
  }

  /** The frame followed by seq and its tag under key: a datagram of an authenticated link. */
  private static byte[] tagged(byte[] frame, long seq, byte[] key) {
    byte[] b = Arrays.copyOf(frame, frame.length + 16);
    ByteBuffer.wrap(b).putLong(frame.length, seq);
    long tag = SipHash.hash(SipHash.k0(key), SipHash.k1(key), b, 0, frame.length + 8);
    ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(frame.length + 8, tag);
    return b;
  }

  /** A datagram from neighbour 0 (router 0) tagged under its key in session s. */
  private static byte[] fromNeighbour0(byte[] frame, long seq, long s) {
    return packet(tagged(frame, seq, key(0, SELF, s)), PEER_PORT, ROUTER_PORT);
  }

  /**
   * Receives the copy at neighbour {@code link}, checks its frame and that its tag verifies under
   * this router's key to that neighbour in session s; returns its seq.
   */
  private static long assertTaggedCopy(int link, byte[] frame, long s) throws IOException {
    InetSocketAddress[] from = new InetSocketAddress[1];
    byte[] got = received(link, from);
    String what = "the copy to router " + NEIGHBOURS[link];
    assertEquals(new InetSocketAddress(routerAddress(link), ROUTER_PORT), from[0], what);
    assertEquals(frame.length + 16, got.length, what + ": the frame, seq and tag");
    assertArrayEquals(frame, Arrays.copyOf(got, frame.length), what);
    byte[] k = key(SELF, NEIGHBOURS[link], s);
    long tag = ByteBuffer.wrap(got).order(ByteOrder.LITTLE_ENDIAN).getLong(frame.length + 8);
    assertEquals(
        SipHash.hash(SipHash.k0(k), SipHash.k1(k), got, 0, frame.length + 8),
        tag,
        what + ": tagged under the key to that neighbour");
    return ByteBuffer.wrap(got).getLong(frame.length);
  }

  /** A message whose frame is {@code extra} bytes longer than the shortest of these. */
  private static Message message(int extra) {
    return Message.builder().put("price", 42).put("sym", "b" + "x".repeat(extra)).build();
  }

  @Test
  void authVerifiesForwardsAndTagsEachCopyUnderTheNextHopsKeyWithTheKernelsSeq() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    // Messages of eight lengths: the trailer at every offset modulo 4 (the checksum's words),
    // and SipHash's last word 0..7 bytes long.
    for (int i = 0; i < 8; i++) {
      Message m = message(i);
      Run r = run(t, fromNeighbour0(frame(0, 5, false, set(2, 3), m), i + 1, s));
      assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
      assertOnly(r.counters, FastPathCounter.SPLIT);
      assertArrayEquals(new long[] {0, 1, 1}, r.forwarded);
      // Each link counts its own copies, from 2^63 + 1 in a new session.
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(1, frame(0, 4, false, set(2), m), s));
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(2, frame(0, 4, false, set(3), m), s));
    }
  }

  @Test
  void aCopyFromAnotherRoutersKernelIsVerifiedInItsOwnWindow() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    for (long seq : new long[] {KERNEL + 7, 3, KERNEL + 5, 2}) {
      Run r = run(t, fromNeighbour0(frame(5, false, set(2)), seq, s));
      assertOnly(r.counters, FastPathCounter.SPLIT);
      assertTaggedCopy(1, frame(4, false, set(2)), s);
    }
    Run r = run(t, fromNeighbour0(frame(5, false, set(2)), KERNEL + 7, s));
    assertOnly(r.counters, FastPathCounter.DROP_REPLAY);
  }

  @Test
  void aWrongTagIsDroppedBeforeAnythingElseAndCounted() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    byte[] flipped = tagged(frame(5, false, set(2, 3)), 1, key(0, SELF, s));
    flipped[flipped.length - 1] ^= 1;
    byte[] changedAfter = tagged(frame(5, false, set(2)), 2, key(0, SELF, s));
    changedAfter[DataHeader.D_OFFSET + 7] |= 1 << 3; // D gains router 3
    record Case(String name, byte[] payload) {}
    List<Case> cases =
        List.of(
            new Case("a flipped tag bit", flipped),
            new Case("a frame changed after tagging", changedAfter),
            new Case(
                "the key of another direction",
                tagged(frame(5, false, set(2)), 3, key(SELF, 0, s))),
            new Case(
                "the key of another session",
                tagged(frame(5, false, set(2)), 4, key(0, SELF, s - 1))),
            // Decisions the table makes come after the tag: these would go up untagged.
            new Case("a broadcast", tagged(frame(5, true, null), 5, key(0, SELF, s - 1))),
            new Case("hop limit 1", tagged(frame(1, false, set(2)), 6, key(0, SELF, s - 1))),
            new Case(
                "this router as the source",
                tagged(frame(SELF, 5, false, set(2)), 7, new byte[16])));
    for (Case c : cases) {
      byte[] in = packet(c.payload, PEER_PORT, ROUTER_PORT);
      Run r = run(t, in);
      assertEquals(TC_ACT_SHOT, r.verdict, c.name + ": " + r);
      assertOnly(r.counters, FastPathCounter.DROP_MAC);
      assertArrayEquals(new long[3], r.forwarded, c.name + ": no copy sent");
    }
    // The same datagrams tagged right are taken (the drops entered nothing in the window).
    Run r = run(t, fromNeighbour0(frame(5, false, set(2, 3)), 1, s));
    assertOnly(r.counters, FastPathCounter.SPLIT);
    assertTaggedCopy(1, frame(4, false, set(2)), s);
    assertTaggedCopy(2, frame(4, false, set(3)), s);
  }

  @Test
  void theSameDatagramTwiceIsAReplay() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    byte[] in = fromNeighbour0(frame(5, false, set(2)), 1, s);
    Run r = run(t, in);
    assertOnly(r.counters, FastPathCounter.SPLIT);
    assertTaggedCopy(1, frame(4, false, set(2)), s);
    r = run(t, in);
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.DROP_REPLAY);
    assertArrayEquals(new long[3], r.forwarded, "no copy sent");
    // A replayed broadcast too: it would go up for the router, which delivers it locally.
    byte[] broadcast = fromNeighbour0(frame(5, true, null), 2, s);
    r = run(t, broadcast);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(broadcast, r.out, "up as it came");
    assertOnly(r.counters, FastPathCounter.UP_BROADCAST);
    r = run(t, broadcast);
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.DROP_REPLAY);
  }

  @Test
  void theWindowTakesLateDatagramsOnceAndNothingBelowIt() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    // 100 first, then 37 (63 behind, in the window), then 36 (64 behind: below it).
    long[] seqs = {100, 37, 36, 37, 99, 100, 164, 100, 101};
    FastPathCounter[] expected = {
      FastPathCounter.SPLIT,
      FastPathCounter.SPLIT,
      FastPathCounter.DROP_REPLAY,
      FastPathCounter.DROP_REPLAY,
      FastPathCounter.SPLIT,
      FastPathCounter.DROP_REPLAY,
      FastPathCounter.SPLIT, // the window slides by 64: only 164 is left in it
      FastPathCounter.DROP_REPLAY,
      FastPathCounter.SPLIT,
    };
    for (int i = 0; i < seqs.length; i++) {
      Run r = run(t, fromNeighbour0(frame(5, false, set(2)), seqs[i], s));
      assertOnly(r.counters, expected[i]);
      if (expected[i] == FastPathCounter.SPLIT) {
        assertTaggedCopy(1, frame(4, false, set(2)), s);
      }
    }
  }

  @Test
  void aSeqAtOrBelowTheRoutersFloorIsAReplay() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s, 100, KERNEL + 50);
    long[] seqs = {100, 99, 36, KERNEL + 50, KERNEL + 1, 0, KERNEL, 101, KERNEL + 51};
    for (int i = 0; i < seqs.length; i++) {
      Run r = run(t, fromNeighbour0(frame(5, false, set(2)), seqs[i], s));
      boolean fresh = seqs[i] == 101 || seqs[i] == KERNEL + 51;
      assertOnly(r.counters, fresh ? FastPathCounter.SPLIT : FastPathCounter.DROP_REPLAY);
      if (fresh) {
        assertTaggedCopy(1, frame(4, false, set(2)), s);
      }
    }
  }

  @Test
  void aNewSessionResetsTheWindowsAndTheCopiesSeq() throws Exception {
    long s1 = ++session;
    byte[] first = fromNeighbour0(frame(5, false, set(2)), 1, s1);
    assertOnly(run(authTable(s1), first).counters, FastPathCounter.SPLIT);
    assertEquals(KERNEL + 1, assertTaggedCopy(1, frame(4, false, set(2)), s1));
    assertOnly(run(authTable(s1), first).counters, FastPathCounter.DROP_REPLAY);
    assertOnly(
        run(authTable(s1), fromNeighbour0(frame(5, false, set(2)), 2, s1)).counters,
        FastPathCounter.SPLIT);
    assertEquals(KERNEL + 2, assertTaggedCopy(1, frame(4, false, set(2)), s1));

    long s2 = ++session;
    FastPathTable t2 = authTable(s2);
    Run r = run(t2, fromNeighbour0(frame(5, false, set(2)), 1, s2));
    assertOnly(r.counters, FastPathCounter.SPLIT);
    assertEquals(KERNEL + 1, assertTaggedCopy(1, frame(4, false, set(2)), s2));
    // The old session's datagrams no longer verify.
    assertOnly(
        run(t2, fromNeighbour0(frame(5, false, set(2)), 3, s1)).counters, FastPathCounter.DROP_MAC);
    // A table of the old session after the kernel saw the new one: the sender's packets go up.
    byte[] stale = fromNeighbour0(frame(5, false, set(2)), 3, s1);
    r = run(authTable(s1), stale);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(stale, r.out, "up as it came");
    assertOnly(r.counters, FastPathCounter.UP_NO_TABLE);
  }

  @Test
  void aDatagramLongerThanTheLimitGoesUpUnverified() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    // The longest datagram verified, and one byte more.
    int extra = 0;
    while (frame(0, 5, false, set(2), message(extra)).length + 16 < FastPathTable.MAX_AUTH_BYTES) {
      extra++;
    }
    Message longest = message(extra);
    assertEquals(
        FastPathTable.MAX_AUTH_BYTES, frame(0, 5, false, set(2), longest).length + 16, "longest");
    Run r = run(t, fromNeighbour0(frame(0, 5, false, set(2), longest), 1, s));
    assertOnly(r.counters, FastPathCounter.SPLIT);
    assertTaggedCopy(1, frame(0, 4, false, set(2), longest), s);

    byte[] tooLong = frame(0, 5, false, set(2), message(extra + 1));
    assertEquals(FastPathTable.MAX_AUTH_BYTES + 1, tooLong.length + 16);
    byte[] in = packet(Arrays.copyOf(tooLong, tooLong.length + 16), PEER_PORT, ROUTER_PORT);
    r = run(t, in); // seq and tag all zero: the kernel does not look
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out, "up untouched");
    assertOnly(r.counters, FastPathCounter.UP_LARGE);
    assertArrayEquals(new long[3], r.forwarded);
  }

  @Test
  void theLocalCopyGoesUpTaggedUnderTheSendersKeyWithItsSeq() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    for (int i = 0; i < 8; i++) {
      Message m = message(i);
      long seq = 7 + i;
      Run r = run(t, fromNeighbour0(frame(0, 5, false, set(1, 2, 4), m), seq, s));
      assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
      assertOnly(r.counters, FastPathCounter.SPLIT_LOCAL);
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(1, frame(0, 4, false, set(2, 4), m), s));
      // As it came (addresses, ports, hop limit, seq, checksums) with D = {this router}, and
      // a tag under the sender's key over that frame.
      assertArrayEquals(fromNeighbour0(frame(0, 5, false, set(1), m), seq, s), r.out);
    }
  }

  @Test
  void withAuthOtherCasesGoUpAsTheyCameOnceVerified() throws Exception {
    long s = ++session;
    FastPathTable t = authTable(s);
    record Case(String name, byte[] packet, FastPathCounter counter) {}
    List<Case> cases =
        List.of(
            new Case(
                "hop limit 1",
                fromNeighbour0(frame(1, false, set(2)), 1, s),
                FastPathCounter.UP_HOP_LIMIT),
            new Case(
                "this router alone",
                fromNeighbour0(frame(5, false, set(1)), 2, s),
                FastPathCounter.UP_LOCAL_ONLY),
            new Case(
                "a source without a route",
                fromNeighbour0(frame(7, 5, false, set(2)), 3, s),
                FastPathCounter.UP_SOURCE),
            new Case(
                "an unknown sender",
                packet(tagged(frame(5, false, set(2)), 1, key(0, SELF, s)), 9999, ROUTER_PORT),
                FastPathCounter.UP_UNKNOWN_SENDER),
            new Case(
                "a frame whose length counts the trailer",
                packet(frame(5, false, set(2)), PEER_PORT, ROUTER_PORT),
                FastPathCounter.UP_MALFORMED));
    for (Case c : cases) {
      Run r = run(t, c.packet);
      assertEquals(TC_ACT_UNSPEC, r.verdict, c.name);
      assertArrayEquals(c.packet, r.out, c.name + ": untouched");
      assertOnly(r.counters, c.counter);
      assertArrayEquals(new long[3], r.forwarded, c.name + ": no copy sent");
    }
  }

  @Test
  void aNeighbourWithoutASessionHasItsPacketsGoUp() throws Exception {
    long s = ++session;
    FastPathTable t = new FastPathTable(++generation, SELF, 64, ROUTER_PORT).auth(true);
    t.neighbour(
            0,
            v4(peerAddress(0)),
            PEER_PORT,
            v4(routerAddress(0)),
            ifindex[0],
            EthernetFrames.mac(mac("r", 0)),
            EthernetFrames.mac(mac("p", 0)),
            false,
            set(0, 5))
        .session(s, key(0, SELF, s), key(SELF, 0, s), 0, 0);
    t.neighbour(
        2,
        v4(peerAddress(1)),
        PEER_PORT,
        v4(routerAddress(1)),
        ifindex[1],
        EthernetFrames.mac(mac("r", 1)),
        EthernetFrames.mac(mac("p", 1)),
        false,
        set(2, 4));
    // From it: nothing to verify with.
    FastPathTable fromTwo = new FastPathTable(++generation, SELF, 64, ROUTER_PORT).auth(true);
    fromTwo.neighbour(
        2,
        v4(peerAddress(0)),
        PEER_PORT,
        v4(routerAddress(0)),
        ifindex[0],
        EthernetFrames.mac(mac("r", 0)),
        EthernetFrames.mac(mac("p", 0)),
        false,
        set(2));
    byte[] in = fromNeighbour0(frame(5, false, set(2)), 1, s);
    Run r = run(fromTwo, in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out);
    assertOnly(r.counters, FastPathCounter.UP_NO_TABLE);
    // To it: nothing to tag its copy with.
    r = run(t, in);
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertArrayEquals(in, r.out);
    assertOnly(r.counters, FastPathCounter.UP_NO_TABLE);
    assertArrayEquals(new long[3], r.forwarded);
  }

  // ---- broadcasts ----

  /** Broadcast ids: each new one, as the kernel's duplicate window lives across tests. */
  private static long broadcastId = 0x5eed_0000_0000_0000L;

  /** A broadcast of source router 5 (behind neighbour 0) with message id {@code id}. */
  private static byte[] broadcast(int hop, long id, Message m) {
    ByteBuf b = DataHeader.encode(UnpooledByteBufAllocator.DEFAULT, hop, true, 5, id, null, m);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static byte[] broadcast(int hop, long id) {
    return broadcast(hop, id, MESSAGE);
  }

  /** {@code frame} with the flag the program sets on the copy it passes up. */
  private static byte[] localOnly(byte[] frame) {
    byte[] b = frame.clone();
    b[DataHeader.FLAGS_OFFSET] |= DataHeader.FLAG_LOCAL;
    return b;
  }

  /**
   * {@link #table(boolean)} where source 5's broadcasts are taken from {@code parent} (and the
   * neighbours of {@code former}) and copied to {@code children}.
   */
  private static FastPathTable tree(
      FastPathTable t, boolean hosts, int parent, int[] children, int... former) {
    t.hosts(hosts);
    assertEquals(true, t.tree(5, parent, children, former));
    return t;
  }

  @Test
  void aBroadcastFromTheTreeParentGoesToEachChildAndNotUpWithoutHosts() throws Exception {
    long id = ++broadcastId;
    FastPathTable t = tree(table(true), false, 0, new int[] {2, 3});
    Run r = run(t, packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.BCAST);
    assertArrayEquals(new long[] {0, 1, 1}, r.forwarded);
    assertCopy(1, broadcast(4, id));
    assertCopy(2, broadcast(4, id));
    // The same broadcast again (a second path while routes change): dropped as a duplicate.
    r = run(t, packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.DROP_BCAST_DUPLICATE);
    assertArrayEquals(new long[3], r.forwarded, "no copy sent");
    // Off the tree with it, too: whatever the router's tree says, it took this one already.
    FastPathTable moved = tree(table(true), false, 2, new int[] {3});
    r = run(moved, packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.DROP_BCAST_DUPLICATE);
  }

  /**
   * A broadcast the router took itself (over TCP, say) and entered in the program's window: the
   * copy the tree parent sends afterwards is a duplicate in the kernel too, not forwarded again.
   * Entering it twice is harmless, and another source's same id is not marked.
   */
  @Test
  void aBroadcastTheRouterTookItselfIsADuplicateInTheKernel() throws Exception {
    long id = ++broadcastId;
    long other = ++broadcastId;
    FastPathTable t = tree(table(true), false, 0, new int[] {2, 3});
    // Ids with high bits set, as the router's permuted ids have: the key is the id's wire bytes.
    long marked = id | 0x8000_0000_0000_0000L;
    long elsewhere = other | 0x8000_0000_0000_0000L;
    assertEquals(
        3, fp.markBroadcasts(new int[] {5, 5, 6}, new long[] {marked, marked, elsewhere}, 3));
    Run r = run(t, packet(broadcast(5, marked), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.DROP_BCAST_DUPLICATE);
    assertArrayEquals(new long[3], r.forwarded, "no copy sent");
    // Source 5's broadcast with the id marked for source 6 is new here: copied down the tree.
    r = run(t, packet(broadcast(5, elsewhere), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.BCAST);
    assertArrayEquals(new long[] {0, 1, 1}, r.forwarded);
    assertCopy(1, broadcast(4, elsewhere));
    assertCopy(2, broadcast(4, elsewhere));
  }

  @Test
  void withLocalHostsOneCopyGoesUpMarkedForLocalDeliveryOnly() throws Exception {
    long id = ++broadcastId;
    Run r =
        run(
            tree(table(true), true, 0, new int[] {2, 3}),
            packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.BCAST_LOCAL);
    assertCopy(1, broadcast(4, id));
    assertCopy(2, broadcast(4, id));
    // Up as it came (addresses, ports, hop limit and checksums), with the local flag.
    assertArrayEquals(packet(localOnly(broadcast(5, id)), PEER_PORT, ROUTER_PORT), r.out);
  }

  @Test
  void aLeafOfTheTreeSendsNothingAndPassesUpOnlyForItsHosts() throws Exception {
    long id = ++broadcastId;
    // Hop limit 1 does not matter where there is no copy to send.
    Run r =
        run(
            tree(table(true), false, 0, new int[0]),
            packet(broadcast(1, id), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.BCAST);
    assertArrayEquals(new long[3], r.forwarded);
    id = ++broadcastId;
    r =
        run(
            tree(table(true), true, 0, new int[0]),
            packet(broadcast(1, id), PEER_PORT, ROUTER_PORT));
    assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.BCAST_LOCAL);
    assertArrayEquals(packet(localOnly(broadcast(1, id)), PEER_PORT, ROUTER_PORT), r.out);
  }

  @Test
  void broadcastsTheKernelDoesNotDecideGoUpUntouched() throws Exception {
    record Case(String name, FastPathTable table, byte[] frame, FastPathCounter counter) {}
    List<Case> cases =
        List.of(
            new Case(
                "not from the tree parent",
                tree(table(true), false, 2, new int[] {3}),
                broadcast(5, ++broadcastId),
                FastPathCounter.UP_BCAST_OFF_TREE),
            new Case(
                "a source without a tree in the table",
                table(true),
                broadcast(5, ++broadcastId),
                FastPathCounter.UP_BROADCAST),
            new Case(
                "from a former parent",
                tree(table(true), false, 2, new int[] {3}, 0),
                broadcast(5, ++broadcastId),
                FastPathCounter.UP_BCAST_GRACE),
            new Case(
                "from the parent of a source with a former one",
                tree(table(true), false, 0, new int[] {3}, 2),
                broadcast(5, ++broadcastId),
                FastPathCounter.UP_BCAST_GRACE),
            new Case(
                "hop limit 1 with children",
                tree(table(true), false, 0, new int[] {2, 3}),
                broadcast(1, ++broadcastId),
                FastPathCounter.UP_HOP_LIMIT),
            new Case(
                "a child over TCP",
                tree(table(false), false, 0, new int[] {2, 3}),
                broadcast(5, ++broadcastId),
                FastPathCounter.UP_TCP_HOP),
            new Case(
                "this router as the source",
                tree(table(true), false, 0, new int[] {2, 3}),
                frame(SELF, 5, true, null),
                FastPathCounter.UP_SOURCE));
    for (Case c : cases) {
      byte[] in = packet(c.frame, PEER_PORT, ROUTER_PORT);
      Run r = run(c.table, in);
      assertEquals(TC_ACT_UNSPEC, r.verdict, c.name + ": " + r);
      assertArrayEquals(in, r.out, c.name + ": untouched");
      assertOnly(r.counters, c.counter);
      assertArrayEquals(new long[3], r.forwarded, c.name + ": no copy sent");
    }
  }

  @Test
  void aBroadcastPassedUpFromAParentIsRecordedAndOneOffTheTreeIsNot() throws Exception {
    // From a former parent: up, and recorded, so that the copy from the new parent is dropped.
    long id = ++broadcastId;
    Run r =
        run(
            tree(table(true), false, 2, new int[] {3}, 0),
            packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.UP_BCAST_GRACE);
    r =
        run(
            tree(table(true), false, 0, new int[] {2, 3}),
            packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.DROP_BCAST_DUPLICATE);
    // Off the tree: up and not recorded, so that the parent's copy still goes through.
    id = ++broadcastId;
    r =
        run(
            tree(table(true), false, 2, new int[] {3}),
            packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.UP_BCAST_OFF_TREE);
    r =
        run(
            tree(table(true), false, 0, new int[] {2}),
            packet(broadcast(5, id), PEER_PORT, ROUTER_PORT));
    assertOnly(r.counters, FastPathCounter.BCAST);
    assertCopy(1, broadcast(4, id));
  }

  @Test
  void theLocalFlagFromTheWireIsDropped() throws Exception {
    byte[] in = packet(localOnly(broadcast(5, ++broadcastId)), PEER_PORT, ROUTER_PORT);
    Run r = run(tree(table(true), true, 0, new int[] {2, 3}), in);
    assertEquals(TC_ACT_SHOT, r.verdict, r.toString());
    assertOnly(r.counters, FastPathCounter.DROP_LOCAL_FLAG);
    assertArrayEquals(new long[3], r.forwarded);
  }

  @Test
  void anAuthenticatedBroadcastIsTaggedPerChildAndItsLocalCopyUnderTheSendersKey()
      throws Exception {
    long s = ++session;
    FastPathTable t = tree(authTable(s), true, 0, new int[] {2, 3});
    for (int i = 0; i < 4; i++) {
      long id = ++broadcastId;
      Message m = message(i);
      Run r = run(t, fromNeighbour0(broadcast(5, id, m), i + 1, s));
      assertEquals(TC_ACT_UNSPEC, r.verdict, r.toString());
      assertOnly(r.counters, FastPathCounter.BCAST_LOCAL);
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(1, broadcast(4, id, m), s));
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(2, broadcast(4, id, m), s));
      // Up with the seq it came with, tagged again under the sender's key over the new flags.
      assertArrayEquals(fromNeighbour0(localOnly(broadcast(5, id, m)), i + 1, s), r.out);
    }
  }

  /** A message of no attributes and {@code body} bytes of body. */
  private static Message body(int body) {
    return Message.builder().body(new byte[body]).build();
  }

  @Test
  void theKernelsSipHashAgreesWithTheJvmsAtEveryLengthItTakes() throws Exception {
    long s = ++session;
    FastPathTable t = tree(authTable(s), false, 0, new int[] {2, 3});
    // SipHash takes the frame and seq (the datagram less its tag); the program's loop takes
    // them 4 words a turn, then the remaining words one by one, then the last 0..7 bytes. The
    // shortest broadcast (no attributes, no body), 40 lengths after it (every remainder modulo
    // those 32 bytes), and the longest datagram the kernel verifies.
    List<Message> messages = new ArrayList<>();
    for (int body = 0; body <= 40; body++) {
      messages.add(body(body));
    }
    int longest = 0;
    while (broadcast(5, 0, body(longest + 1)).length + 16 <= FastPathTable.MAX_AUTH_BYTES) {
      longest++;
    }
    messages.add(body(longest));
    assertEquals(
        FastPathTable.MAX_AUTH_BYTES, broadcast(5, 0, body(longest)).length + 16, "longest");
    java.util.Set<Integer> remainders = new java.util.TreeSet<>();
    int shortest = Integer.MAX_VALUE;
    for (int i = 0; i < messages.size(); i++) {
      long id = ++broadcastId;
      Message m = messages.get(i);
      byte[] frame = broadcast(5, id, m);
      int hashed = frame.length + 8;
      shortest = Math.min(shortest, frame.length);
      remainders.add(hashed % 32);
      // Verified (a tag the kernel computes otherwise is a forgery to it, DROP_MAC) ...
      Run r = run(t, fromNeighbour0(frame, i + 1, s));
      assertEquals(TC_ACT_SHOT, r.verdict, hashed + " bytes: " + r);
      assertOnly(r.counters, FastPathCounter.BCAST);
      // ... and each copy's tag verifies in the JVM.
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(1, broadcast(4, id, m), s));
      assertEquals(KERNEL + 1 + i, assertTaggedCopy(2, broadcast(4, id, m), s));
    }
    assertEquals(32, remainders.size(), "every remainder modulo 32 bytes: " + remainders);
    // The program takes a frame of the header and at least 6 bytes of message (FP_MIN_MESSAGE).
    assertEquals(DataHeader.D_OFFSET + 6, shortest, "the shortest broadcast");
  }

  @Test
  void theLayoutsAgree() {
    assertEquals(FastPathTable.layout(), EbpfNative.layout());
    assertNotNull(fp);
  }
}
