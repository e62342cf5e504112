package io.bdrp.router.fastpath;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.transport.SipHash;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The table's bytes as {@code struct fp_table} lays them out: host-order numbers little-endian,
 * addresses, ports and D's words as they lie in a packet. (The C side reads them in TcProgramTest;
 * this pins the layout where no kernel is needed.)
 */
class FastPathTableTest {
  private static Inet4Address v4(String a) throws Exception {
    return (Inet4Address) InetAddress.getByName(a);
  }

  @Test
  void headerAndNeighbourFieldsSitWhereTheProgramReadsThem() throws Exception {
    FastPathTable t = new FastPathTable(7, 70, 100, 7500);
    long[] behind = {1L << 3, 1L << (99 - 64)};
    byte[] mac = {2, 0, 0, 0, 0, 1};
    byte[] peerMac = {2, 0, 0, 0, 0, 2};
    t.neighbour(3, v4("10.0.0.2"), 7600, v4("10.0.0.1"), 12, mac, peerMac, false, behind);
    byte[] b = t.bytes();
    assertEquals(FastPathTable.BYTES, b.length);
    ByteBuffer le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer be = ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN);
    assertEquals(7, le.getLong(0), "generation");
    assertEquals(70, le.getInt(8), "self");
    assertEquals(2, le.getInt(12), "words for 100 routers");
    assertEquals((1L << 36) - 1, be.getLong(16), "routers 64..99 of the last word");
    assertEquals(1L << 6, be.getLong(24), "router 70 is bit 6 of word 1");
    assertEquals(7500, be.getShort(32) & 0xffff, "UDP port in network order");
    assertEquals(1, le.getInt(36), "one neighbour");
    assertEquals(0, le.getInt(40), "auth off unless asked for");
    int n = 48;
    assertArrayEquals(new byte[] {10, 0, 0, 2}, Arrays.copyOfRange(b, n, n + 4));
    assertArrayEquals(new byte[] {10, 0, 0, 1}, Arrays.copyOfRange(b, n + 4, n + 8));
    assertEquals(7600, be.getShort(n + 8) & 0xffff);
    assertEquals(3, le.getShort(n + 10));
    assertEquals(12, le.getInt(n + 12), "ifindex");
    assertArrayEquals(mac, Arrays.copyOfRange(b, n + 16, n + 22));
    assertArrayEquals(peerMac, Arrays.copyOfRange(b, n + 22, n + 28));
    assertEquals(0, le.getInt(n + 28), "flags");
    assertArrayEquals(new byte[56], Arrays.copyOfRange(b, n + 32, n + 88), "no session");
    assertEquals(1L << 3, be.getLong(n + 88), "D word 0 as it lies in a packet");
    assertEquals(1L << 35, be.getLong(n + 96), "D word 1");
    assertEquals(600, FastPathTable.NEIGHBOUR_BYTES, "32 bytes, the session's 56, 64 words");
  }

  @Test
  void authFlagAndLinkSessionSitWhereTheProgramReadsThem() throws Exception {
    byte[] keyIn = new byte[16];
    byte[] keyOut = new byte[16];
    for (int i = 0; i < 16; i++) {
      keyIn[i] = (byte) i;
      keyOut[i] = (byte) (0xf0 + i);
    }
    Inet4Address a = v4("10.0.0.1");
    FastPathTable t = new FastPathTable(7, 1, 8, 7500).auth(true);
    t.neighbour(2, a, 1, a, 1, new byte[6], new byte[6], false, new long[1]);
    t.neighbour(3, a, 1, a, 1, new byte[6], new byte[6], false, new long[1])
        .session(9, keyIn, keyOut, 41, Long.MIN_VALUE + 5);
    byte[] b = t.bytes();
    ByteBuffer le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(1, le.getInt(40), "auth = mac");
    assertTrue(t.auth());
    int first = 48;
    assertArrayEquals(new byte[56], Arrays.copyOfRange(b, first + 32, first + 88), "untouched");
    int n = 48 + FastPathTable.NEIGHBOUR_BYTES;
    assertEquals(SipHash.k0(keyIn), le.getLong(n + 32), "key_in k0");
    assertEquals(SipHash.k1(keyIn), le.getLong(n + 40), "key_in k1");
    assertEquals(SipHash.k0(keyOut), le.getLong(n + 48), "key_out k0");
    assertEquals(SipHash.k1(keyOut), le.getLong(n + 56), "key_out k1");
    assertEquals(9, le.getLong(n + 64), "session");
    assertEquals(41, le.getLong(n + 72), "JVM-domain floor");
    assertEquals(Long.MIN_VALUE + 5, le.getLong(n + 80), "kernel-domain floor");
    assertEquals(0, le.getInt(44), "no local hosts unless told");
    assertFalse(t.auth(false).auth());
    assertEquals(0, ByteBuffer.wrap(t.bytes()).order(ByteOrder.LITTLE_ENDIAN).getInt(40));
  }

  @Test
  void broadcastTreesAndHostsSitWhereTheProgramReadsThem() throws Exception {
    Inet4Address a = v4("10.0.0.1");
    FastPathTable t = new FastPathTable(7, 1, 100, 7500).hosts(true);
    for (int r : new int[] {4, 0, 9}) {
      t.neighbour(r, a, 1, a, 1, new byte[6], new byte[6], false, new long[2]);
    }
    assertTrue(t.tree(99, 9, new int[] {0, 4}, new int[] {4, 50}));
    assertFalse(t.tree(5, 0, new int[] {4, 50}, new int[0]), "a child past the table");
    assertTrue(t.tree(6, 50, new int[0], new int[0]), "a parent past the table");
    ByteBuffer le = ByteBuffer.wrap(t.bytes()).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(1, le.getInt(44), "local hosts");
    int tree = 48 + FastPathTable.MAX_NEIGHBOURS * FastPathTable.NEIGHBOUR_BYTES;
    int at = tree + 99 * 16;
    assertEquals(0b011, le.getInt(at), "children: neighbours 0 (router 4) and 1 (router 0)");
    assertEquals(0b001, le.getInt(at + 4), "former parents: router 4; router 50 is none");
    assertEquals(2, le.get(at + 8), "parent: neighbour 2 (router 9)");
    for (int s : new int[] {0, 5, 6, 98, 4095}) {
      assertEquals(0xff, le.get(tree + s * 16 + 8) & 0xff, "source " + s + ": no parent");
      assertEquals(0, le.getInt(tree + s * 16), "source " + s + ": no children");
    }
    assertEquals(FastPathTable.BYTES, tree + 4096 * 16);
    assertThrows(IllegalArgumentException.class, () -> t.tree(100, 0, new int[0], new int[0]));
  }

  @Test
  void badSessionsAreRefused() throws Exception {
    Inet4Address a = v4("10.0.0.1");
    byte[] k = new byte[16];
    FastPathTable t = new FastPathTable(1, 0, 8, 7500).auth(true);
    assertThrows(IllegalStateException.class, () -> t.session(1, k, k, 0, 0));
    t.neighbour(1, a, 1, a, 1, new byte[6], new byte[6], false, new long[1]);
    assertThrows(IllegalArgumentException.class, () -> t.session(0, k, k, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> t.session(1, new byte[15], k, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> t.session(1, k, new byte[17], 0, 0));
    assertThrows(IllegalArgumentException.class, () -> t.session(1, k, k, -1, 0));
    assertThrows(IllegalArgumentException.class, () -> t.session(1, k, k, 0, 1));
    t.session(1, k, k, Long.MAX_VALUE, Long.MIN_VALUE);
  }

  @Test
  void outOfRangeArgumentsAreRefused() throws Exception {
    assertThrows(IllegalArgumentException.class, () -> new FastPathTable(1, 0, 4097, 7500));
    assertThrows(IllegalArgumentException.class, () -> new FastPathTable(1, 8, 8, 7500));
    assertThrows(IllegalArgumentException.class, () -> new FastPathTable(0, 0, 8, 7500));
    assertThrows(IllegalArgumentException.class, () -> new FastPathTable(1, 0, 8, 0));
    FastPathTable t = new FastPathTable(1, 0, 8, 7500);
    Inet4Address a = v4("10.0.0.1");
    assertThrows(
        IllegalArgumentException.class,
        () -> t.neighbour(1, a, 1, a, 1, new byte[5], new byte[6], false, new long[1]));
    for (int i = 0; i < FastPathTable.MAX_NEIGHBOURS; i++) {
      t.neighbour(i + 1, a, 1, a, 1, new byte[6], new byte[6], false, new long[1]);
    }
    assertThrows(
        IllegalStateException.class,
        () -> t.neighbour(40, a, 1, a, 1, new byte[6], new byte[6], false, new long[1]));
  }
}
