package io.bdrp.router;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.routing.DataPlane;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.collection.IntObjectHashMap;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's side of the data plane: writes each DATA copy to its neighbour's link (into the TCP
 * session's output batch, or as one UDP datagram) and each delivery to its client session, writing
 * the header fields straight into the output, then the message bytes (copied if small, a retained
 * slice if large). A copy or delivery to a session that is gone or above its high water mark is
 * refused (the data plane counts it) and counted on its link or host.
 *
 * <p>Owned by the router's event loop.
 */
final class LinkOutput implements DataPlane.Output<MessageBytes> {
  private static final Logger log = LoggerFactory.getLogger(LinkOutput.class);

  private final Router router;
  private final Link[] links; // by router number
  private final IntObjectHashMap<ClientSessions.Host> hosts;
  private final OutputBatches batches;
  private final int maxDatagramBytes;

  /** Where a DATA frame for a shared-memory ring is laid out before it is copied into the ring. */
  private ByteBuf ringFrame;

  LinkOutput(
      Router router,
      Link[] links,
      IntObjectHashMap<ClientSessions.Host> hosts,
      OutputBatches batches,
      int maxDatagramBytes) {
    this.router = router;
    this.links = links;
    this.hosts = hosts;
    this.batches = batches;
    this.maxDatagramBytes = maxDatagramBytes;
  }

  @Override
  public boolean send(
      int neighbour, int hopLimit, int source, long messageId, long[] d, MessageBytes message) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    if (l == null) {
      return false;
    }
    Channel c = l.session;
    boolean broadcast = d == null;
    int n = broadcast ? 0 : DataHeader.usedWords(d);
    int header = DataHeader.frameLength(n, 0);
    if (l.ringOut != null && c != null && header + message.length <= l.ringOut.maxFrame()) {
      if (ringFrame == null || ringFrame.capacity() < l.ringOut.maxFrame()) {
        ringFrame =
            io.netty.buffer.Unpooled.wrappedBuffer(
                java.nio.ByteBuffer.allocateDirect(l.ringOut.maxFrame()));
      }
      ByteBuf b = ringFrame.clear();
      DataHeader.writeHeader(b, hopLimit, broadcast, source, messageId, d, n, message.length);
      message.writeTo(b);
      if (!router.shm().send(l, b)) {
        l.dropped.inc(); // the ring is full: as a full output buffer
        return false;
      }
      l.out.inc();
      return true;
    }
    int overhead = router.udp().overhead();
    boolean datagram = l.udpOut && header + message.length + overhead <= maxDatagramBytes;
    Channel to = datagram ? router.udp().channel() : c;
    if (c == null || !c.isActive() || to == null || !to.isWritable()) {
      l.dropped.inc();
      return false;
    }
    if (datagram) {
      ByteBuf b = to.alloc().directBuffer(header + message.length + overhead);
      DataHeader.writeHeader(b, hopLimit, broadcast, source, messageId, d, n, message.length);
      message.writeTo(b);
      router.udp().send(l, b);
    } else {
      ByteBuf b = room(c, header, message);
      DataHeader.writeHeader(b, hopLimit, broadcast, source, messageId, d, n, message.length);
      body(c, b, message);
    }
    l.out.inc();
    return true;
  }

  @Override
  public boolean deliver(int host, long messageId, MessageBytes message) {
    ClientSessions.Host h = hosts.get(host);
    if (h == null) {
      return false;
    }
    Channel c = h.channel;
    if (!c.isActive() || !c.isWritable()) {
      h.dropped.inc();
      return false;
    }
    ByteBuf b = room(c, Frames.PREFIX_BYTES, message);
    Frames.writePrefix(b, FrameType.DELIVER, message.length);
    body(c, b, message);
    h.delivered.inc();
    return true;
  }

  /**
   * Room in {@code c}'s output batch for a frame's {@code header} bytes and, when it is small
   * enough to copy, {@code message}; the caller writes the header, then calls {@link #body}.
   */
  private ByteBuf room(Channel c, int header, MessageBytes message) {
    return batches.room(
        c, message.length < OutputBatches.COPY_BELOW ? header + message.length : header);
  }

  /** The frame's message after its header: copied into the batch, or a slice written after it. */
  private void body(Channel c, ByteBuf batch, MessageBytes message) {
    if (message.length < OutputBatches.COPY_BELOW) {
      message.writeTo(batch);
    } else {
      batches.writeAfterBatch(c, message.retainedSlice());
    }
  }

  @Override
  public Message decode(MessageBytes message) {
    ByteBuffer nio = message.buf.nioBuffer(message.offset, message.length).slice();
    try {
      Message m = MessageCodec.decode(nio);
      if (nio.hasRemaining()) {
        log.debug("DATA message followed by {} unexpected bytes", nio.remaining());
        return null;
      }
      return m;
    } catch (CodecException e) {
      log.debug("DATA message does not decode: {}", e.getMessage());
      return null;
    }
  }

  @Override
  public void published(
      long messageId, long[] d, int destinations, boolean broadcast, long matchNanos) {
    router.metrics().matchSeconds.observeNanos(matchNanos);
  }
}
