package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzz targets (Jazzer) for the transport's decoders. Without {@code JAZZER_FUZZ}
 * each target runs as a plain JUnit test over the committed corpus in {@code
 * src/test/resources/io/bdrp/transport/TransportJazzerTestInputs/<target>/}; {@code scripts/fuzz}
 * runs them in fuzzing mode (see {@code docs/fuzzing.md}).
 *
 * <p>{@link #clientFrames} and {@link #routerFrames} take the input as the byte stream of one
 * session and push it through the decoding half of the real pipeline ({@link FrameDecoder}, the
 * frame decoder, the encoder and {@link ProtocolErrorHandler}) on an {@link EmbeddedChannel}. The
 * framing alone is also fed the stream in one read and in three, cut where the input's last bytes
 * say, and must cut the same frames. Findings: an exception other than {@link ProtocolException}
 * reaching the end of the pipeline, a buffer left unreleased, the feeds framing differently, a
 * decoded frame that does not re-encode to itself, an ERROR frame that does not decode. {@link
 * #dataHeader} takes one DATA frame and checks {@link DataHeader} on it: reading leaves it
 * unchanged, a header written by {@link DataHeader#writeHeader} with the fields read gives the
 * frame back, a message that decodes re-encodes to the same fields. {@link #routerFrameAllocation}
 * takes one router-link frame and meters its decode.
 */
class TransportJazzerTest {
  /** Small enough that the fuzzer reaches FRAME_TOO_LARGE with inputs of a few KiB. */
  private static final int MAX_FRAME_BYTES = 2048;

  @FuzzTest(maxDuration = "")
  void clientFrames(byte[] input) {
    session(input, false);
    assertEquals(
        framing(input, false), framing(input, true), "reads cut elsewhere frame otherwise");
  }

  @FuzzTest(maxDuration = "")
  void routerFrames(byte[] input) {
    session(input, true);
    assertEquals(
        framing(input, false), framing(input, true), "reads cut elsewhere frame otherwise");
  }

  @FuzzTest(maxDuration = "")
  void dataHeader(byte[] input) {
    TrackingAllocator alloc = new TrackingAllocator();
    // The frame starts 5 bytes into its buffer, as a frame sliced out of a read does.
    ByteBuf frame = alloc.heapBuffer(input.length + 5);
    frame.writeBytes(new byte[] {9, 9, 9, 9, 9}).writeBytes(input).readerIndex(5);
    try {
      checkDataFrame(frame, alloc);
    } finally {
      frame.release();
      alloc.assertAllReleased();
    }
  }

  /**
   * Input: one router-link frame, of any type. Decoding it as a link does (DATA through {@link
   * DataHeader#wrap}; any other frame through {@link RouterFrameCodec#decode} with no frame limit),
   * accepted or not, allocates at most {@link RouterFrameCodec#ALLOCATION_PER_BYTE} bytes per input
   * byte plus {@link RouterFrameCodec#ALLOCATION_FIXED}, whatever the frame's counts and lengths
   * say; a refusal is a {@link ProtocolException}, anything else a finding. Measured with the
   * thread's allocated bytes on a second decode of the input, so that the first one's class loading
   * and linking are not counted; where the JVM cannot measure, only the first decode runs.
   *
   * <p>A DATA frame's message is not decoded here: in fuzzing mode, decoding the message of the
   * seed with 1,024 attributes allocated 165 bytes a frame byte, against 23 in a plain JVM and in
   * the regression run, which comes with Jazzer's fuzzing-mode instrumentation of the encoding
   * module, not with the decoder. {@code RouterFrameAllocationTest} meters the message decode with
   * the header, and {@link #dataHeader} fuzzes it.
   */
  @FuzzTest(maxDuration = "")
  void routerFrameAllocation(byte[] input) {
    ByteBuf frame = Unpooled.wrappedBuffer(input);
    try {
      long used = RouterFrameAllocationTest.allocatedByDecode(frame, false);
      long allowed = RouterFrameAllocationTest.bound(input.length);
      assertTrue(
          used <= allowed,
          () -> "decoding " + input.length + " bytes allocated " + used + ", allowed " + allowed);
      if (used < 0) {
        RouterFrameAllocationTest.decodeLinkFrame(frame, false);
      }
    } finally {
      frame.release();
    }
  }

  /**
   * What {@link FrameDecoder} alone makes of {@code input} fed in one read or, with {@code cut}, in
   * three (cut at points chosen by the input's last two bytes): the frames, as copies of their
   * bytes, then its fault, if any.
   */
  private static List<Object> framing(byte[] input, boolean cut) {
    int n = input.length;
    int a = n < 2 || !cut ? n : (input[n - 1] & 0xFF) * n / 255;
    int b = n < 2 || !cut ? n : (input[n - 2] & 0xFF) * n / 255;
    int[] at = {0, Math.min(a, b), Math.max(a, b), n};
    TrackingAllocator alloc = new TrackingAllocator();
    Checker frames = new Checker(false);
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(alloc);
    ch.pipeline().addLast(new FrameDecoder(MAX_FRAME_BYTES)).addLast(frames);
    List<Object> out = new ArrayList<>();
    List<ByteBuf> reads = new ArrayList<>(3);
    try {
      for (int i = 0; i < 3; i++) {
        if (at[i + 1] > at[i]) {
          ByteBuf read = alloc.heapBuffer(at[i + 1] - at[i]);
          reads.add(read.writeBytes(input, at[i], at[i + 1] - at[i]));
          ch.writeInbound(read);
        }
      }
      ch.finish();
      if (frames.unexpected != null) {
        throw new AssertionError("not a ProtocolException", frames.unexpected);
      }
      for (Object o : frames.events) {
        out.add(
            o instanceof ProtocolException e
                ? "fault " + e.code() + " " + e.reason()
                : ByteBuffer.wrap(ByteBufUtil.getBytes((ByteBuf) o)));
      }
    } finally {
      ch.finishAndReleaseAll();
      frames.events.forEach(ReferenceCountUtil::release);
    }
    for (ByteBuf read : reads) {
      assertEquals(0, read.refCnt(), "a read buffer was not released");
    }
    alloc.assertAllReleased();
    return out;
  }

  /**
   * Feeds {@code input} to a fresh session pipeline in one read and checks what came out: each
   * frame that reached the end of the decoding half (re-encoding, DATA header), the ERROR frames
   * sent back (each decodes; no more of them than faults, at least one if the session closed), any
   * other exception, and that every buffer was released.
   */
  private static void session(byte[] input, boolean router) {
    TrackingAllocator alloc = new TrackingAllocator();
    Checker checker = new Checker(true);
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(alloc);
    ch.pipeline()
        .addLast(new FrameDecoder(MAX_FRAME_BYTES))
        .addLast(
            router
                ? new RouterFrameDecoder(MAX_FRAME_BYTES, BloomParameters.DEFAULT)
                : new ClientFrameDecoder(MAX_FRAME_BYTES))
        .addLast(router ? new RouterFrameEncoder() : new ClientFrameEncoder())
        .addLast(checker)
        .addLast(new ProtocolErrorHandler(new ProtocolErrorCounters()));
    ByteBuf read = alloc.heapBuffer(input.length).writeBytes(input);
    try {
      ch.writeInbound(read);
      boolean closed = !ch.isOpen();
      ch.finish();
      check(checker.events, router, alloc);
      int errors = readErrors(ch);
      if (checker.unexpected != null) {
        throw new AssertionError("not a ProtocolException", checker.unexpected);
      }
      assertTrue(errors <= checker.faults, "more ERROR frames than faults");
      if (closed) {
        assertTrue(errors > 0, "closed without an ERROR frame");
      }
    } finally {
      ch.finishAndReleaseAll();
      checker.events.forEach(ReferenceCountUtil::release);
    }
    assertEquals(0, read.refCnt(), "the read buffer was not released");
    alloc.assertAllReleased();
  }

  /** Checks what the decoders passed on, and releases every buffer of it. */
  private static void check(List<Object> events, boolean router, TrackingAllocator alloc) {
    for (Object o : events) {
      try {
        if (o instanceof ByteBuf data) {
          assertTrue(router, "a client session passed on a raw buffer");
          checkDataFrame(data, alloc);
        } else if (o instanceof ProtocolException) {
          // counted by the checker; answered by ProtocolErrorHandler
        } else if (router) {
          reencodeRouter(o, alloc);
        } else {
          reencodeClient((ClientFrame) o, alloc);
        }
      } finally {
        ReferenceCountUtil.release(o);
      }
    }
    events.clear();
  }

  /** Reads and releases the ERROR frames the session wrote; each must decode. Returns how many. */
  private static int readErrors(EmbeddedChannel ch) {
    int n = 0;
    for (Object o; (o = ch.readOutbound()) != null; n++) {
      ByteBuf b = (ByteBuf) o;
      try {
        ClientFrame.Error e = (ClientFrame.Error) ClientFrameCodec.decode(b.duplicate());
        assertFalse(e.message().isEmpty());
      } finally {
        b.release();
      }
    }
    return n;
  }

  /**
   * Encodes a decoded client frame (as long as {@link ClientFrameCodec#encodedLength} says) and
   * decodes that: it must be the same frame.
   */
  private static void reencodeClient(ClientFrame f, TrackingAllocator alloc) {
    byte[] once =
        encode(alloc, ClientFrameCodec.encodedLength(f), b -> ClientFrameCodec.encode(f, b));
    assertEquals(f, decodeClient(once, alloc));
  }

  private static void reencodeRouter(Object f, TrackingAllocator alloc) {
    assertTrue(
        f instanceof RouterHello || f instanceof ControlMessage || f instanceof SessionFrame,
        () -> "unexpected object from a router link: " + f);
    byte[] once =
        encode(alloc, RouterFrameCodec.encodedLength(f), b -> RouterFrameCodec.encode(f, b));
    ByteBuf in = alloc.heapBuffer(once.length).writeBytes(once);
    try {
      assertEquals(f, RouterFrameCodec.decode(in, MAX_FRAME_BYTES, BloomParameters.DEFAULT));
    } finally {
      in.release();
    }
  }

  private static ClientFrame decodeClient(byte[] bytes, TrackingAllocator alloc) {
    ByteBuf in = alloc.heapBuffer(bytes.length).writeBytes(bytes);
    try {
      return ClientFrameCodec.decode(in, MAX_FRAME_BYTES);
    } finally {
      in.release();
    }
  }

  private interface Writer {
    void write(ByteBuf out);
  }

  private static byte[] encode(TrackingAllocator alloc, int length, Writer w) {
    ByteBuf b = alloc.heapBuffer(length);
    try {
      w.write(b);
      assertEquals(length, b.readableBytes(), "encodedLength differs from the bytes written");
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /**
   * A DATA frame (a router link passed on, or fuzzed): the flyweight accepts it without moving the
   * reader index, or refuses it with a reason.
   */
  private static void checkDataFrame(ByteBuf frame, TrackingAllocator alloc) {
    int at = frame.readerIndex();
    DataHeader h;
    try {
      h = new DataHeader().wrap(frame);
    } catch (ProtocolException e) {
      assertFalse(e.reason().isEmpty());
      return;
    }
    assertEquals(at, frame.readerIndex(), "wrap moved the reader index");
    checkData(h, frame, alloc);
  }

  /** Checks a frame that {@link DataHeader#wrap} accepted; releases what it allocates. */
  private static void checkData(DataHeader h, ByteBuf frame, TrackingAllocator alloc) {
    int length = frame.readableBytes();
    byte[] before = ByteBufUtil.getBytes(frame);
    assertEquals(length, h.messageOffset() + h.messageLength());
    assertTrue(h.messageLength() >= 6);
    long[] d = Wire.destinations(h);
    assertEquals(h.isBroadcast(), d.length == 0);
    assertTrue(d.length <= DataHeader.MAX_D_WORDS);
    // Decoded as for local delivery: a message or null (any other exception is a finding).
    Message m = Wire.dataMessage(h, frame);
    // A copy written as a router writes one (header, then the message bytes), with the same
    // fields and D in the frame's own encoding (a bitmap of all its words, or its list), is the
    // frame byte for byte.
    int layout = h.isList() ? -h.destinationLength() : h.destinationLength();
    ByteBuf copy = alloc.heapBuffer(length);
    try {
      DataHeader.writeHeader(
          copy,
          h.hopLimit(),
          h.isBroadcast(),
          h.sourceRouter(),
          h.messageId(),
          h.isBroadcast() ? null : Arrays.copyOf(d, Math.max(d.length, layout)),
          layout,
          h.messageLength());
      copy.writeBytes(Wire.messageBytes(h, frame));
      assertArrayEquals(before, ByteBufUtil.getBytes(copy));
    } finally {
      copy.release();
    }
    if (m != null) {
      ByteBuf again =
          DataHeader.encode(
              alloc,
              h.hopLimit(),
              h.isBroadcast(),
              h.sourceRouter(),
              h.messageId(),
              h.isBroadcast() ? null : d,
              m);
      try {
        DataHeader g = new DataHeader().wrap(again);
        assertEquals(m, Wire.dataMessage(g, again));
        assertEquals(h.hopLimit(), g.hopLimit());
        assertEquals(h.sourceRouter(), g.sourceRouter());
        assertEquals(h.messageId(), g.messageId());
        assertArrayEquals(d, Wire.destinations(g));
      } finally {
        again.release();
      }
    }
    assertArrayEquals(before, ByteBufUtil.getBytes(frame), "reading the frame changed it");
  }

  /**
   * Sits where the session's own handler would: takes every frame the decoders pass on and every
   * fault, in order; passes the faults on to {@link ProtocolErrorHandler} if asked.
   */
  private static final class Checker extends ChannelInboundHandlerAdapter {
    final List<Object> events = new ArrayList<>();
    final boolean passOn;
    Throwable unexpected;
    int faults;

    Checker(boolean passOn) {
      this.passOn = passOn;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      events.add(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (cause instanceof ProtocolException e) {
        events.add(e);
        faults++;
      } else if (unexpected == null) {
        unexpected = cause;
      }
      if (passOn) {
        ctx.fireExceptionCaught(cause);
      }
    }
  }

  /**
   * Unpooled buffers whose every allocation is remembered, so that a target can check that all of
   * them were released (leak detection only logs, and only when the garbage collector runs).
   */
  static final class TrackingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> made = new ArrayList<>();

    TrackingAllocator() {
      super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
      made.add(b);
      return b;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
      made.add(b);
      return b;
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }

    void assertAllReleased() {
      for (ByteBuf b : made) {
        assertEquals(0, b.refCnt(), "a buffer was not released");
      }
    }
  }
}
