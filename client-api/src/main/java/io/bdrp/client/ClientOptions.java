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

  /** The router's address as HOST:PORT, for messages. */
  String where() {
    return router.getHostString() + ":" + router.getPort();
  }
}
