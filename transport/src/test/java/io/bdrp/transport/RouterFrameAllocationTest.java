package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Decoding a router-link frame allocates in proportion to its bytes, as {@link
 * RouterFrameCodec#decode(ByteBuf, int, BloomParameters)} documents: at most {@link
 * RouterFrameCodec#ALLOCATION_PER_BYTE} x L + {@link RouterFrameCodec#ALLOCATION_FIXED} for a frame
 * of L bytes, whatever its counts and lengths say, on adversarial frames of every router-link type
 * (ROUTE_UPDATE with the most routes, or the largest count and no routes; PREDICATE_BATCH with the
 * most advertisements of empty or one-bit filters, whole or as changes, or the largest count and
 * nothing after it; PREDICATE_AD with costly filters; DATA with the most D words and an empty
 * message, or the most attributes; ROUTER_HELLO with the longest token, or its length and no token;
 * SEQNO_REQUEST, PREDICATE_REQUEST) and on corruptions of them. A DATA frame is "decoded" as the
 * egress router does it: {@link DataHeader#wrap}, then the message bytes by {@link
 * io.bdrp.encoding.codec.MessageCodec#decode} ({@code Wire.dataMessage}).
 *
 * <p>Guards against a decoder that allocates for a count or a length before checking that the bytes
 * it needs are there (a ROUTE_UPDATE list sized from its u16 count: 256 KiB for a 12-byte frame; a
 * PREDICATE_BATCH likewise) and against a per-item cost out of proportion to an item's bytes (an
 * advertisement in a batch is 25 bytes at least and decodes an encoded predicate; a change is 39
 * and decodes two). Measured on Temurin 25 with compressed references, in bytes allocated per frame
 * byte, compiled / interpreted (the worst case: the JIT's escape analysis only lowers it) /
 * interpreted without compressed references: ROUTE_UPDATE of 65,535 routes 3.1 / 3.1 / 3.8;
 * PREDICATE_BATCH of 65,535 empty changes 13 / 31 / 38, of empty whole advertisements 11 / 25 / 31,
 * of one-bit changes 26 / 27 / 33; PREDICATE_AD of bitmap filters 16.5 throughout; DATA of 1,024 D
 * words and an empty message 0.06, of 1,024 attributes 23 / 23 / 31; ROUTER_HELLO with the longest
 * token 2.2; SEQNO_REQUEST 3.3, PREDICATE_REQUEST 6.4 (of 24 and 10 bytes). A refused frame costs
 * its exception, about 2.5 KiB (3 KiB without compressed references), within the fixed part. The
 * figures are printed with {@code -DargLine=-Dbdrp.printAllocation=true} (add {@code -Xint} to the
 * argLine for the interpreted ones).
 */
class RouterFrameAllocationTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** The documented bound for a frame of {@code n} bytes. */
  static long bound(int n) {
    return (long) RouterFrameCodec.ALLOCATION_PER_BYTE * n + RouterFrameCodec.ALLOCATION_FIXED;
  }

  /**
   * Decodes one router-link frame as a link does: DATA through {@link DataHeader} (the header, then
   * the message, as at the egress), anything else through {@link RouterFrameCodec#decode} with no
   * frame limit of its own (the limit is {@link FrameDecoder}'s) and the default Bloom parameters.
   * Returns what it decoded, or the {@link ProtocolException} that refused the frame (null for a
   * DATA message that does not decode); leaves the reader index where it was. Any other exception
   * is thrown.
   */
  static Object decodeLinkFrame(ByteBuf frame) {
    return decodeLinkFrame(frame, true);
  }

  /** As {@link #decodeLinkFrame(ByteBuf)}; a DATA frame's message is decoded if {@code message}. */
  static Object decodeLinkFrame(ByteBuf frame, boolean message) {
    int at = frame.readerIndex();
    try {
      if (frame.readableBytes() > Frames.TYPE_OFFSET
          && frame.getUnsignedByte(at + Frames.TYPE_OFFSET) == FrameType.DATA.number()) {
        DataHeader h = new DataHeader().wrap(frame);
        return message ? Wire.dataMessage(h, frame) : h;
      }
      return RouterFrameCodec.decode(frame, Integer.MAX_VALUE, BloomParameters.DEFAULT);
    } catch (ProtocolException e) {
      return e;
    } finally {
      frame.readerIndex(at);
    }
  }

  /**
   * Bytes this thread allocates decoding {@code frame} a second time (the first links the code), or
   * -1 when the JVM cannot tell.
   */
  static long allocatedByDecode(ByteBuf frame, boolean message) {
    if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
      return -1;
    }
    decodeLinkFrame(frame, message);
    long before = THREADS.getCurrentThreadAllocatedBytes();
    decodeLinkFrame(frame, message);
    return THREADS.getCurrentThreadAllocatedBytes() - before;
  }

  /** Fails unless decoding {@code input} allocates within the bound; returns the bytes. */
  static long assertWithinBound(byte[] input, String what) {
    ByteBuf frame = Unpooled.wrappedBuffer(input);
    try {
      long used = allocatedByDecode(frame, true);
      assertTrue(
          used <= bound(input.length),
          () ->
              what
                  + ": decoding "
                  + input.length
                  + " bytes allocated "
                  + used
                  + ", allowed "
                  + bound(input.length));
      return used;
    } finally {
      frame.release();
    }
  }

  /** A whole frame of {@code type} around {@code body}, whatever the body holds. */
  static byte[] frame(FrameType type, Consumer<ByteBuf> body) {
    ByteBuf out = Unpooled.buffer();
    try {
      int start = Frames.beginFrame(out, type);
      body.accept(out);
      Frames.endFrame(out, start);
      return ByteBufUtil.getBytes(out);
    } finally {
      out.release();
    }
  }

  /** A ROUTE_UPDATE of {@code count} routes, the last with a reserved flag bit if {@code bad}. */
  static byte[] routeUpdate(int count, boolean bad) {
    return frame(
        FrameType.ROUTE_UPDATE,
        o -> {
          o.writeShort(1).writeShort(count);
          for (int i = 0; i < count; i++) {
            o.writeShort(i).writeLong(i).writeInt(i).writeShort(1);
            o.writeByte(bad && i == count - 1 ? 2 : 0);
          }
        });
  }

  /** A frame whose u16 count (after a u16 sender) is the largest, with nothing after it. */
  static byte[] maxCountNoItems(FrameType type) {
    return frame(type, o -> o.writeShort(1).writeShort(0xFFFF).writeByte(0));
  }

  /**
   * A PREDICATE_BATCH of {@code count} advertisements, each carrying {@code filters}: whole, or as
   * changes that remove and add {@code filters}.
   */
  static byte[] batch(int count, boolean changes, byte[] filters) {
    return frame(
        FrameType.PREDICATE_BATCH,
        o -> {
          o.writeShort(1).writeShort(count);
          for (int i = 0; i < count; i++) {
            o.writeByte(changes ? 1 : 0).writeShort(i).writeLong(1).writeLong(2);
            if (changes) {
              o.writeLong(1).writeBytes(filters);
            }
            o.writeBytes(filters);
          }
        });
  }

  /** A PREDICATE_AD of {@code filters}. */
  static byte[] ad(byte[] filters) {
    return frame(
        FrameType.PREDICATE_AD,
        o -> o.writeShort(1).writeShort(2).writeLong(1).writeLong(2).writeBytes(filters));
  }

  /** No filter, at the default parameters: the smallest encoded predicate (6 bytes). */
  static byte[] noFilters() {
    return EncodedPredicateCodec.toBytes(
        EncodedPredicate.ofPositions(BloomParameters.DEFAULT, List.of()));
  }

  /** {@code count} filters of one bit each, at the default parameters. */
  static byte[] oneBitFilters(int count) {
    List<char[]> fs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      fs.add(new char[] {(char) i});
    }
    return EncodedPredicateCodec.toBytes(EncodedPredicate.ofPositions(BloomParameters.DEFAULT, fs));
  }

  /** {@code count} filters in bitmap form (every bit set but one), at the default parameters. */
  static byte[] bitmapFilters(int count) {
    BloomParameters p = BloomParameters.DEFAULT;
    List<long[]> fs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long[] f = p.newFilter();
      Arrays.fill(f, -1L);
      f[i >>> 6] &= ~(1L << i);
      fs.add(f);
    }
    return EncodedPredicateCodec.toBytes(EncodedPredicate.ofFilters(p, fs));
  }

  /** A DATA frame of {@code words} D words (all set) and an empty message. */
  static byte[] dataMaxD(int words) {
    return frame(
        FrameType.DATA,
        o -> {
          o.writeByte(64).writeByte(0).writeShort(1).writeLong(1).writeShort(words);
          for (int i = 0; i < words; i++) {
            o.writeLong(-1L);
          }
          o.writeShort(0).writeInt(0); // no attribute, no body
        });
  }

  /** A DATA frame whose D is the longest list, of routers 0 up, and an empty message. */
  static byte[] dataMaxList() {
    return frame(
        FrameType.DATA,
        o -> {
          o.writeByte(64).writeByte(DataHeader.FLAG_D_LIST).writeShort(1).writeLong(1);
          o.writeShort(DataHeader.MAX_D_LIST);
          for (int r = 0; r < DataHeader.MAX_D_LIST; r++) {
            o.writeShort(r);
          }
          o.writeShort(0).writeInt(0); // no attribute, no body
        });
  }

  /** A DATA frame of one D word and a message of 1,024 boolean attributes of short names. */
  static byte[] dataManyAttributes() {
    return frame(
        FrameType.DATA,
        o -> {
          o.writeByte(64).writeByte(0).writeShort(1).writeLong(1).writeShort(1).writeLong(1);
          o.writeShort(1024);
          int tag = Message.builder().put("b", true).build().value(0).type().wireTag();
          for (int i = 0; i < 1024; i++) {
            if (i < 94) {
              o.writeByte(tag).writeByte(1).writeByte(0x21 + i).writeByte(1);
            } else {
              int j = i - 94;
              o.writeByte(tag).writeByte(2).writeByte(0x21 + j / 94).writeByte(0x21 + j % 94);
              o.writeByte(1);
            }
          }
          o.writeInt(0);
        });
  }

  /** A ROUTER_HELLO whose token length is the largest, with the token or without it. */
  static byte[] routerHello(boolean withToken) {
    return frame(
        FrameType.ROUTER_HELLO,
        o -> {
          o.writeShort(4).writeShort(1).writeLong(1).writeInt(64);
          o.writeShort(8192).writeByte(4).writeByte(0).writeShort(1);
          o.writeShort(Frames.MAX_TOKEN_BYTES);
          if (withToken) {
            o.writeBytes(new byte[Frames.MAX_TOKEN_BYTES]);
          }
        });
  }

  /**
   * The costly frames, named; {@code scale} 1 gives the largest counts (frames of up to 3 MB), a
   * larger scale divides the counts by it (for the corruptions and the fuzz seeds).
   */
  static Map<String, byte[]> adversarialFrames(int scale) {
    int max = 0xFFFF / scale;
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("route-update-many-routes", routeUpdate(max, false));
    m.put("route-update-many-routes-last-bad", routeUpdate(max, true));
    m.put("route-update-max-count-no-routes", maxCountNoItems(FrameType.ROUTE_UPDATE));
    m.put(
        "seqno-request",
        frame(FrameType.SEQNO_REQUEST, o -> o.writeShort(1).writeShort(2).writeZero(14)));
    m.put("predicate-request", frame(FrameType.PREDICATE_REQUEST, o -> o.writeInt(0x00010002)));
    m.put("predicate-ad-bitmap-filters", ad(bitmapFilters(64 / scale + 1)));
    m.put("predicate-ad-one-bit-filters", ad(oneBitFilters(8192 / scale)));
    m.put("predicate-batch-empty-ads", batch(max, false, noFilters()));
    m.put("predicate-batch-empty-changes", batch(max, true, noFilters()));
    m.put("predicate-batch-one-bit-changes", batch(max, true, oneBitFilters(1)));
    m.put("predicate-batch-max-count-no-ads", maxCountNoItems(FrameType.PREDICATE_BATCH));
    m.put("data-max-d-empty-message", dataMaxD(DataHeader.MAX_D_WORDS));
    m.put("data-d-longest-list-empty-message", dataMaxList());
    m.put("data-d-length-0xffff-no-words", dataTruncated());
    m.put("data-many-attributes", dataManyAttributes());
    m.put("router-hello-longest-token", routerHello(true));
    m.put("router-hello-token-length-no-token", routerHello(false));
    return m;
  }

  /** A DATA header that claims 65,535 D words and carries none. */
  private static byte[] dataTruncated() {
    return frame(
        FrameType.DATA,
        o -> o.writeByte(64).writeByte(0).writeShort(1).writeLong(1).writeShort(0xFFFF));
  }

  @Test
  void adversarialFramesOfEveryTypeAllocateWithinTheBound() {
    for (Map.Entry<String, byte[]> e : adversarialFrames(1).entrySet()) {
      long used = assertWithinBound(e.getValue(), e.getKey());
      if (Boolean.getBoolean("bdrp.printAllocation")) {
        System.out.printf(
            "%-36s %9d bytes %10d allocated %6.2f a byte%n",
            e.getKey(), e.getValue().length, used, used / (double) e.getValue().length);
      }
    }
  }

  @Test
  void theCostliestFramesDecode() {
    // The bound is met by decoding, not by refusing early: the valid shapes are accepted.
    Map<String, byte[]> m = adversarialFrames(1);
    for (String name :
        List.of(
            "route-update-many-routes",
            "predicate-batch-empty-ads",
            "predicate-batch-empty-changes",
            "predicate-batch-one-bit-changes",
            "predicate-ad-bitmap-filters",
            "data-max-d-empty-message",
            "router-hello-longest-token")) {
      Object o = decodeLinkFrame(Unpooled.wrappedBuffer(m.get(name)));
      // A DATA frame's message that does not decode comes back as null.
      assertTrue(o != null && !(o instanceof ProtocolException), () -> name + ": " + o);
    }
    assertInstanceOf(
        ControlMessage.RouteUpdate.class,
        decodeLinkFrame(Unpooled.wrappedBuffer(m.get("route-update-many-routes"))));
  }

  @Test
  void corruptionsOfAdversarialFramesAllocateWithinTheBound() {
    List<byte[]> frames = new ArrayList<>(adversarialFrames(16).values());
    for (long seed = 0; seed < 300; seed++) {
      Random r = new Random(seed);
      byte[] b = frames.get(r.nextInt(frames.size())).clone();
      switch (r.nextInt(4)) {
        case 0 -> b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
        case 1 -> b[8 + r.nextInt(Math.min(4, b.length - 8))] = (byte) r.nextInt(256); // a count
        case 2 -> b = Arrays.copyOf(b, r.nextInt(b.length + 1));
        default -> b[r.nextInt(b.length)] = (byte) (r.nextBoolean() ? 0 : 0xff);
      }
      assertWithinBound(b, "corruption " + seed);
    }
  }
}
