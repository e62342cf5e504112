package io.bdrp.router.links;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.config.RouterConfig;

/**
 * One link's way for DATA frames besides its TCP session, made by a {@link DataTransport} when the
 * link comes up: a UDP socket towards the neighbour's, a ring in shared memory the neighbour reads.
 * The forwarding code offers each copy to the link's path, if it has one, and writes it to the TCP
 * session only when the path does not take frames that large; it names no transport.
 *
 * <p>Owned by the router's event loop.
 */
public interface DataPath {
  /** What became of a frame offered to a path. */
  enum Outcome {
    /** Written (or queued for the loop's flush): the path owns it now. */
    SENT,
    /** The path has no room now: the copy is dropped and counted, as on a full TCP session. */
    FULL,
    /** Too large for this path: it goes over the link's TCP session instead. */
    TOO_LARGE
  }

  /**
   * Writes one DATA frame: the header fields (as {@link io.bdrp.transport.DataHeader#writeHeader}),
   * then the message.
   *
   * @param d the destination routers' bitmap, or null for a broadcast
   * @param layout how D is written ({@link io.bdrp.transport.DataHeader#layoutOf})
   */
  Outcome send(
      int hopLimit, int source, long messageId, long[] d, int layout, MessageBytes message);

  /** The transport, as configured for the link. */
  RouterConfig.LinkTransport transport();

  /** Where the frames go, for the log: "UDP to /10.0.0.2:7500". */
  String describe();
}
