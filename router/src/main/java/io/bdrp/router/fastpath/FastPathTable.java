package io.bdrp.router.fastpath;

import io.bdrp.transport.SipHash;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One version of the forwarding state the TC program reads, laid out as {@code struct fp_table} in
 * {@code sidecar/src/main/c/fastpath.h} (little-endian, as the kernel's maps on x86_64; the
 * addresses, ports and D's words in network order, as they lie in a packet).
 *
 * <p>For authenticated UDP links ({@code udpProtection: mac}) the table is marked with {@link
 * #auth(boolean) auth(true)} and each neighbour gets its link session's keys with {@link #session};
 * the program then verifies every datagram from a neighbour before it acts on it and tags every
 * copy it sends (docs/router.md, "Authenticated UDP links in the kernel").
 */
public final class FastPathTable {
  /** Neighbours a table holds. */
  public static final int MAX_NEIGHBOURS = 32;

  /** Words of D the program handles: routers 0..4095. */
  public static final int MAX_WORDS = 64;

  /**
   * The longest UDP payload (frame, seq and tag) the program verifies with auth on; a longer one
   * goes up unverified (counted {@link FastPathCounter#UP_LARGE}), for the router to verify.
   */
  public static final int MAX_AUTH_BYTES = 2048 + 16;

  static final int KEYS = 32;
  static final int MASK = KEYS + 7 * 8;
  static final int NEIGHBOUR_BYTES = MASK + 8 * MAX_WORDS;
  static final int AUTH = 40;
  static final int HOSTS = 44;
  static final int HEADER_BYTES = 48;

  /** Source routers whose broadcast trees a table holds: as many as D's words name. */
  public static final int MAX_SOURCES = 64 * MAX_WORDS;

  static final int TREE = HEADER_BYTES + MAX_NEIGHBOURS * NEIGHBOUR_BYTES;
  static final int TREE_ENTRY = 16;
  static final int NO_PARENT = 0xff;

  /** Bytes of a table. */
  public static final int BYTES = TREE + MAX_SOURCES * TREE_ENTRY;

  private final ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final int words;
  private final int maxRouters;
  private final int[] routers = new int[MAX_NEIGHBOURS]; // by table index
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
    this.maxRouters = maxRouters;
    for (int s = 0; s < MAX_SOURCES; s++) {
      b.put(TREE + s * TREE_ENTRY + 8, (byte) NO_PARENT);
    }
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
    routers[count] = router;
    for (int w = 0; w < Math.min(behind.length, words); w++) {
      b.putLong(at + MASK + 8 * w, Long.reverseBytes(behind[w]));
    }
    count++;
    b.putInt(36, count);
    return this;
  }

  /**
   * Whether the program authenticates the UDP links of this table ({@code udpProtection: mac}):
   * with {@code true} it expects every datagram from a neighbour to end with seq and tag, verifies
   * them under the neighbour's {@link #session} keys before anything else, drops forgeries and
   * replays, and tags each copy it sends; a neighbour without a session has its packets go up. With
   * {@code false} (the default) datagrams carry no trailer and the session fields are not read.
   */
  public FastPathTable auth(boolean mac) {
    b.putInt(AUTH, mac ? 1 : 0);
    return this;
  }

  /** Whether {@link #auth(boolean) auth(true)} was set. */
  public boolean auth() {
    return b.getInt(AUTH) != 0;
  }

  /**
   * The current UDP link session of the neighbour added last by {@link #neighbour}, for a table
   * with {@link #auth(boolean) auth} on.
   *
   * <p>The kernel keeps per neighbour (across tables) the sequence counter of the copies it sends
   * and its replay windows. The first packet from or to the neighbour under a table naming a newer
   * {@code session} than the kernel holds resets them: the copies' counter starts again at 2<sup>63
   * </sup> + 1 and the windows at the two floors (everything up to a floor counts as seen). A table
   * naming an older session than the kernel holds is one being replaced: the neighbour's packets go
   * up and copies to it are not sent (counted {@link FastPathCounter#REDIRECT_FAILED}).
   *
   * <p>So a router writes a table with a link session's keys as soon as it has them, before it
   * takes datagrams of that session (floors 0, 0), and names that session and those keys in every
   * table it writes until the link's next session; later floors are only read if the kernel sees
   * the session first under that table. Until a table names the session, the neighbour's datagrams
   * go up unverified ({@link FastPathCounter#UP_NO_TABLE}) and the router checks them alone; if it
   * writes the session's first table only after taking some, the floors must be its windows' highs
   * then (what it takes between reading them and the swap could pass the kernel once more).
   *
   * @param session the link session, greater than 0 and increasing with every session of this
   *     router
   * @param keyIn K<sub>neighbour→self</sub>, the 16-byte key of the neighbour's datagrams to this
   *     router
   * @param keyOut K<sub>self→neighbour</sub>, the 16-byte key of this router's datagrams to it
   * @param jvmFloor the highest seq the router has accepted from the neighbour in the JVM domain
   *     (top bit clear), 0 when none
   * @param kernelFloor the highest seq it has accepted from the neighbour in the kernel domain (top
   *     bit set), 0 when none
   */
  public FastPathTable session(
      long session, byte[] keyIn, byte[] keyOut, long jvmFloor, long kernelFloor) {
    if (count == 0) {
      throw new IllegalStateException("no neighbour to give a session to");
    }
    if (session <= 0) {
      throw new IllegalArgumentException("session " + session + " must be positive");
    }
    if (keyIn.length != 16 || keyOut.length != 16) {
      throw new IllegalArgumentException("link keys have 16 bytes");
    }
    if (jvmFloor < 0) {
      throw new IllegalArgumentException("a JVM-domain seq has the top bit clear: " + jvmFloor);
    }
    if (kernelFloor > 0) {
      throw new IllegalArgumentException(
          "a kernel-domain seq has the top bit set: " + Long.toUnsignedString(kernelFloor));
    }
    int at = HEADER_BYTES + (count - 1) * NEIGHBOUR_BYTES + KEYS;
    b.putLong(at, SipHash.k0(keyIn));
    b.putLong(at + 8, SipHash.k1(keyIn));
    b.putLong(at + 16, SipHash.k0(keyOut));
    b.putLong(at + 24, SipHash.k1(keyOut));
    b.putLong(at + 32, session);
    b.putLong(at + 40, jvmFloor);
    b.putLong(at + 48, kernelFloor);
    return this;
  }

  /**
   * Whether this router has local hosts: the program then passes up one copy of each broadcast it
   * forwards, marked for local delivery only; without, it passes none (nothing would match).
   */
  public FastPathTable hosts(boolean any) {
    b.putInt(HOSTS, any ? 1 : 0);
    return this;
  }

  /**
   * The broadcast tree of source router {@code source} at this router, as {@code
   * ForwardingTable.broadcast} decides: its broadcasts are taken from neighbour {@code parent} (the
   * next hop towards the source; -1: none) and from the neighbours of {@code former} (former next
   * hops within their grace), and copied to the neighbours of {@code children} other than the one
   * they came from. Neighbours are router numbers added with {@link #neighbour} before (so call
   * this after the last one). A parent that is not in the table is taken as none, and a former
   * parent that is not needs no mark: broadcasts from either go up, for the router to judge.
   *
   * @return false, and nothing written (the source's broadcasts go up, counted {@link
   *     FastPathCounter#UP_BROADCAST}), if some child is not in the table
   */
  public boolean tree(int source, int parent, int[] children, int[] former) {
    if (source < 0 || source >= maxRouters) {
      throw new IllegalArgumentException("source " + source + " outside 0.." + (maxRouters - 1));
    }
    int childMask = 0;
    for (int c : children) {
      int i = indexOf(c);
      if (i < 0) {
        return false;
      }
      childMask |= 1 << i;
    }
    int formerMask = 0;
    for (int f : former) {
      int i = indexOf(f);
      if (i >= 0) {
        formerMask |= 1 << i;
      }
    }
    int p = parent < 0 ? -1 : indexOf(parent);
    int at = TREE + source * TREE_ENTRY;
    b.putInt(at, childMask);
    b.putInt(at + 4, formerMask);
    b.put(at + 8, (byte) (p < 0 ? NO_PARENT : p));
    return true;
  }

  private int indexOf(int router) {
    for (int i = 0; i < count; i++) {
      if (routers[i] == router) {
        return i;
      }
    }
    return -1;
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
        + " mask="
        + MASK
        + " keys="
        + KEYS
        + " auth="
        + AUTH
        + " max_auth="
        + MAX_AUTH_BYTES
        + " neighbours="
        + MAX_NEIGHBOURS
        + " words="
        + MAX_WORDS
        + " counters="
        + FastPathCounter.values().length
        + " priority=189"
        + " tree="
        + TREE
        + " tree_entry="
        + TREE_ENTRY;
  }
}
