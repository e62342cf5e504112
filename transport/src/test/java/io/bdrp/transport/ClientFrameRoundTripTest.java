package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** Random client frames survive encode then decode, alone and streamed through a pipeline. */
class ClientFrameRoundTripTest {
  @Property(tries = 300, seed = "20261123")
  void roundTrip(@ForAll long seed) {
    ClientFrame f = Wire.randomClientFrame(new Random(seed));
    ByteBuf out = ClientFrameCodec.encode(PooledByteBufAllocator.DEFAULT, f);
    try {
      assertEquals(ClientFrameCodec.encodedLength(f), out.readableBytes());
      assertEquals(f, ClientFrameCodec.decode(out));
      assertEquals(0, out.readableBytes());
    } finally {
      out.release();
    }
  }

  /**
   * Many frames in one stream, delivered in random chunks: every frame comes out once, in order.
   */
  @Property(tries = 30, seed = "7")
  void streamedInRandomChunks(@ForAll long seed) {
    Random r = new Random(seed);
    ClientFrame[] frames = new ClientFrame[20];
    ByteBuf stream = Unpooled.buffer();
    for (int i = 0; i < frames.length; i++) {
      frames[i] = Wire.randomClientFrame(r);
      ClientFrameCodec.encode(frames[i], stream);
    }
    EmbeddedChannel ch = Wire.clientPipeline(1 << 16, new ProtocolErrorCounters());
    while (stream.isReadable()) {
      int n = Math.min(stream.readableBytes(), 1 + r.nextInt(40));
      ch.writeInbound(stream.readRetainedSlice(n));
    }
    stream.release();
    for (ClientFrame f : frames) {
      assertEquals(f, ch.readInbound());
    }
    ch.checkException();
    assertNull(ch.readOutbound());
    ch.finishAndReleaseAll();
  }
}
