package io.bdrp.router.links;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.codec.MessageView;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Reliable;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ReliableFrames;
import io.bdrp.transport.TraceFrames;
import io.bdrp.transport.TraceReport;
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
 * (the data plane counts it) and counted on its link or host. Each frame written is added to its
 * link's bytes of its kind (DATA, RELIABLE_DATA, RELIABLE_ACK: {@link Link#dataBytesOut}), one add
 * of a length already computed.
 *
 * <p>Owned by the router's event loop.
 */
public final class LinkOutput
    implements DataPlane.Output<MessageBytes>, Reliable.Output<MessageBytes> {
  /** Where the ingress's answers to reliable publishers go (the client sessions). */
  public interface Publishers {
    /** Every router of D has message {@code publisherSeq} of {@code publisher}. */
    void confirmed(long publisher, long publisherSeq);

    /** The retention of {@code publisherSeq} ended before routers {@code unreached} had it. */
    void unreached(long publisher, long publisherSeq, long[] unreached);
  }

  private static final Logger log = LoggerFactory.getLogger(LinkOutput.class);

  private final Link[] links; // by router number
  private final Hosts hosts;
  private final OutputBatches batches;
  private final Metrics.Histogram matchSeconds;
  private Publishers publishers;
  private final MessageView view = new MessageView();

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
      l.droppedDown++;
      return false;
    }
    int layout = DataHeader.layoutOf(d);
    DataPath path = l.path;
    if (path != null) {
      switch (path.send(hopLimit, source, messageId, d, layout, message)) {
        case SENT -> {
          int bytes = DataHeader.frameLength(layout, message.length);
          l.out.inc();
          l.bytesOut += bytes; // TCP bytes: LinkBytes
          l.dataBytesOut += bytes;
          return true;
        }
        case FULL -> {
          l.dropped.inc(); // as a full output buffer
          l.droppedPathFull++;
          return false;
        }
        case TOO_LARGE -> {} // over the TCP session
      }
    }
    if (!c.isWritable()) {
      l.dropped.inc();
      l.droppedHighWater++;
      return false;
    }
    int header = DataHeader.frameLength(layout, 0);
    ByteBuf b = batches.room(c, header, message);
    DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, layout, message.length);
    batches.body(c, b, message);
    l.out.inc();
    l.dataBytesOut += header + message.length;
    return true;
  }

  /** Sets where the answers to reliable publishers go. */
  public void publishers(Publishers publishers) {
    this.publishers = publishers;
  }

  /** Where the broadcasts this router took itself are told (the kernel fast path's window). */
  public interface BroadcastsTaken {
    void taken(int source, long messageId);
  }

  private BroadcastsTaken broadcastsTaken = (source, id) -> {};

  /** Sets where the broadcasts this router took itself are told. */
  public void broadcastsTaken(BroadcastsTaken to) {
    this.broadcastsTaken = to;
  }

  @Override
  public void broadcastTaken(int source, long messageId) {
    broadcastsTaken.taken(source, messageId);
  }

  /**
   * A reliable copy goes on the link's TCP session, whatever transport its DATA uses: the header,
   * this copy's entries, then the message bytes.
   */
  @Override
  public boolean send(
      int neighbour,
      int hopLimit,
      int source,
      long messageId,
      long[] d,
      Reliable.Header h,
      MessageBytes message) {
    Channel c = session(neighbour);
    if (c == null) {
      return false;
    }
    int header = ReliableFrames.frameLength(d, h, 0);
    ByteBuf b = batches.room(c, header, message);
    ReliableFrames.writeHeader(b, hopLimit, source, messageId, d, h, message.length);
    batches.body(c, b, message);
    Link l = links[neighbour];
    l.out.inc();
    l.reliableDataBytesOut += header + message.length;
    return true;
  }

  @Override
  public boolean sendAck(int neighbour, Reliable.Ack ack) {
    Channel c = session(neighbour);
    if (c == null) {
      return false;
    }
    ReliableFrames.writeAck(batches.room(c, ReliableFrames.ACK_BYTES), ack);
    links[neighbour].ackBytesOut += ReliableFrames.ACK_BYTES;
    return true;
  }

  /**
   * The position just past what was written to the neighbour's TCP sessions: the bytes that crossed
   * into the socket's side of the pipeline ({@link Link#sessionBytesOut}) and those still gathered
   * in this batch. Bytes a TLS handler holds until the batch's flush are not counted yet, so a
   * copy's position is at most a batch too low: it is taken as drained that much sooner, and resent
   * rather than waited for.
   */
  @Override
  public long written(int neighbour) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    if (l == null) {
      return -1;
    }
    Channel c = l.session;
    return l.sessionBytesOut + (c == null ? 0 : batches.batched(c));
  }

  /**
   * Where the session's output queue starts: what was written ({@link Link#sessionBytesOut}) less
   * what Netty still holds for the socket. Netty counts each buffer it holds with an overhead (96
   * bytes), so while its queue is not empty this is that much too low per buffer held (a batch is
   * 16 KiB: under 1%), and a copy counts as queued until the queue behind it is that much shorter.
   * With no live session, everything written is drained (what the last session held is lost with
   * it).
   */
  @Override
  public long drained(int neighbour) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    if (l == null) {
      return -1;
    }
    Channel c = l.session;
    io.netty.channel.ChannelOutboundBuffer queue =
        c == null || !c.isActive() ? null : c.unsafe().outboundBuffer();
    if (queue == null) {
      return written(neighbour);
    }
    return l.sessionBytesOut - queue.totalPendingWriteBytes();
  }

  /**
   * A trace copy goes on the link's TCP session as a TRACE_DATA frame, whatever transport the
   * link's DATA uses: the kernel fast path never takes it, and the router reports for it.
   */
  public boolean sendTrace(
      int neighbour,
      int hopLimit,
      int source,
      long traceId,
      long[] d,
      boolean named,
      MessageBytes message) {
    Channel c = session(neighbour);
    if (c == null) {
      return false;
    }
    int layout = DataHeader.layoutOf(d);
    ByteBuf b = batches.room(c, DataHeader.frameLength(layout, 0), message);
    DataHeader.writeTraceHeader(
        b, hopLimit, d == null, named, source, traceId, d, layout, message.length);
    batches.body(c, b, message);
    return true;
  }

  /** Writes a TRACE_REPORT frame for ingress {@code source} to {@code neighbour}. */
  public boolean sendTraceReport(int neighbour, int source, long traceId, TraceReport report) {
    Channel c = session(neighbour);
    if (c == null) {
      return false;
    }
    TraceFrames.writeReport(
        batches.room(c, TraceFrames.reportLength(report)), source, traceId, report);
    return true;
  }

  /** Passes a TRACE_REPORT frame as it is (the caller still owns it) on to {@code neighbour}. */
  public boolean forward(int neighbour, ByteBuf frame) {
    Channel c = session(neighbour);
    if (c == null) {
      return false;
    }
    batches.copy(c, frame);
    return true;
  }

  /** Whether the DATA of the link to {@code neighbour} goes by UDP now. */
  public boolean dataByUdp(int neighbour) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    return l != null && l.dataBy(io.bdrp.router.config.RouterConfig.LinkTransport.UDP);
  }

  /** The TCP session to {@code neighbour} if it is up and below its high water mark. */
  private Channel session(int neighbour) {
    Link l = neighbour >= 0 && neighbour < links.length ? links[neighbour] : null;
    if (l == null) {
      return null;
    }
    Channel c = l.session;
    if (c == null || !c.isActive()) {
      l.dropped.inc();
      l.droppedDown++;
      return null;
    }
    if (!c.isWritable()) {
      l.dropped.inc();
      l.droppedHighWater++;
      return null;
    }
    return c;
  }

  /**
   * A copy of the message's bytes in a buffer of its own: a message kept until its destinations
   * acknowledge it must not hold the whole read buffer it arrived in.
   */
  @Override
  public MessageBytes keep(MessageBytes message) {
    ByteBuf copy = message.buf.alloc().directBuffer(message.length, message.length);
    message.writeTo(copy);
    return new MessageBytes().set(copy, 0, message.length);
  }

  @Override
  public void release(MessageBytes message) {
    message.buf.release();
  }

  @Override
  public int size(MessageBytes message) {
    return message.length;
  }

  @Override
  public void confirmed(long messageId, long publisher, long publisherSeq) {
    if (publishers != null) {
      publishers.confirmed(publisher, publisherSeq);
    }
  }

  @Override
  public void failed(long messageId, long publisher, long publisherSeq, long[] unreached) {
    if (publishers != null) {
      publishers.unreached(publisher, publisherSeq, unreached);
    }
  }

  @Override
  public boolean deliver(int host, long messageId, MessageBytes message) {
    Hosts.Output h = hosts.get(host);
    return h != null && h.deliver(messageId, message);
  }

  /**
   * The message's attributes read in place, through one {@link MessageView} (its table of decoded
   * attributes shared by every message this router receives); a message the view does not take is
   * decoded whole, as before.
   */
  @Override
  public Attributes attributes(MessageBytes message) {
    return readInto(view, message) ? view : decode(message);
  }

  /** Copies {@code message}'s bytes into {@code view}'s buffer and decodes them there. */
  public static boolean readInto(MessageView view, MessageBytes message) {
    message.copyTo(view.buffer(message.length));
    return view.wrap(message.length);
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
    if (matchNanos >= 0) {
      matchSeconds.observeNanos(matchNanos);
    }
  }
}
