package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Valid router-link frames with random bytes changed decode or fail with ProtocolException only.
 */
class RouterFrameFuzzTest {
  @Property(tries = 500, seed = "41")
  void decoderOnlyThrowsProtocolExceptions(@ForAll long seed) {
    Random r = new Random(seed);
    ByteBuf b =
        RouterFrameCodec.encode(
            UnpooledByteBufAllocator.DEFAULT, RouterFrameRoundTripTest.randomFrame(r));
    byte[] bytes = ByteBufUtil.getBytes(b);
    b.release();
    int flips = 1 + r.nextInt(3);
    for (int i = 0; i < flips; i++) {
      int at =
          r.nextInt(5) != 0 && bytes.length > 6
              ? 6 + r.nextInt(bytes.length - 6)
              : r.nextInt(bytes.length);
      bytes[at] = (byte) r.nextInt(256);
    }
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    try {
      RouterFrameCodec.decode(in);
    } catch (ProtocolException expected) {
      // the only failure allowed
    } finally {
      in.release();
    }
  }
}
