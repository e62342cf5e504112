package io.bdrp.router.fastpath;

import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One version of the forwarding state the TC program reads, laid out as {@code struct fp_table} in
 * {@code sidecar/src/main/c/fastpath.h} (little-endian, as the kernel's maps on x86_64; the
 * addresses, ports and D's words in network order, as they lie in a packet).
 */
public final class FastPathTable {
  /** Neighbours a table holds. */
  public static final int MAX_NEIGHBOURS = 32;

  /** Words of D the program handles: routers 0..4095. */
  public static final int MAX_WORDS = 64;

  static final int NEIGHBOUR_BYTES = 32 + 8 * MAX_WORDS;
  static final int HEADER_BYTES = 40;

  /** Bytes of a table. */
  public static final int BYTES = HEADER_BYTES + MAX_NEIGHBOURS * NEIGHBOUR_BYTES;

  private final ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final int words;
  private int count;

  /**
   * @param generation increases with every table the router writes; 0 is the empty table's
   * @param self this router's number
   * @param maxRouters router numbers are below this; at most 64 × {@link #MAX_WORDS}
   * @param udpPort this router's UDP port
   */
  public FastPathTable(long generation, int self, int maxRouters, int udpPort) {
    if (maxRouters < 1 || maxRouters > 64 * MAX_WORDS) {
      throw new IllegalArgumentException(
          "maxRouters " + maxRouters + " outside 1.." + 64 * MAX_WORDS);
    }
    if (self < 0 || self >= maxRouters) {
      throw new IllegalArgumentException("router " + self + " outside 0.." + (maxRouters - 1));
    }
    if (generation <= 0 || udpPort <= 0 || udpPort > 0xffff) {
      throw new IllegalArgumentException("generation and UDP port must be positive");
    }
    words = (maxRouters + 63) >>> 6;
    int lastBits = maxRouters - 64 * (words - 1);
    long lastMask = lastBits == 64 ? -1L : (1L << lastBits) - 1;
    b.putLong(0, generation);
    b.putInt(8, self);
    b.putInt(12, words);
    b.putLong(16, Long.reverseBytes(lastMask));
    b.putLong(24, Long.reverseBytes(1L << (self & 63)));
    b.putShort(32, Short.reverseBytes((short) udpPort));
    b.putInt(36, 0);
  }

  /**
   * Adds a neighbour.
   *
   * @param router its number
   * @param address its address, where its DATA comes from and its copies go (IPv4)
   * @param port its UDP port
   * @param local this router's address on the link to it, the source of its copies
   * @param ifindex the interface towards it when DATA to it goes by UDP; 0 when it goes over TCP
   *     (packets with routers behind it then go up)
   * @param localMac this router's Ethernet address on that interface (6 bytes; zeros on loopback)
   * @param mac the neighbour's Ethernet address (6 bytes; zeros on loopback)
   * @param noL2 DATA to it goes by UDP but its Ethernet address is not known yet ({@code ifindex}
   *     is 0 meanwhile, and packets that need it go up counted as {@code UP_NO_NEIGH})
   * @param behind the routers whose next hop it is, one bit each, at most {@link #MAX_WORDS} words
   */
  public FastPathTable neighbour(
      int router,
      Inet4Address address,
      int port,
      Inet4Address local,
      int ifindex,
      byte[] localMac,
      byte[] mac,
      boolean noL2,
      long[] behind) {
    if (localMac.length != 6 || mac.length != 6) {
      throw new IllegalArgumentException("Ethernet addresses have 6 bytes");
    }
    if (count == MAX_NEIGHBOURS) {
      throw new IllegalStateException("more than " + MAX_NEIGHBOURS + " neighbours");
    }
    int at = HEADER_BYTES + count * NEIGHBOUR_BYTES;
    b.put(at, address.getAddress());
    b.put(at + 4, local.getAddress());
    b.putShort(at + 8, Short.reverseBytes((short) port));
    b.putShort(at + 10, (short) router);
    b.putInt(at + 12, ifindex);
    b.put(at + 16, localMac);
    b.put(at + 22, mac);
    b.putInt(at + 28, noL2 ? 1 : 0);
    for (int w = 0; w < Math.min(behind.length, words); w++) {
      b.putLong(at + 32 + 8 * w, Long.reverseBytes(behind[w]));
    }
    count++;
    b.putInt(36, count);
    return this;
  }

  /** Neighbours added. */
  public int count() {
    return count;
  }

  /** The table's bytes, for {@link EbpfNative#setTable}. */
  public byte[] bytes() {
    return b.array().clone();
  }

  /** The layout as described here, to compare with {@link EbpfNative#layout()}. */
  static String layout() {
    return "table="
        + BYTES
        + " neigh="
        + NEIGHBOUR_BYTES
        + " mask=32 neighbours="
        + MAX_NEIGHBOURS
        + " words="
        + MAX_WORDS
        + " counters="
        + FastPathCounter.values().length
        + " priority=189";
  }
}
