package io.bdrp.transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What one router did with a trace copy of a message (see {@code docs/trace.md}): where the copy
 * came from, the copies it sent on and to which routers, how many of its local hosts the message
 * matches exactly (and which, when the tracing user may see them), and every drop with its reason.
 * Routers send it towards the ingress in a TRACE_REPORT frame ({@link TraceFrames}); the ingress
 * hands every report it collected to the client in a TRACE_RESULT. Immutable; the constructor
 * checks every field against its wire field and the caps below, so any report that exists can be
 * encoded.
 *
 * <pre>
 * report body (big-endian):
 *   router u16, from u16 (0xFFFF: the ingress, no neighbour), hop limit u8, flags u8
 *   c u16 copies; each: neighbour u16, status u8, fast path u8, k u16, k routers u16
 *   matching u32, h u8 hosts (at most 16); each: host id u32, name (u8 length, UTF-8, at most 64)
 *   r u8 drops (at most 16); each: reason (u8 length, ASCII), count u32, k u16, k routers u16
 *
 * flags:     0x01 ingress, 0x02 broadcast, 0x04 local (this router in D, or a broadcast),
 *            0x08 hosts named (the tracing user may see host names)
 * status:    0 sent, 1 dropped (the link did not take it)
 * fast path: 1 the kernel fast path would have forwarded the real DATA packet here without the
 *            JVM (it is loaded; a transit packet by D, not a broadcast, that came by UDP with hop
 *            limit above 1, and every next hop's DATA goes by UDP); 0 the JVM forwards it
 * </pre>
 *
 * @param router the reporting router
 * @param from the neighbour the copy came from, or -1 at the ingress
 * @param hopLimit the hop limit of the copy as it arrived (at the ingress: the one it starts with)
 * @param flags {@link #INGRESS}, {@link #BROADCAST}, {@link #LOCAL}, {@link #NAMED}
 * @param copies the copies sent on, one per next hop (or tree child)
 * @param matching local hosts whose predicate the message satisfies exactly (0 unless local)
 * @param hosts the first of them, with names when {@link #NAMED}, at most {@link #MAX_HOSTS}
 * @param drops what went nowhere, and why, at most {@link #MAX_DROPS} kinds
 */
public record TraceReport(
    int router,
    int from,
    int hopLimit,
    int flags,
    List<Copy> copies,
    long matching,
    List<Host> hosts,
    List<Dropped> drops) {
  /** Flag: the report of the ingress router. */
  public static final int INGRESS = 0x01;

  /** Flag: the copy travelled as a broadcast down the source's tree. */
  public static final int BROADCAST = 0x02;

  /** Flag: the message was matched against this router's hosts (in D, or a broadcast). */
  public static final int LOCAL = 0x04;

  /** Flag: host names are given (the tracing user's permissions allow it). */
  public static final int NAMED = 0x08;

  /** Most hosts a report lists; {@link #matching} counts them all. */
  public static final int MAX_HOSTS = 16;

  /** Most bytes of UTF-8 of a host name in a report (longer ones are cut). */
  public static final int MAX_HOST_NAME_BYTES = 64;

  /** Most kinds of drop a report lists. */
  public static final int MAX_DROPS = 16;

  /** Most routers one copy or one drop names (the routers of a network). */
  public static final int MAX_ROUTERS = 0xFFFF;

  public TraceReport {
    Frames.checkU16("router", router);
    if (from != -1) {
      Frames.checkU16("from", from);
    }
    Frames.checkU8("hopLimit", hopLimit);
    Frames.checkU8("flags", flags);
    copies = List.copyOf(copies);
    Frames.checkU16("copies", copies.size());
    if (matching < 0 || matching > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("matching " + matching + " outside 0..2^32-1");
    }
    hosts = List.copyOf(hosts);
    if (hosts.size() > MAX_HOSTS || hosts.size() > matching) {
      throw new IllegalArgumentException(
          hosts.size() + " hosts listed: more than " + Math.min(MAX_HOSTS, matching));
    }
    drops = List.copyOf(drops);
    if (drops.size() > MAX_DROPS) {
      throw new IllegalArgumentException(drops.size() + " drops: more than " + MAX_DROPS);
    }
  }

  /** Whether this is the ingress's report. */
  public boolean ingress() {
    return (flags & INGRESS) != 0;
  }

  /** Whether the copy was a broadcast. */
  public boolean broadcast() {
    return (flags & BROADCAST) != 0;
  }

  /** Whether the message was matched here against local hosts (this router in D, or broadcast). */
  public boolean local() {
    return (flags & LOCAL) != 0;
  }

  /** Whether the hosts carry names. */
  public boolean named() {
    return (flags & NAMED) != 0;
  }

  /** Copies that the links took (each is answered by a report of its neighbour). */
  public int sent() {
    int n = 0;
    for (Copy c : copies) {
      if (c.sent()) {
        n++;
      }
    }
    return n;
  }

  /**
   * One copy sent on.
   *
   * @param neighbour the next hop
   * @param sent whether the link took it (false: dropped, also listed in {@link #drops} as {@code
   *     link})
   * @param fastPath whether the kernel fast path would have forwarded the real DATA packet (and so
   *     this copy) without the router's JVM
   * @param routers the routers of D this copy carries, ascending; empty for a broadcast copy
   */
  public record Copy(int neighbour, boolean sent, boolean fastPath, int[] routers) {
    public Copy {
      Frames.checkU16("neighbour", neighbour);
      routers = checkRouters(routers);
    }

    @Override
    public int[] routers() {
      return routers.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Copy c
          && neighbour == c.neighbour
          && sent == c.sent
          && fastPath == c.fastPath
          && Arrays.equals(routers, c.routers);
    }

    @Override
    public int hashCode() {
      return Objects.hash(neighbour, sent, fastPath, Arrays.hashCode(routers));
    }

    @Override
    public String toString() {
      return "Copy[neighbour="
          + neighbour
          + ", sent="
          + sent
          + ", fastPath="
          + fastPath
          + ", routers="
          + Arrays.toString(routers)
          + "]";
    }
  }

  /**
   * A local host the message matches.
   *
   * @param id the host's number at its router
   * @param name its client name (cut to {@link #MAX_HOST_NAME_BYTES}), or "" when not named
   */
  public record Host(long id, String name) {
    public Host {
      if (id < 0 || id > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException("host id " + id + " outside 0..2^32-1");
      }
      name = Frames.truncateUtf8(Objects.requireNonNull(name, "name"), MAX_HOST_NAME_BYTES);
    }
  }

  /**
   * Something that went nowhere.
   *
   * @param reason the data plane's reason, lower case: {@code no_route}, {@code link}, {@code
   *     hop_limit}, {@code duplicate}, {@code not_on_tree}, {@code unknown_router}, {@code
   *     own_source}, {@code unknown_source}, {@code bad_message} (see docs/trace.md)
   * @param count how many (routers, copies or packets, as the reason counts)
   * @param routers the routers concerned where known (the routers of D without a route, the
   *     neighbour of a dropped copy), ascending; may be empty
   */
  public record Dropped(String reason, long count, int[] routers) {
    public Dropped {
      Objects.requireNonNull(reason, "reason");
      if (reason.isEmpty() || reason.length() > 32 || !reason.chars().allMatch(c -> c < 0x80)) {
        throw new IllegalArgumentException("drop reason '" + reason + "': 1..32 ASCII characters");
      }
      if (count < 0 || count > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException("drop count " + count + " outside 0..2^32-1");
      }
      routers = checkRouters(routers);
    }

    @Override
    public int[] routers() {
      return routers.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Dropped d
          && reason.equals(d.reason)
          && count == d.count
          && Arrays.equals(routers, d.routers);
    }

    @Override
    public int hashCode() {
      return Objects.hash(reason, count, Arrays.hashCode(routers));
    }

    @Override
    public String toString() {
      return "Dropped[reason="
          + reason
          + ", count="
          + count
          + ", routers="
          + Arrays.toString(routers)
          + "]";
    }
  }

  private static int[] checkRouters(int[] routers) {
    int[] r = Objects.requireNonNull(routers, "routers").clone();
    if (r.length > MAX_ROUTERS) {
      throw new IllegalArgumentException(r.length + " routers: more than " + MAX_ROUTERS);
    }
    for (int x : r) {
      Frames.checkU16("router", x);
    }
    return r;
  }

  /** Bytes of the encoded report body. */
  public int encodedLength() {
    int n = 2 + 2 + 1 + 1 + 2;
    for (Copy c : copies) {
      n += 2 + 1 + 1 + 2 + 2 * c.routers.length;
    }
    n += 4 + 1;
    for (Host h : hosts) {
      n += 4 + 1 + Frames.utf8Length(h.name());
    }
    n += 1;
    for (Dropped d : drops) {
      n += 1 + d.reason().length() + 4 + 2 + 2 * d.routers.length;
    }
    return n;
  }

  /** Writes the report body at the writer index of {@code out}. */
  public void encode(io.netty.buffer.ByteBuf out) {
    out.writeShort(router);
    out.writeShort(from < 0 ? 0xFFFF : from);
    out.writeByte(hopLimit);
    out.writeByte(flags);
    out.writeShort(copies.size());
    for (Copy c : copies) {
      out.writeShort(c.neighbour());
      out.writeByte(c.sent() ? 0 : 1);
      out.writeByte(c.fastPath() ? 1 : 0);
      writeRouters(out, c.routers);
    }
    out.writeInt((int) matching);
    out.writeByte(hosts.size());
    for (Host h : hosts) {
      out.writeInt((int) h.id());
      Frames.writeShortString(out, h.name());
    }
    out.writeByte(drops.size());
    for (Dropped d : drops) {
      Frames.writeShortString(out, d.reason());
      out.writeInt((int) d.count());
      writeRouters(out, d.routers);
    }
  }

  private static void writeRouters(io.netty.buffer.ByteBuf out, int[] routers) {
    out.writeShort(routers.length);
    for (int r : routers) {
      out.writeShort(r);
    }
  }

  /**
   * Reads a report body from {@code r}, checking every count against what remains and its cap
   * before allocating for it.
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} if it does not decode
   */
  public static TraceReport decode(FrameReader r) {
    int router = r.u16();
    int from = r.u16();
    int hopLimit = r.u8();
    int flags = r.u8();
    int at = r.offset();
    int nCopies = r.u16();
    r.requireItems(at, nCopies, "copies", 6, 0);
    List<Copy> copies = new ArrayList<>(nCopies);
    for (int i = 0; i < nCopies; i++) {
      int neighbour = r.u16();
      int statusAt = r.offset();
      int status = r.u8();
      int fast = r.u8();
      if (status > 1 || fast > 1) {
        throw r.malformed(statusAt, "copy status " + status + " or fast path " + fast);
      }
      copies.add(new Copy(neighbour, status == 0, fast == 1, readRouters(r)));
    }
    long matching = r.u32();
    at = r.offset();
    int nHosts = r.u8();
    r.checkLimit(at, "hosts", nHosts, Math.min(MAX_HOSTS, matching));
    List<Host> hosts = new ArrayList<>(nHosts);
    for (int i = 0; i < nHosts; i++) {
      long id = r.u32();
      at = r.offset();
      String name = r.shortString("host name");
      r.checkLimit(at, "host name bytes", Frames.utf8Length(name), MAX_HOST_NAME_BYTES);
      hosts.add(new Host(id, name));
    }
    at = r.offset();
    int nDrops = r.u8();
    r.checkLimit(at, "drops", nDrops, MAX_DROPS);
    List<Dropped> drops = new ArrayList<>(nDrops);
    for (int i = 0; i < nDrops; i++) {
      at = r.offset();
      String reason = r.shortString("drop reason");
      long count = r.u32();
      try {
        drops.add(new Dropped(reason, count, readRouters(r)));
      } catch (IllegalArgumentException e) {
        throw r.malformed(at, e.getMessage());
      }
    }
    return new TraceReport(
        router, from == 0xFFFF ? -1 : from, hopLimit, flags, copies, matching, hosts, drops);
  }

  private static int[] readRouters(FrameReader r) {
    int at = r.offset();
    int k = r.u16();
    r.requireItems(at, k, "routers", 2, 0);
    int[] routers = new int[k];
    for (int i = 0; i < k; i++) {
      routers[i] = r.u16();
    }
    return routers;
  }
}
