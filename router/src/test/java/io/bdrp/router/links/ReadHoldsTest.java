package io.bdrp.router.links;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** A link is read again only when every handler that paused it has resumed it. */
class ReadHoldsTest {
  @Test
  void oneHandlerResumingDoesNotUndoAnothersPause() {
    EmbeddedChannel ch = new EmbeddedChannel();
    ReadHolds.set(ch, ReadHolds.DECODING, true);
    ReadHolds.set(ch, ReadHolds.RATE, true);
    assertFalse(ch.config().isAutoRead());

    ReadHolds.set(ch, ReadHolds.RATE, false);
    assertFalse(ch.config().isAutoRead(), "the decoder's pause still holds");
    assertTrue(ReadHolds.held(ch, ReadHolds.DECODING));
    assertFalse(ReadHolds.held(ch, ReadHolds.RATE));

    ReadHolds.set(ch, ReadHolds.RATE, false);
    assertFalse(ch.config().isAutoRead(), "clearing a reason twice clears no other");

    ReadHolds.set(ch, ReadHolds.DECODING, false);
    assertTrue(ch.config().isAutoRead());
    ch.finishAndReleaseAll();
  }
}
