package io.bdrp.router;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.TlsFiles;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's listening ports: binding one with an error that names the configuration field, and
 * the warnings a router gives at start about what its ports expose.
 */
public final class RouterPorts {
  private static final Logger log = LoggerFactory.getLogger(Router.class);

  private RouterPorts() {}

  /** {@code a}, resolved if it was read unresolved from a file. */
  public static InetSocketAddress resolve(InetSocketAddress a) {
    return a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a;
  }

  /**
   * Listens on {@code address} with {@code init} for each connection (every connection, and the
   * listening channel, among {@code channels}).
   *
   * @throws IllegalStateException naming {@code field} if the address cannot be bound
   */
  static Channel listen(
      EventLoopGroup on,
      boolean epoll,
      ChannelGroup channels,
      String field,
      InetSocketAddress address,
      ChannelInitializer<? extends Channel> init)
      throws InterruptedException {
    ServerBootstrap b =
        new ServerBootstrap()
            .group(on)
            .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    channels.add(ch);
                    ch.pipeline().addLast(init);
                  }
                });
    var f = b.bind(resolve(address)).await();
    if (!f.isSuccess()) {
      String why = f.cause().getMessage();
      if (why != null && why.contains("Address already in use")) {
        why = "the address is in use (another router, or another program)";
      }
      throw new IllegalStateException(
          field
              + ": cannot listen on "
              + address.getHostString()
              + ":"
              + address.getPort()
              + ": "
              + why,
          f.cause());
    }
    channels.add(f.channel());
    return f.channel();
  }

  /**
   * At start: the TLS engine in use, and a WARN for each thing the ports expose that the
   * configuration does not protect (clear datagrams beside TLS links, a router port that takes any
   * process as a neighbour, a client port in clear or open to anyone beyond loopback).
   */
  static void warnExposure(RouterConfig config, Channel clientServer, Channel routerServer) {
    if (config.clientTls() != null || config.routerTls() != null) {
      log.info("router {}: TLS engine {}", config.router(), TlsFiles.engineDescription());
    }
    if (config.routerTls() != null && config.usesUdp()) {
      log.warn(
          "router {}: router links use TLS, but DATA to neighbours with transport udp goes in"
              + " clear datagrams",
          config.router());
    }
    boolean routersExposed =
        !((InetSocketAddress) routerServer.localAddress()).getAddress().isLoopbackAddress();
    if (routersExposed && config.routerTls() == null && config.routerToken() == null) {
      log.warn(
          "router {}: the router port {} takes any process as a neighbour, under any router"
              + " number it claims: the config has neither auth.routerToken nor tls.ca (mutual"
              + " TLS); see docs/security.md",
          config.router(),
          routerServer.localAddress());
    }
    // The address bound (the configured one is unresolved, as read from the file).
    java.net.InetAddress clientHost =
        ((InetSocketAddress) clientServer.localAddress()).getAddress();
    boolean exposed = !clientHost.isLoopbackAddress();
    if (exposed && config.clientTls() == null) {
      log.warn(
          "router {}: the client port {} speaks plain TCP beyond loopback: tokens, predicates and"
              + " messages cross the network in clear (set tls.cert and tls.key; see"
              + " docs/security.md)",
          config.router(),
          clientServer.localAddress());
    }
    if (config.clientAuth().open() && exposed) {
      log.warn(
          "router {}: the client port {} serves any client that reaches it, with every permission:"
              + " the config has no auth.clients (see docs/security.md)",
          config.router(),
          clientServer.localAddress());
    } else if (!config.clientAuth().open()) {
      log.info(
          "router {}: clients: {} users, anonymous {}",
          config.router(),
          config.clientAuth().users().size(),
          config.clientAuth().authenticate(new byte[0]) == null ? "refused" : "allowed");
    }
  }
}
