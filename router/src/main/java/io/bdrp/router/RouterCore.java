package io.bdrp.router;

import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ProtocolErrorCounters;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

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
record RouterCore(
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

  /** The channel class of TCP connections this router dials. */
  Class<? extends SocketChannel> socketChannel() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** The channel class of UDP sockets. */
  Class<? extends DatagramChannel> datagramChannel() {
    return epoll ? EpollDatagramChannel.class : NioDatagramChannel.class;
  }

  /** Adds a channel to those the router closes when it stops. */
  void track(Channel ch) {
    channels.add(ch);
  }

  /** {@code init}, once the channel is among those the router closes when it stops. */
  <C extends Channel> ChannelInitializer<C> tracked(ChannelHandler init) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(C ch) {
        channels.add(ch);
        ch.pipeline().addLast(init);
      }
    };
  }

  /** Re-arms the routing timer after a change of the routing state (on the loop). */
  void rearm() {
    rearmTimer.run();
  }

  /** Whether the router is stopping. */
  boolean closed() {
    return stopping.getAsBoolean();
  }
}
