package io.bdrp.router.links;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.RouterFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Large advertisements are decoded off the event loop, and the link's frames still come out in the
 * order they came: control frames wait behind the one away, DATA does not.
 */
class ControlOffloadTest {
  private static final BloomParameters BLOOM = BloomParameters.DEFAULT;
  private final ArrayDeque<Runnable> control = new ArrayDeque<>();

  private EmbeddedChannel channel(long maxWaiting) {
    return new EmbeddedChannel(new ControlOffload(control::add, 1 << 24, BLOOM, maxWaiting));
  }

  private static ByteBuf encode(Object frame) {
    return RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, frame);
  }

  /** An advertisement of {@code n} random three-bit filters from router 1 for {@code origin}. */
  private static ControlMessage.PredicateAd ad(int origin, int n) {
    Random r = new Random(origin);
    List<long[]> filters = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] f = new long[BLOOM.bits() / 64];
      for (int b = 0; b < 3; b++) {
        int bit = r.nextInt(BLOOM.bits());
        f[bit / 64] |= 1L << (bit % 64);
      }
      filters.add(f);
    }
    return new ControlMessage.PredicateAd(
        1, origin, 5, 1, EncodedPredicate.ofFilters(BLOOM, filters));
  }

  private static ByteBuf data() {
    ByteBuf f = UnpooledByteBufAllocator.DEFAULT.buffer();
    f.writeInt(2).writeByte(Frames.VERSION).writeByte(FrameType.DATA.number());
    return f;
  }

  @Test
  void largeAdvertisementIsDecodedOffTheLoopAndLaterControlFramesWaitForIt() {
    EmbeddedChannel ch = channel(1 << 20);
    ByteBuf large = encode(ad(7, 4000));
    assertTrue(large.readableBytes() >= ControlOffload.OFFLOAD_BYTES, "large enough to go");
    ch.writeInbound(large);
    ch.writeInbound(encode(new ControlMessage.Hello(1, 5, 6)));
    ch.writeInbound(data());
    ByteBuf first = ch.readInbound();
    assertEquals(FrameType.DATA.number(), first.getUnsignedByte(Frames.TYPE_OFFSET), "DATA passed");
    first.release();
    assertNull(ch.readInbound(), "the hello waits behind the advertisement");
    assertEquals(1, control.size(), "one decode on the control thread");

    control.poll().run(); // decodes, and hands the result back to the loop
    ch.runPendingTasks();
    ControlMessage.PredicateAd ad =
        assertInstanceOf(ControlMessage.PredicateAd.class, ch.readInbound());
    assertEquals(7, ad.origin());
    assertEquals(4000, ad.predicate().size());
    ByteBuf hello = ch.readInbound();
    assertEquals(
        FrameType.DV_HELLO.number(), hello.getUnsignedByte(Frames.TYPE_OFFSET), "then the hello");
    hello.release();
    assertNull(ch.readInbound());
    assertFalse(ch.finish());
  }

  @Test
  void smallFramesPassOnTheLoop() {
    EmbeddedChannel ch = channel(1 << 20);
    ch.writeInbound(encode(ad(7, 3)));
    ByteBuf small = ch.readInbound();
    assertEquals(FrameType.PREDICATE_AD.number(), small.getUnsignedByte(Frames.TYPE_OFFSET));
    small.release();
    assertTrue(control.isEmpty(), "nothing for the control thread");
    ch.finish();
  }

  @Test
  void aMalformedLargeAdvertisementIsRefusedInItsPlace() {
    EmbeddedChannel ch = channel(1 << 20);
    ByteBuf bad = encode(ad(7, 4000));
    bad.setByte(bad.writerIndex() - 1, 0xff); // the last filter's encoding cut wrong
    bad.writerIndex(bad.writerIndex() - 3);
    bad.setInt(0, bad.readableBytes() - 4);
    ch.writeInbound(bad);
    control.poll().run();
    ch.runPendingTasks();
    assertThrows(DecoderException.class, ch::checkException, "the decoder's refusal");
    ch.finishAndReleaseAll();
  }

  @Test
  void theLinkIsNotReadWhileTooMuchWaits() {
    EmbeddedChannel ch = channel(3 * ControlOffload.OFFLOAD_BYTES);
    ch.writeInbound(encode(ad(7, 4000)));
    for (int i = 0; i < 4; i++) {
      ch.writeInbound(encode(ad(8 + i, 4000)));
    }
    assertFalse(ch.config().isAutoRead(), "reading paused");
    while (!control.isEmpty()) {
      control.poll().run();
      ch.runPendingTasks();
    }
    assertTrue(ch.config().isAutoRead(), "reading again once drained");
    for (int origin = 7; origin < 12; origin++) {
      ControlMessage.PredicateAd ad = ch.readInbound();
      assertEquals(origin, ad.origin(), "in order");
    }
    ch.finish();
  }
}
