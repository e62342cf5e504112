package io.bdrp.router.links;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * The reasons a router link is not read, each set and cleared by the handler it belongs to: the
 * link is read again only when none holds it, so that one handler resuming cannot undo another's
 * pause. Used on the channel's event loop only.
 */
final class ReadHolds {
  /** Advertisements wait for the control thread to decode them ({@link ControlOffload}). */
  static final int DECODING = 1;

  /** Control messages wait for the control thread to verify their claims ({@link LinkSession}). */
  static final int VERIFYING = 1 << 1;

  /** The neighbour sent more control frames than its rate ({@link LinkSession}). */
  static final int RATE = 1 << 2;

  private static final AttributeKey<int[]> KEY = AttributeKey.valueOf("bdrp.readHolds");

  private ReadHolds() {}

  /** Sets or clears {@code reason}; the channel is read while no reason is set. */
  static void set(Channel ch, int reason, boolean held) {
    int[] holds = ch.attr(KEY).get();
    if (holds == null) {
      holds = new int[1];
      ch.attr(KEY).set(holds);
    }
    holds[0] = held ? holds[0] | reason : holds[0] & ~reason;
    boolean read = holds[0] == 0;
    if (ch.config().isAutoRead() != read) {
      ch.config().setAutoRead(read);
    }
  }

  /** Whether {@code reason} holds the channel. */
  static boolean held(Channel ch, int reason) {
    int[] holds = ch.attr(KEY).get();
    return holds != null && (holds[0] & reason) != 0;
  }
}
