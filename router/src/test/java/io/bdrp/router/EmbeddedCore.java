package io.bdrp.router;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ProtocolErrorCounters;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import java.util.concurrent.TimeUnit;

/**
 * A router's core for tests of one handler on an {@link EmbeddedChannel}: the channel's loop as the
 * router's, the control threads' work run in place, a routing state and metrics of its own.
 */
public final class EmbeddedCore {
  private EmbeddedCore() {}

  public static RouterCore of(RouterConfig config, EmbeddedChannel channel) {
    RoutingNode node =
        new RoutingNode(
            config.router(),
            config.epoch(),
            config.routing(),
            config.bloom(),
            () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
    ProtocolErrorCounters errors = new ProtocolErrorCounters();
    return new RouterCore(
        config,
        channel.eventLoop(),
        Runnable::run, // the control thread, run in place
        Runnable::run,
        new RouterMetrics(new Metrics(), node, errors),
        errors,
        node,
        false,
        new DefaultChannelGroup(channel.eventLoop()),
        () -> {},
        () -> false);
  }
}
