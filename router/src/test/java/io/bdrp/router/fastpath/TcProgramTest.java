package io.bdrp.router.fastpath;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.encoding.Message;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.EthernetFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
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
      sh("ip", "-n", ROUTER_NS, "link", "set", r, "up");
      sh("ip", "-n", PEERS_NS, "link", "set", p, "up");
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
    ByteBuf b =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT,
            hop,
            broadcast,
            source,
            0x1122334455667788L,
            d,
            MESSAGE);
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
    ByteBuffer b = ByteBuffer.allocate(2048);
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
    byte[] wide = frame(5, false, new long[] {1L << 2, 1L});
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

  @Test
  void theLayoutsAgree() {
    assertEquals(FastPathTable.layout(), EbpfNative.layout());
    assertNotNull(fp);
  }
}
