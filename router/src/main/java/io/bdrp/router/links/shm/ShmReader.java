package io.bdrp.router.links.shm;

import io.bdrp.router.RouterCore;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.ring.SharedRing;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one shared-memory ring on the router's event loop when its wake socket says so, as {@link
 * ShmLinks} describes: in batches, handing each DATA frame to the receiver while the neighbour's
 * session is up, looking again after the loop's other work while the ring is busy, and saying it
 * sleeps when it is empty.
 */
final class ShmReader extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(ShmLinks.class);

  /**
   * Polls of an empty ring before its reader sleeps, once a pass has found it empty after the
   * previous one delivered (well under a microsecond each: the loop's other channels wait).
   */
  static final int SPIN = 200;

  /** Bytes read from a ring at once (a larger frame is read alone). */
  private static final int BATCH_BYTES = 64 << 10;

  /** Batches read from one ring before the loop turns to its other channels. */
  private static final int BATCHES_PER_TURN = 8;

  private final RouterCore core;
  private final IntFunction<Link> links;
  private final DataTransport.Receiver receiver;

  final int neighbour;
  final SharedRing ring;
  Channel wake;
  boolean closed;

  ShmReader(
      int neighbour,
      SharedRing ring,
      RouterCore core,
      IntFunction<Link> links,
      DataTransport.Receiver receiver) {
    this.neighbour = neighbour;
    this.ring = ring;
    this.core = core;
    this.links = links;
    this.receiver = receiver;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ReferenceCountUtil.release(msg); // the datagram only says "look"
    drain();
  }

  /** Reads and delivers what the ring holds; says it sleeps when it has read everything. */
  void drain() {
    if (closed) {
      return;
    }
    ByteBuf spare = null; // a buffer a read left empty: nobody holds it, the next read takes it
    try {
      int size = BATCH_BYTES;
      boolean delivered = false;
      for (int i = 0; i < BATCHES_PER_TURN; i++) {
        ByteBuf batch =
            spare != null && spare.capacity() == size
                ? spare
                : PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        if (spare != null && spare != batch) {
          spare.release();
        }
        spare = batch;
        int n =
            batch.hasMemoryAddress()
                ? ring.read(batch.memoryAddress(), size)
                : ring.read(batch.nioBuffer(0, size).slice());
        if (n > 0) {
          spare = null; // delivered: forwarded copies may keep slices of it
          try {
            batch.writerIndex(n);
            deliver(batch);
          } finally {
            batch.release();
          }
        }
        if (n < 0) {
          size = -n; // one frame larger than a batch: a buffer its size, once
          continue;
        }
        size = BATCH_BYTES;
        if (n > 0) {
          delivered = true;
        } else {
          if (delivered) {
            // Look again once the loop has flushed what this pass delivered: a busy link is
            // polled between the loop's other work rather than slept on.
            core.loop().execute(this::drain);
            return;
          }
          if (!ring.prepareSleep(SPIN)) {
            return; // the next write wakes it
          }
        }
      }
      core.loop().execute(this::drain); // more to read: after the other channels
    } catch (IOException e) {
      closed = true;
      core.metrics().malformedData("shm").inc();
      log.warn(
          "router {}: the ring from router {} holds what its writer cannot have written ({});"
              + " its DATA is no longer read",
          core.config().router(),
          neighbour,
          e.getMessage());
    } finally {
      if (spare != null) {
        spare.release();
      }
    }
  }

  /** Every frame of a batch, while the neighbour's session is up. */
  private void deliver(ByteBuf batch) {
    Link link = links.apply(neighbour);
    boolean up = link != null && link.session != null && link.session.isActive();
    while (batch.readableBytes() >= 4) {
      int len = batch.readIntLE();
      ByteBuf frame = batch.readSlice(len);
      if (up) {
        receiver.receive(link, frame, "shm");
      } else {
        core.metrics().ringDropped("no_session").inc();
      }
    }
  }
}
