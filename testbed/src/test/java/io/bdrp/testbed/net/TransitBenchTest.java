package io.bdrp.testbed.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.encoding.Message;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.EthernetFrames;
import io.bdrp.transport.SipHash;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The transit benchmark's authenticated datagrams: the blaster's C SipHash against the function's
 * published vectors and the routers' own, the frames it seals against the routers' check, and the
 * benchmark's reading of key logs, refusal counters and mac ÷ none figures. The C tests need a C
 * compiler and root (the helpers are compiled into /run/bdrp-testbed, as in a benchmark run).
 */
class TransitBenchTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final String KEY = "000102030405060708090a0b0c0d0e0f";

  private static Path blaster() throws IOException {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "the testbed's C helpers are compiled into /run/bdrp-testbed; run as root");
    assumeTrue(Shell.onPath("cc"), "no C compiler (cc)");
    return CPrograms.binary("bdrp-blast.c", "bdrp-blast-", "apt-get install gcc");
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  private static String siphash(Path blast, String key, byte[] message) throws IOException {
    return Shell.run(blast.toString(), "--siphash", key, HEX.formatHex(message)).trim();
  }

  @Test
  void theBlastersSipHashGivesThePublishedVectors() throws IOException {
    Path blast = blaster();
    assertEquals("726fdb47dd0e0e31", siphash(blast, KEY, bytes(0)));
    assertEquals("93f5f5799a932462", siphash(blast, KEY, bytes(8)));
    assertEquals("a129ca6149be45e5", siphash(blast, KEY, bytes(15)));
    assertEquals("958a324ceb064572", siphash(blast, KEY, bytes(63)));
  }

  @Test
  void theBlastersSipHashAgreesWithTheRoutersForEveryTailLength() throws IOException {
    Path blast = blaster();
    Random random = new Random(7);
    for (int len = 0; len <= 40; len++) {
      byte[] key = new byte[16];
      random.nextBytes(key);
      byte[] message = new byte[len];
      random.nextBytes(message);
      long want = SipHash.hash(SipHash.k0(key), SipHash.k1(key), message, 0, len);
      assertEquals(
          String.format("%016x", want),
          siphash(blast, HEX.formatHex(key), message),
          "message of " + len + " bytes");
    }
  }

  /** A DATA datagram from 10.0.0.1 to 10.0.0.2 with room for the trailer, as an Ethernet frame. */
  private static byte[] dataFrame(byte[] frame) throws IOException {
    return EthernetFrames.udp(
        EthernetFrames.mac("02:00:00:00:00:02"),
        EthernetFrames.mac("02:00:00:00:00:01"),
        (Inet4Address) InetAddress.getByName("10.0.0.1"),
        7500,
        (Inet4Address) InetAddress.getByName("10.0.0.2"),
        7500,
        Arrays.copyOf(frame, frame.length + DatagramAuth.MAC_TRAILER_BYTES));
  }

  private static byte[] dataFrameBytes() {
    Message m = Message.builder().put("bench", "transit").body(new byte[37]).build();
    ByteBuf b =
        DataHeader.encode(UnpooledByteBufAllocator.DEFAULT, 64, false, 0, 1, new long[] {4}, m);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  @Test
  void sealedFramesAreWhatTheRoutersOwnCodeWritesAndItsCheckTakesEachOnce() throws IOException {
    Path blast = blaster();
    byte[] frame = dataFrameBytes();
    byte[] key = new byte[16];
    new Random(11).nextBytes(key);
    long first = TransitBench.FIRST_SEQ;
    List<String> lines =
        Shell.run(
                blast.toString(),
                "--seal",
                HEX.formatHex(dataFrame(frame)),
                HEX.formatHex(key),
                Long.toString(first),
                "3")
            .lines()
            .toList();
    assertEquals(3, lines.size());
    DatagramAuth.Opener opener = new DatagramAuth.Opener(UdpProtection.MAC, key);
    for (int i = 0; i < 3; i++) {
      // The datagram as the Java side seals it: frame, seq big-endian, tag little-endian; the
      // Ethernet frame around it with its UDP checksum computed by the Java side too.
      ByteBuffer d = ByteBuffer.allocate(frame.length + 16);
      d.put(frame).putLong(first + i);
      long tag = SipHash.hash(SipHash.k0(key), SipHash.k1(key), d.array(), 0, frame.length + 8);
      d.order(ByteOrder.LITTLE_ENDIAN).putLong(tag);
      byte[] want =
          EthernetFrames.udp(
              EthernetFrames.mac("02:00:00:00:00:02"),
              EthernetFrames.mac("02:00:00:00:00:01"),
              (Inet4Address) InetAddress.getByName("10.0.0.1"),
              7500,
              (Inet4Address) InetAddress.getByName("10.0.0.2"),
              7500,
              d.array());
      byte[] got = HEX.parseHex(lines.get(i));
      assertArrayEquals(want, got, "packet " + i);

      ByteBuf datagram = Unpooled.wrappedBuffer(got, EthernetFrames.HEADERS, frame.length + 16);
      ByteBuf opened = opener.open(UnpooledByteBufAllocator.DEFAULT, datagram);
      assertNotNull(opened, "packet " + i + " refused: " + opener.refusal());
      assertArrayEquals(frame, ByteBufUtil.getBytes(opened));
    }
    ByteBuf again =
        Unpooled.wrappedBuffer(
            HEX.parseHex(lines.get(0)), EthernetFrames.HEADERS, frame.length + 16);
    assertNull(opener.open(UnpooledByteBufAllocator.DEFAULT, again));
    assertEquals(DatagramAuth.Refusal.REPLAY, opener.refusal());
  }

  @Test
  void aFrameWithoutUdpChecksumStaysWithoutOne() throws IOException {
    Path blast = blaster();
    byte[] f = dataFrame(dataFrameBytes());
    f[EthernetFrames.HEADERS - 2] = 0; // as the latency probe sends them
    f[EthernetFrames.HEADERS - 1] = 0;
    byte[] got =
        HEX.parseHex(Shell.run(blast.toString(), "--seal", HEX.formatHex(f), KEY, "5", "1").trim());
    assertEquals(0, got[EthernetFrames.HEADERS - 2]);
    assertEquals(0, got[EthernetFrames.HEADERS - 1]);
    assertEquals(5, ByteBuffer.wrap(got, got.length - 16, 8).getLong());
  }

  @Test
  void theKeyOfALinkIsTheLastLoggedForThatRouterAndNeighbour() {
    String a = "11".repeat(16);
    String b = "22".repeat(16);
    String c = "33".repeat(16);
    List<String> log =
        List.of(
            "router 0 neighbour 1 session 1 out " + a + " in " + b,
            "router 1 neighbour 0 session 1 out " + b + " in " + a,
            "router 0 neighbour 2 session 2 out " + c + " in " + c,
            "router 0 neighbour 1 session 3 out " + c + " in " + a);
    assertEquals(c, TransitBench.outKey(log, 0, 1));
    assertEquals(b, TransitBench.outKey(log, 1, 0));
    assertNull(TransitBench.outKey(log, 0, 3));
    assertNull(TransitBench.outKey(List.of("router 0 neighbour 1 session 1 out 11 in 22"), 0, 1));
  }

  @Test
  void refusedCountsForgedReplayedAndShortDatagramsButNotStrangers() {
    String metrics =
        """
        # HELP bdrp_udp_datagrams_dropped_total Datagrams dropped on arrival
        # TYPE bdrp_udp_datagrams_dropped_total counter
        bdrp_udp_datagrams_dropped_total{reason="mac"} 3.0
        bdrp_udp_datagrams_dropped_total{reason="replay"} 4
        bdrp_udp_datagrams_dropped_total{reason="short"} 1.0
        bdrp_udp_datagrams_dropped_total{reason="unknown_sender"} 100.0
        """;
    assertEquals(8, TransitBench.refused(metrics));
    assertEquals(0, TransitBench.refused("bdrp_unicast_routes 2\n"));
  }

  private static TransitBench.Point point(String auth, double rate, long delivered, double jvm) {
    return new TransitBench.Point(
        "jvm", auth, 1, rate, (long) rate, delivered, 1.0, 1.0, 2.0, jvm, 0);
  }

  @Test
  void theCostOfAuthenticationIsMacOverNoneOfTheSamePath() {
    List<TransitBench.Latency> macHop =
        List.of(new TransitBench.Latency("jvm transit hop", 500, 500, 150, 200, 300));
    List<TransitBench.Latency> noneHop =
        List.of(new TransitBench.Latency("jvm transit hop", 500, 500, 100, 150, 200));
    TransitBench.Result mac =
        new TransitBench.Result(
            "jvm",
            "mac",
            List.of(point("mac", 10_000, 10_000, 0.2), point("mac", 20_000, 15_000, 0.5)),
            macHop);
    TransitBench.Result none =
        new TransitBench.Result(
            "jvm",
            "none",
            List.of(point("none", 10_000, 10_000, 0.1), point("none", 20_000, 20_000, 0.2)),
            noneHop);
    String md = TransitBench.authCost(List.of(mac, none));
    // Ceiling 10,000 against 20,000; CPU at 10,000 pkt/s, the highest rate both lost nothing at:
    // JVM 20 us against 10 us per packet; latency 150 against 100, 300 against 200.
    assertTrue(md.contains("| jvm | 0.50× | 10,000 | 1.00× | 2.00× | 1.50× | 1.50× |"), md);
    assertEquals("", TransitBench.authCost(List.of(mac)));
  }

  @Test
  void theRoutersAreConfiguredWithTheAuthenticationAsked() {
    Emulator.Network n = Emulator.plan(TransitBench.topology(1), "t", 0);
    for (String auth : List.of("mac", "none")) {
      String yaml =
          NamespaceFederation.config(
              n,
              1,
              NamespaceFederation.routerYaml(Map.of("broadcastFraction", 1), "ebpf", auth),
              "udp");
      RouterConfig c = RouterConfig.parse(yaml, "router-1.yaml");
      assertEquals(
          UdpProtection.valueOf(auth.toUpperCase(java.util.Locale.ROOT)), c.udpProtection());
    }
  }
}
