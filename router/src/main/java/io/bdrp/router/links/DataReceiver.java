package io.bdrp.router.links;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Reliable;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import io.bdrp.transport.ReliableFrames;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every transport hands the DATA frames its links receive (TCP sessions, UDP datagrams,
 * rings): the header is read in place, a malformed one is counted and dropped, anything else goes
 * to the data plane with the message as a view of the frame. Nothing is copied or allocated per
 * frame: the header and the message view are reused, one frame at a time.
 *
 * <p>Owned by the router's event loop.
 */
public final class DataReceiver implements DataTransport.Receiver {
  private static final Logger log = LoggerFactory.getLogger(DataReceiver.class);

  private final int router;
  private final RouterMetrics metrics;
  private final DataPlane<MessageBytes> dataPlane;
  private final Reliable<MessageBytes> reliable;
  private final java.util.function.BooleanSupplier kernel;
  private final DataHeader header = new DataHeader();
  private final MessageBytes message = new MessageBytes();

  /**
   * @param kernel whether the kernel fast path is loaded: only then is a broadcast marked for local
   *     delivery ({@link DataHeader#FLAG_LOCAL}) taken, and only over UDP, where the program drops
   *     one that came from the wire
   */
  public DataReceiver(
      int router,
      RouterMetrics metrics,
      DataPlane<MessageBytes> dataPlane,
      Reliable<MessageBytes> reliable,
      java.util.function.BooleanSupplier kernel) {
    this.router = router;
    this.kernel = kernel;
    this.metrics = metrics;
    this.dataPlane = dataPlane;
    this.reliable = reliable;
  }

  /**
   * A frame of the reliable service (RELIABLE_DATA or RELIABLE_ACK) from neighbour {@code from},
   * which the caller still owns; taken from a link's TCP session only. A malformed one is counted
   * and dropped (the ingress sends again what was not acknowledged).
   */
  public void receiveReliable(Link from, ByteBuf frame, String transport) {
    int type =
        frame.readableBytes() > Frames.TYPE_OFFSET
            ? frame.getUnsignedByte(frame.readerIndex() + Frames.TYPE_OFFSET)
            : -1;
    try {
      if (!transport.equals("tcp")) {
        throw new ProtocolException(
            io.bdrp.transport.ErrorCode.MALFORMED_FRAME,
            "reliable frames travel on the TCP session only");
      }
      if (type == FrameType.RELIABLE_ACK.number()) {
        reliable.receiveAck(from.neighbour(), ReliableFrames.readAck(frame));
        return;
      }
      from.in.inc(); // a copy, as its sender counts it; acknowledgements are not DATA
      ReliableFrames.Copy c = ReliableFrames.read(frame);
      reliable.receive(
          from.neighbour(),
          c,
          c.header(),
          message.set(frame, frame.readerIndex() + c.messageOffset(), c.messageLength()));
    } catch (ProtocolException e) {
      metrics.malformedData(transport).inc();
      log.debug(
          "router {}: malformed reliable frame from {} over {}: {}",
          router,
          from.neighbour(),
          transport,
          e.getMessage());
    } finally {
      message.set(null, 0, 0);
    }
  }

  /**
   * A DATA frame from neighbour {@code from} over {@code transport}, which the caller still owns.
   */
  @Override
  public void receive(Link from, ByteBuf frame, String transport) {
    from.in.inc();
    if (!"tcp".equals(transport)) {
      from.bytesIn += frame.readableBytes(); // a TCP session's bytes are counted at its socket
    }
    DataHeader h;
    try {
      h = header.wrap(frame);
      if (h.isLocalOnly() && !("udp".equals(transport) && kernel.getAsBoolean())) {
        throw new ProtocolException(
            io.bdrp.transport.ErrorCode.MALFORMED_FRAME,
            "DATA with the local-delivery flag, which only this router's kernel fast path sets");
      }
    } catch (ProtocolException e) {
      metrics.malformedData(transport).inc();
      log.debug(
          "router {}: malformed DATA from {} over {}: {}",
          router,
          from.neighbour(),
          transport,
          e.getMessage());
      return;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "router {}: DATA from router {} over {}: source router {}, message {}, {}, hop limit {},"
              + " {} bytes",
          router,
          from.neighbour(),
          transport,
          h.sourceRouter(),
          h.messageId(),
          h.isBroadcast() ? "broadcast" : "by D",
          h.hopLimit(),
          h.messageLength());
    }
    dataPlane.receive(
        from.neighbour(),
        h,
        message.set(frame, frame.readerIndex() + h.messageOffset(), h.messageLength()));
  }
}
