package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

/** Test helpers: hex vectors, random frames, a client-session pipeline on an EmbeddedChannel. */
final class Wire {
  private Wire() {}

  static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex.replaceAll("[\\s|]", ""));
  }

  static String hex(ByteBuf buf) {
    return ByteBufUtil.hexDump(buf);
  }

  static ByteBuf buf(String hex) {
    return Unpooled.wrappedBuffer(bytes(hex));
  }

  /**
   * D of a DATA frame wrapped by {@code h}, as the words of a bitmap up to its last router (none
   * for a broadcast), whichever encoding the frame has.
   */
  static long[] destinations(DataHeader h) {
    if (h.isBroadcast()) {
      return new long[0];
    }
    long[] d = new long[DataHeader.MAX_D_WORDS];
    h.destinations(d);
    return java.util.Arrays.copyOf(d, DataHeader.usedWords(d));
  }

  /** The message bytes of the DATA frame {@code frame}, wrapped by {@code h} (not retained). */
  static ByteBuf messageBytes(DataHeader h, ByteBuf frame) {
    return frame.slice(frame.readerIndex() + h.messageOffset(), h.messageLength());
  }

  /**
   * The message of the DATA frame {@code frame}, wrapped by {@code h}, decoded as a router decodes
   * it for local delivery: {@link io.bdrp.encoding.codec.MessageCodec} over the message bytes,
   * which it must fill; null when they do not decode or do not fill the rest of the frame.
   */
  static Message dataMessage(DataHeader h, ByteBuf frame) {
    java.nio.ByteBuffer nio =
        frame.nioBuffer(frame.readerIndex() + h.messageOffset(), h.messageLength()).slice();
    try {
      Message m = io.bdrp.encoding.codec.MessageCodec.decode(nio);
      return nio.hasRemaining() ? null : m;
    } catch (io.bdrp.encoding.codec.CodecException e) {
      return null;
    }
  }

  /** {@code frame} with its body cut to {@code bodyBytes} and the length field patched. */
  static byte[] cutBody(byte[] frame, int bodyBytes) {
    byte[] out = new byte[Frames.PREFIX_BYTES + bodyBytes];
    System.arraycopy(frame, 0, out, 0, out.length);
    int length = 2 + bodyBytes;
    out[0] = (byte) (length >>> 24);
    out[1] = (byte) (length >>> 16);
    out[2] = (byte) (length >>> 8);
    out[3] = (byte) length;
    return out;
  }

  /** A client-session pipeline: framing, codec, error handler. */
  static EmbeddedChannel clientPipeline(int maxFrameBytes, ProtocolErrorCounters counters) {
    return new EmbeddedChannel(
        new FrameDecoder(maxFrameBytes),
        new ClientFrameDecoder(maxFrameBytes),
        new ClientFrameEncoder(),
        new ProtocolErrorHandler(counters));
  }

  /** The one ERROR frame the channel wrote (checks there is exactly one). */
  static ClientFrame.Error onlyError(EmbeddedChannel ch) {
    ByteBuf out = ch.readOutbound();
    assertNotNull(out, "no ERROR frame written");
    try {
      return (ClientFrame.Error) ClientFrameCodec.decode(out);
    } finally {
      out.release();
      Object more = ch.readOutbound();
      if (more != null) {
        io.netty.util.ReferenceCountUtil.release(more);
      }
      assertNull(more, "more than one frame written");
    }
  }

  /** Feeds {@code bytes}, expects one ERROR frame with {@code code}, and the channel closed. */
  static ClientFrame.Error expectFatal(EmbeddedChannel ch, byte[] bytes, ErrorCode code) {
    ch.writeInbound(Unpooled.wrappedBuffer(bytes));
    ClientFrame.Error e = onlyError(ch);
    assertEquals(code.number(), e.code(), e.message());
    assertFalse(ch.isOpen(), "channel still open after " + code);
    assertNull(ch.readInbound());
    ch.finishAndReleaseAll();
    return e;
  }

  // ---- random content ----

  private static final String[] NAMES = {"a", "b", "price", "sym", "été", "x.y", "k_1", "日本"};

  static String randomString(Random r, int max) {
    StringBuilder sb = new StringBuilder();
    int n = r.nextInt(max + 1);
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(10);
      if (kind < 7) {
        sb.append((char) ('a' + r.nextInt(26)));
      } else if (kind < 9) {
        sb.append((char) (0xC0 + r.nextInt(0x100)));
      } else {
        sb.appendCodePoint(0x1F600 + r.nextInt(40));
      }
    }
    return sb.toString();
  }

  static Value randomValue(Random r) {
    return switch (r.nextInt(4)) {
      case 0 -> Value.of(randomString(r, 12));
      case 1 -> Value.of(r.nextLong() >> r.nextInt(64));
      case 2 -> Value.of(r.nextInt(2000) / 8.0 - 100);
      default -> Value.of(r.nextBoolean());
    };
  }

  static Message randomMessage(Random r) {
    Message.Builder b = Message.builder();
    for (String name : NAMES) {
      if (r.nextInt(3) == 0) {
        b.put(name, randomValue(r));
      }
    }
    byte[] body = new byte[r.nextInt(4) == 0 ? r.nextInt(300) : 0];
    r.nextBytes(body);
    return b.body(body).build();
  }

  static Constraint randomConstraint(Random r) {
    String name = NAMES[r.nextInt(NAMES.length)];
    if (r.nextInt(8) == 0) {
      return Constraint.exists(name);
    }
    Value v = randomValue(r);
    Op op;
    do {
      op = Op.values()[r.nextInt(Op.values().length)];
    } while (op == Op.EXISTS || !op.appliesTo(v.type()));
    return Constraint.of(name, op, v);
  }

  static Predicate randomPredicate(Random r) {
    List<List<Constraint>> d = new ArrayList<>();
    int n = r.nextInt(5);
    for (int i = 0; i < n; i++) {
      List<Constraint> c = new ArrayList<>();
      int m = 1 + r.nextInt(4);
      for (int j = 0; j < m; j++) {
        c.add(randomConstraint(r));
      }
      d.add(c);
    }
    return Predicate.of(d);
  }

  /** A random publisher id (never 0). */
  static long nonZero(Random r) {
    long v = r.nextLong();
    return v == 0 ? 1 : v;
  }

  static ClientFrame randomClientFrame(Random r) {
    return switch (r.nextInt(14)) {
      case 0 -> {
        byte[] token = new byte[r.nextInt(40)];
        r.nextBytes(token);
        yield new ClientFrame.Hello(1 + r.nextInt(255), randomString(r, 30), token);
      }
      case 1 -> new ClientFrame.HelloOk(1, r.nextInt(65536), randomString(r, 30));
      case 2 -> new ClientFrame.SetPredicate(r.nextLong(), randomPredicate(r));
      case 3 -> new ClientFrame.Ok(r.nextLong());
      case 4 ->
          new ClientFrame.Error(
              r.nextLong(), 1 + r.nextInt(65535), randomString(r, 100), r.nextInt() & 0xFFFFFFFFL);
      case 5 -> new ClientFrame.Send(r.nextLong(), randomMessage(r));
      case 6 -> new ClientFrame.Deliver(randomMessage(r));
      case 7 -> new ClientFrame.Ping(r.nextLong());
      case 8 -> new ClientFrame.Pong(r.nextLong());
      case 9 ->
          new ClientFrame.SendReliable(
              r.nextLong(),
              nonZero(r),
              1 + (r.nextLong() >>> 1) % Long.MAX_VALUE,
              randomMessage(r));
      case 10 -> new ClientFrame.Confirm(nonZero(r), 1 + r.nextInt(1 << 20));
      case 11 -> {
        int[] routers = new int[r.nextInt(8)];
        for (int i = 0; i < routers.length; i++) {
          routers[i] = r.nextInt(65536);
        }
        yield new ClientFrame.Unreached(nonZero(r), 1 + r.nextInt(1 << 20), routers);
      }
      case 12 -> {
        long first = 1 + r.nextInt(1 << 20);
        yield new ClientFrame.ConfirmRange(nonZero(r), first, first + r.nextInt(1 << 16));
      }
      default -> new ClientFrame.Bye();
    };
  }
}
