package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Valid frames with random bytes flipped: a decoder either returns a frame or throws a {@link
 * ProtocolException} (never another exception), and a session fed the bytes answers with at most
 * one ERROR frame per fault and releases every buffer.
 */
class ClientFrameFuzzTest {
  static byte[] mutated(Random r) {
    ByteBuf b =
        ClientFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, Wire.randomClientFrame(r));
    byte[] bytes = ByteBufUtil.getBytes(b);
    b.release();
    int flips = 1 + r.nextInt(3);
    for (int i = 0; i < flips; i++) {
      // Mostly the body: the prefix faults are covered one by one elsewhere.
      int at =
          bytes.length > Frames.PREFIX_BYTES && r.nextInt(5) != 0
              ? Frames.PREFIX_BYTES + r.nextInt(bytes.length - Frames.PREFIX_BYTES)
              : r.nextInt(bytes.length);
      bytes[at] = (byte) r.nextInt(256);
    }
    return bytes;
  }

  @Property(tries = 2000, seed = "31")
  void decoderOnlyThrowsProtocolExceptions(@ForAll long seed) {
    byte[] bytes = mutated(new Random(seed));
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    try {
      ClientFrameCodec.decode(in);
    } catch (ProtocolException expected) {
      assertTrue(expected.reason() != null && !expected.reason().isEmpty());
    } finally {
      in.release();
    }
  }

  @Property(tries = 300, seed = "32")
  void sessionSurvivesGarbage(@ForAll long seed) {
    Random r = new Random(seed);
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = Wire.clientPipeline(4096, counters);
    for (int i = 0; i < 5 && ch.isOpen(); i++) {
      ch.writeInbound(Unpooled.wrappedBuffer(mutated(r)));
    }
    int errors = 0;
    for (Object o; (o = ch.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      assertTrue(ClientFrameCodec.decode(b) instanceof ClientFrame.Error);
      b.release();
      errors++;
    }
    assertTrue(errors <= counters.total());
    if (!ch.isOpen()) {
      assertTrue(errors >= 1, "closed without an ERROR frame");
    }
    ch.finishAndReleaseAll();
    assertEquals(counters.total(), counters.snapshot().values().stream().mapToLong(x -> x).sum());
  }
}
