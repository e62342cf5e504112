package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The options of one client, as its {@link BdrpClient.Builder} held them when it connected.
 * Immutable (the token's bytes are never written); read from any thread.
 *
 * @param router the router dialled first
 * @param failover routers dialled in turn when a connection to the one before cannot be opened
 * @param tls a TLS client context, or null for plain TCP
 * @param callbackExecutor where handlers and listeners run, or null for a thread of the client's
 *     own
 * @param group the event-loop group to do I/O on, or null for one of the client's own
 * @param publisherId the publisher id of the client's reliable messages, not 0
 * @param publisherSeqStart the number of the client's first reliable message, at least 1
 * @param maxUnconfirmed how many reliable messages may be sent and unconfirmed at a time
 */
record ClientOptions(
    InetSocketAddress router,
    java.util.List<InetSocketAddress> failover,
    String name,
    byte[] authToken,
    SslContext tls,
    Duration connectTimeout,
    boolean reconnect,
    int maxFrameBytes,
    Consumer<Message> onMessage,
    BdrpClient.ConnectionListener listener,
    Executor callbackExecutor,
    EventLoopGroup group,
    long publisherId,
    long publisherSeqStart,
    int maxUnconfirmed) {

  /** The router's address as HOST:PORT, with the failover routers' if any, for messages. */
  String where() {
    if (failover.isEmpty()) {
      return where(router);
    }
    StringBuilder b = new StringBuilder(where(router)).append(" (or");
    for (InetSocketAddress a : failover) {
      b.append(' ').append(where(a));
    }
    return b.append(')').toString();
  }

  /** Address {@code i} in dialling order: 0 is {@link #router}, then {@link #failover}'s. */
  InetSocketAddress address(int i) {
    return i == 0 ? router : failover.get(i - 1);
  }

  /** How many addresses there are to dial. */
  int addresses() {
    return 1 + failover.size();
  }

  static String where(InetSocketAddress a) {
    return a.getHostString() + ":" + a.getPort();
  }
}
