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
 * The router's side of the data plane: writes each DATA copy to its neighbour's link (its {@link
 * DataPath} if it has one and takes the frame, else the TCP session's output batch) and each
 * delivery to its client session, writing the header fields straight into the output, then the
 * message bytes (copied if small, a retained slice if large). A copy or delivery to a session that
 * is gone or above its high water mark is refused (the data plane counts it) and counted on its
 * link or host.
 *
 * <p>Owned by the router's event loop.
 */
final class LinkOutput implements DataPlane.Output<MessageBytes> {
  private static final Logger log = LoggerFactory.getLogger(LinkOutput.class);

  private final Link[] links; // by router number
  private final IntObjectHashMap<ClientSessions.Host> hosts;
  private final OutputBatches batches;
  private final Metrics.Histogram matchSeconds;

  LinkOutput(
      Link[] links,
      IntObjectHashMap<ClientSessions.Host> hosts,
      OutputBatches batches,
      Metrics.Histogram matchSeconds) {
    this.links = links;
    this.hosts = hosts;
    this.batches = batches;
    this.matchSeconds = matchSeconds;
  }

  @Override
  public boolean send(
      int neighbour, int hopLimit, int source, long messageId, long[] d, MessageBytes message) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    if (l == null) {
      return false;
    }
    Channel c = l.session;
    if (c == null || !c.isActive()) {
      l.dropped.inc();
      return false;
    }
    int n = d == null ? 0 : DataHeader.usedWords(d);
    DataPath path = l.path;
    if (path != null) {
      switch (path.send(hopLimit, source, messageId, d, n, message)) {
        case SENT -> {
          l.out.inc();
          return true;
        }
        case FULL -> {
          l.dropped.inc(); // as a full output buffer
          return false;
        }
        case TOO_LARGE -> {} // over the TCP session
      }
    }
    if (!c.isWritable()) {
      l.dropped.inc();
      return false;
    }
    int header = DataHeader.frameLength(n, 0);
    ByteBuf b = room(c, header, message);
    DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, n, message.length);
    body(c, b, message);
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
    matchSeconds.observeNanos(matchNanos);
  }
}
