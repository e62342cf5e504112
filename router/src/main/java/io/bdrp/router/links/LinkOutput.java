package io.bdrp.router.links;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.routing.DataPlane;
import io.bdrp.transport.DataHeader;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's side of the data plane: writes each DATA copy to its neighbour's link (its {@link
 * DataPath} if it has one and takes the frame, else the TCP session's output batch), writing the
 * header fields straight into the output, then the message bytes (copied if small, a retained slice
 * if large). A copy or delivery to a session that is gone or above its high water mark is refused
 * (the data plane counts it) and counted on its link or host.
 *
 * <p>Owned by the router's event loop.
 */
public final class LinkOutput implements DataPlane.Output<MessageBytes> {
  private static final Logger log = LoggerFactory.getLogger(LinkOutput.class);

  private final Link[] links; // by router number
  private final Hosts hosts;
  private final OutputBatches batches;
  private final Metrics.Histogram matchSeconds;

  public LinkOutput(
      Link[] links, Hosts hosts, OutputBatches batches, Metrics.Histogram matchSeconds) {
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
    ByteBuf b = batches.room(c, DataHeader.frameLength(n, 0), message);
    DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, n, message.length);
    batches.body(c, b, message);
    l.out.inc();
    return true;
  }

  @Override
  public boolean deliver(int host, long messageId, MessageBytes message) {
    Hosts.Output h = hosts.get(host);
    return h != null && h.deliver(messageId, message);
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
