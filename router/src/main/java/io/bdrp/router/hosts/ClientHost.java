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
 * <p>Owned by the router's event loop, but for {@link #filters}, which the control thread keeps.
 */
final class ClientHost implements Hosts.Output {
  final int id;
  final Channel channel;
  final String name;
  final Metrics.Counter delivered;
  final Metrics.Counter dropped;
  final ClientAuth.Permissions permissions;

  /** The user whose sessions and filters are counted together, or null (anonymous). */
  final String user;

  /** Filters of the predicate now set, as counted against the limits (on the control thread). */
  long filters;

  /** Predicate changes the session may still make now (a token bucket). */
  double changeTokens;

  long changeTokensAt;

  private final OutputBatches batches;

  ClientHost(
      int id,
      Channel channel,
      String name,
      ClientAuth.Permissions permissions,
      RouterMetrics metrics,
      OutputBatches batches) {
    this.id = id;
    this.batches = batches;
    this.channel = channel;
    this.name = name;
    this.permissions = permissions;
    this.user = userOf(permissions);
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
  public String toString() {
    return "client " + id + " (" + name + ") at " + channel.remoteAddress();
  }

  /** The user whose sessions and filters are counted together, or null for an open router's. */
  static String userOf(ClientAuth.Permissions permissions) {
    return permissions == ClientAuth.Permissions.ALL ? null : permissions.user();
  }
}
