package io.bdrp.router;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ProtocolErrorCounters;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every part of a router is built with: its configuration, the event loop that forwards and
 * the two control threads beside it, its metrics, its routing state, and the group of channels it
 * closes when it stops. {@link Router} makes it before its parts and hands each part this and the
 * other parts it works with; no part holds the router.
 *
 * @param control the control thread: the index of D, client predicates and the aggregate
 * @param linkControl the links' control thread: large advertisements decoded and encoded, signed
 *     claims verified
 * @param epoll whether the loop runs on Netty's native epoll transport
 * @param channels the channels the router closes when it stops
 * @param rearmTimer re-arms the routing timer after a change of the routing state (on the loop)
 * @param stopping whether the router is stopping
 */
public record RouterCore(
    RouterConfig config,
    EventLoop loop,
    Executor control,
    Executor linkControl,
    RouterMetrics metrics,
    ProtocolErrorCounters errors,
    RoutingNode node,
    boolean epoll,
    ChannelGroup channels,
    Runnable rearmTimer,
    BooleanSupplier stopping) {
  private static final Logger log = LoggerFactory.getLogger(RouterCore.class);

  /**
   * The routing state of a router with this configuration.
   *
   * @throws IllegalStateException if the epoch is further ahead of this clock than
   *     routing.maxEpochAheadMs: neighbours would refuse it
   */
  static RoutingNode routingNode(RouterConfig config) {
    long ahead = config.epoch() - System.currentTimeMillis();
    if (ahead > config.routing().maxEpochAheadMs()) {
      throw new IllegalStateException(
          "epoch "
              + config.epoch()
              + " is "
              + ahead
              + " ms ahead of this clock, more than routing.maxEpochAheadMs ("
              + config.routing().maxEpochAheadMs()
              + "): neighbours would refuse it");
    }
    RoutingNode node =
        new RoutingNode(
            config.router(),
            config.epoch(),
            // Advertisement frames are cut to fit the frame limit, the neighbours' as well as this
            // router's (a federation's routers share limits.maxFrameBytes).
            config.routing().toBuilder()
                .maxControlFrameBytes(
                    Math.min(
                        config.routing().maxControlFrameBytes(), config.limits().maxFrameBytes()))
                .build(),
            config.bloom(),
            () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
    node.useWallClock(System::currentTimeMillis);
    return node;
  }

  /** An event loop of one thread: epoll's when {@code epoll}, NIO's otherwise. */
  static EventLoopGroup group(boolean epoll) {
    return new MultiThreadIoEventLoopGroup(
        1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
  }

  /** A control thread of its own, named (see {@link ControlThread}). */
  static ControlThread thread(String name) {
    return new ControlThread(name);
  }

  /**
   * Runs {@code work} on the control thread and hands its result to {@code done} on the loop (null
   * if the work failed, logged). Once the router stops, neither runs any more.
   */
  <T> void offload(String what, Supplier<T> work, Consumer<T> done) {
    try {
      control.execute(
          () -> {
            T result;
            try {
              result = work.get();
            } catch (RuntimeException e) {
              log.warn("router {}: {} failed", config.router(), what, e);
              result = null;
            }
            T r = result;
            try {
              loop.execute(() -> done.accept(r));
            } catch (RejectedExecutionException closed) {
              // The router has stopped.
            }
          });
    } catch (RejectedExecutionException closed) {
      // The router is stopping: nothing more runs.
    }
  }

  /** The channel class of TCP connections this router dials. */
  public Class<? extends SocketChannel> socketChannel() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** The channel class of UDP sockets. */
  public Class<? extends DatagramChannel> datagramChannel() {
    return epoll ? EpollDatagramChannel.class : NioDatagramChannel.class;
  }

  /** Adds a channel to those the router closes when it stops. */
  public void track(Channel ch) {
    channels.add(ch);
  }

  /** {@code init}, once the channel is among those the router closes when it stops. */
  public <C extends Channel> ChannelInitializer<C> tracked(ChannelHandler init) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(C ch) {
        channels.add(ch);
        ch.pipeline().addLast(init);
      }
    };
  }

  /** Re-arms the routing timer after a change of the routing state (on the loop). */
  public void rearm() {
    rearmTimer.run();
  }

  /** Whether the router is stopping. */
  public boolean closed() {
    return stopping.getAsBoolean();
  }
}
