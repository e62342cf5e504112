package io.bdrp.router.hosts;

import io.bdrp.router.OutputBatches;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.netty.channel.Channel;

/**
 * The confirmations of one client session's reliable messages on their way out. A session of
 * version 2 ({@link io.bdrp.transport.Frames#SESSION_VERSION}) gets those made in one batch of the
 * router's work as runs of consecutive numbers of one publisher, one CONFIRM_RANGE per run (CONFIRM
 * for a run of one): with an empty D each message is confirmed as it is read, so one read of a
 * publisher's SEND_RELIABLEs is answered by one frame rather than one per message. A run holds only
 * numbers that are all confirmed: a number that does not extend it (confirmations of messages with
 * different destinations come in any order) writes the run and starts another. A session of version
 * 1 gets one CONFIRM per message, as it is made.
 *
 * <p>Owned by the router's event loop.
 */
final class ConfirmRuns {
  /** Bytes of a CONFIRM_RANGE frame, prefix included. */
  private static final int RANGE_BYTES =
      ClientFrameCodec.encodedLength(new ClientFrame.ConfirmRange(1, 1, 1));

  final Channel channel;
  private final boolean ranges;

  /** The open run: {@code publisher}'s numbers {@code first} to {@code last}; none if 0. */
  private long publisher;

  private long first;
  private long last;

  /**
   * The publisher id this session took last (its answers come here), or 0: lets a session that
   * sends one publisher's messages skip the table of publishers after the first.
   */
  long taken;

  /** Whether this session is on the caller's list of sessions to {@link #end} with the batch. */
  private boolean listed;

  /**
   * @param version the session's version, from HELLO_OK
   */
  ConfirmRuns(Channel channel, int version) {
    this.channel = channel;
    this.ranges = version >= 2;
  }

  /**
   * Message {@code seq} of {@code publisher} is confirmed. Returns true if the caller is to call
   * {@link #end} at the end of this batch (once per batch: it returns true again only after that).
   */
  boolean confirmed(OutputBatches batches, long publisher, long seq) {
    if (!ranges) {
      ClientFrame.Confirm f = new ClientFrame.Confirm(publisher, seq);
      ClientFrameCodec.encode(f, batches.room(channel, ClientFrameCodec.encodedLength(f)));
      return false;
    }
    if (this.publisher == publisher && seq == last + 1) {
      last = seq;
      return false;
    }
    write(batches);
    this.publisher = publisher;
    first = seq;
    last = seq;
    if (listed) {
      return false;
    }
    listed = true;
    batches.flushLater(channel);
    return true;
  }

  /** The batch ends: writes the open run, if any. */
  void end(OutputBatches batches) {
    write(batches);
    listed = false;
  }

  /** Writes the open run, if any, into the session's batch: the session's output stays in order. */
  void write(OutputBatches batches) {
    if (publisher == 0) {
      return;
    }
    if (channel.isActive()) {
      ClientFrame f =
          first == last
              ? new ClientFrame.Confirm(publisher, first)
              : new ClientFrame.ConfirmRange(publisher, first, last);
      ClientFrameCodec.encode(f, batches.room(channel, RANGE_BYTES));
    }
    publisher = 0;
  }
}
