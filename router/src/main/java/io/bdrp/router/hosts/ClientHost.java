package io.bdrp.router.hosts;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * A host attached by the bdrp client protocol: it gets its deliveries as DELIVER frames, written
 * into its session's output batch.
 *
 * <p>Owned by the router's event loop, but for {@link AttachedHost#filters}, which the control
 * thread keeps.
 */
final class ClientHost extends AttachedHost {
  final Channel channel;
  final Metrics.Counter delivered;
  final Metrics.Counter dropped;

  private final OutputBatches batches;

  ClientHost(
      int id,
      Channel channel,
      String name,
      ClientAuth.Permissions permissions,
      RouterMetrics metrics,
      OutputBatches batches,
      int changesPerSecond) {
    super(id, name, permissions, changesPerSecond);
    this.batches = batches;
    this.channel = channel;
    this.delivered = metrics.hostDelivered(id, name);
    this.dropped = metrics.hostDropped(id, name);
  }

  @Override
  public boolean deliver(long messageId, MessageBytes message) {
    if (!channel.isActive() || !channel.isWritable()) {
      dropped.inc();
      return false;
    }
    ByteBuf b = batches.room(channel, Frames.PREFIX_BYTES, message);
    Frames.writePrefix(b, FrameType.DELIVER, message.length);
    batches.body(channel, b, message);
    delivered.inc();
    return true;
  }

  @Override
  public String protocol() {
    return "bdrp";
  }

  @Override
  public java.net.SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }

  @Override
  public long delivered() {
    return delivered.get();
  }

  @Override
  public long dropped() {
    return dropped.get();
  }

  @Override
  public String toString() {
    return "client " + id + " (" + name + ") at " + channel.remoteAddress();
  }
}
