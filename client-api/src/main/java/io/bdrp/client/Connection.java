package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameDecoder;
import io.bdrp.transport.ClientFrameEncoder;
import io.bdrp.transport.DeliverReader;
import io.bdrp.transport.FrameDecoder;
import io.bdrp.transport.ProtocolException;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client's connection to its router, across reconnects: dials, builds each connection's pipeline
 * (TLS, frame codec, {@link SessionHandler}), keeps the channel of the open session, and when a
 * session breaks fails the requests still waiting and dials again after the {@link Backoff}'s wait;
 * re-registers the predicate on every new session, then has the {@link ReliableSender} send its
 * unconfirmed messages again. Reliable messages outlive a broken session; they fail only when the
 * client is closed or will not dial again. The first session that fails to open ends the client
 * instead. The session's fields are written on the I/O thread and read from any thread (volatile);
 * {@link #close()} may be called from any thread.
 */
final class Connection implements SessionHandler.Session {
  private final BdrpClient client;
  private final ClientOptions options;
  private final ClientThreads threads;
  private final Requests requests;
  private final Subscriptions subscriptions;
  private final ReliableSender reliable;
  private final AtomicLong refusedFrames;
  private final Backoff backoff = new Backoff();

  /** Completes with the first session, or fails if it cannot be opened. */
  final CompletableFuture<BdrpClient> firstConnect = new CompletableFuture<>();

  /** Set once the channel, the group and the callback executor have been told to stop. */
  private final AtomicBoolean released = new AtomicBoolean();

  /** Set once the first session has failed; the client then releases itself. */
  private final AtomicBoolean firstFailed = new AtomicBoolean();

  /** The channel of the latest connection attempt, open or not, with or without a session. */
  private volatile Channel attempt;

  private volatile Channel channel;
  private volatile int routerNumber = -1;

  /** Which of the options' addresses the next connection is opened to. */
  private volatile int at;

  private volatile boolean closed;

  Connection(
      BdrpClient client,
      ClientOptions options,
      ClientThreads threads,
      Requests requests,
      Subscriptions subscriptions,
      ReliableSender reliable,
      AtomicLong refusedFrames) {
    this.client = client;
    this.refusedFrames = refusedFrames;
    this.options = options;
    this.threads = threads;
    this.requests = requests;
    this.subscriptions = subscriptions;
    this.reliable = reliable;
  }

  /** The channel of the open session, or null. */
  Channel channel() {
    return channel;
  }

  /** The number of the router this client is attached to, or -1 while disconnected. */
  int routerNumber() {
    return routerNumber;
  }

  /** Whether a session is open. */
  boolean isConnected() {
    Channel c = channel;
    return c != null && c.isActive() && routerNumber >= 0;
  }

  /** Opens a connection; what becomes of it arrives at this object's {@link SessionHandler}. */
  void dial() {
    if (closed) {
      return;
    }
    try {
      InetSocketAddress a = options.address(at);
      InetSocketAddress target =
          a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a;
      ChannelFuture connecting = bootstrap().connect(target);
      attempt = connecting.channel();
      if (released.get()) {
        attempt.close(); // closed while this attempt was being set up
      }
      connecting.addListener(
          f -> {
            if (!f.isSuccess()) {
              broken(f.cause());
            }
          });
    } catch (RuntimeException e) {
      broken(e);
    }
  }

  /**
   * The session's buffers: on the heap. The client decodes every message it is delivered and
   * encodes every one it sends through NIO views of its buffers; a view of an array reads a byte as
   * an array does, where a view of direct memory checks its bounds and its memory's liveness at
   * every read (without {@code sun.misc.Unsafe}, as on JDK 24 and later, Netty's direct buffers are
   * such views). The socket's reads and writes go through the JDK's own direct buffers.
   */
  private static final io.netty.buffer.ByteBufAllocator HEAP =
      new io.netty.channel.PreferHeapByteBufAllocator(io.netty.buffer.ByteBufAllocator.DEFAULT);

  private Bootstrap bootstrap() {
    InetSocketAddress dialled = options.address(at);
    return new Bootstrap()
        .group(threads.group())
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) options.connectTimeout().toMillis())
        .option(ChannelOption.ALLOCATOR, HEAP)
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                if (options.tls() != null) {
                  ch.pipeline()
                      .addLast(
                          options
                              .tls()
                              .newHandler(ch.alloc(), dialled.getHostString(), dialled.getPort()));
                }
                SessionHandler session = new SessionHandler(options, requests, Connection.this);
                FrameDecoder frames = new FrameDecoder(options.maxFrameBytes());
                // DELIVER frames are read where they lie, into the session's batch; the others
                // go on through the frame decoder, in order with them.
                frames.inPlace(new DeliverReader(session));
                ch.pipeline()
                    .addLast(frames)
                    .addLast(new ClientFrameDecoder(options.maxFrameBytes()))
                    .addLast(new ClientFrameEncoder())
                    .addLast(session);
              }
            });
  }

  @Override
  public boolean opened(Channel ch, int number) {
    if (closed) {
      return false;
    }
    channel = ch;
    routerNumber = number;
    backoff.reset();
    Predicate p = subscriptions.combined();
    if (!p.equals(Predicate.NONE)) {
      ch.writeAndFlush(new ClientFrame.SetPredicate(0, p)); // re-registered after a reconnect
    }
    reliable.opened(ch); // unconfirmed messages again, in order, before any new one
    firstConnect.complete(client);
    threads.callback(() -> options.listener().connected(number));
    return true;
  }

  @Override
  public void delivered(List<Message> batch) {
    subscriptions.dispatch(batch);
  }

  @Override
  public void refused(int code, String message) {
    if (firstConnect.isDone()) { // refused on a reconnect: the listener hears of it
      threads.callback(() -> options.listener().error(code, message));
    }
  }

  @Override
  public void error(int code, String message) {
    threads.callback(() -> options.listener().error(code, message));
  }

  @Override
  public void confirmed(Channel ch, long publisher, long firstSeq, long lastSeq) {
    reliable.confirmed(ch, publisher, firstSeq, lastSeq);
  }

  @Override
  public void unreached(Channel ch, ClientFrame.Unreached unreached) {
    reliable.unreached(ch, unreached);
  }

  @Override
  public void reliableRefused(Channel ch, long correlationId, BdrpClient.RouterException error) {
    reliable.refused(ch, correlationId, error);
  }

  @Override
  public void reliableBarrier(Channel ch) {
    reliable.barrierPassed(ch);
  }

  @Override
  public void ended(Channel ch, Throwable cause) {
    if (cause instanceof ProtocolException) {
      refusedFrames.incrementAndGet(); // the router sent a frame that does not decode
    }
    if (channel == ch) {
      channel = null;
    }
    reliable.closed(ch);
    broken(cause);
  }

  /** The attempt or the session failed: fail what waits, then end the client or dial again. */
  private void broken(Throwable cause) {
    boolean wasOpen = routerNumber >= 0;
    routerNumber = -1;
    requests.failAll(
        cause instanceof IOException e
            ? e
            : new IOException("session with " + options.where() + " lost", cause));
    if (!wasOpen && options.addresses() > 1) {
      // This router could not be reached or would not open a session: the next one is tried.
      if (!firstConnect.isDone()
          && !(cause instanceof BdrpClient.RouterException)
          && at + 1 < options.addresses()) {
        at++;
        threads.group().execute(this::dial); // the first connect tries each router once
        return;
      }
      at = (at + 1) % options.addresses();
    }
    if (!firstConnect.isDone()) {
      failFirst(
          cause instanceof BdrpClient.RouterException refused
              ? refused
              : new IOException(
                  "cannot connect to " + options.where() + ": " + describe(cause), cause));
      return;
    }
    if (closed) {
      return;
    }
    boolean again = options.reconnect();
    if (!again) {
      reliable.end(
          new IOException(
              "session with " + options.where() + " lost before the message was confirmed", cause));
    }
    threads.callback(() -> options.listener().disconnected(cause, again));
    if (again) {
      threads.group().schedule(this::dial, backoff.nextDelayMs(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A failure's message, with its root cause's where that says more (a TLS engine's handshake
   * failure names the certificate problem only in its cause).
   */
  static String describe(Throwable cause) {
    String m = message(cause);
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String r = message(root);
    return root == cause || m.contains(r) ? m : m + " (" + r + ")";
  }

  private static String message(Throwable t) {
    String m = t.getMessage();
    return m != null && !m.isBlank() ? m : t.getClass().getSimpleName();
  }

  /**
   * The first session could not be opened: no reconnecting, the channel and the threads are
   * released, then the connect future fails. Runs once, on whichever thread saw the failure.
   */
  private void failFirst(IOException e) {
    if (!firstFailed.compareAndSet(false, true)) {
      return;
    }
    closed = true;
    release(false);
    firstConnect.completeExceptionally(e);
  }

  /** The client is closed: no more dialling; says BYE, closes the channel, stops the threads. */
  void close() {
    closed = true;
    release(true);
    reliable.end(new IOException("client closed before the message was confirmed"));
  }

  /**
   * Closes the channel and tells the group and the callback executor to stop, once; never blocks on
   * the event loop. {@code goodbye}: say BYE first to a router with a session.
   */
  private void release(boolean goodbye) {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    Channel c = attempt;
    if (c != null) {
      boolean session = goodbye && c == channel && c.isActive();
      if (!c.isRegistered() || c.eventLoop().inEventLoop()) {
        if (session) {
          c.writeAndFlush(new ClientFrame.Bye());
        }
        c.close();
      } else {
        if (session) {
          c.writeAndFlush(new ClientFrame.Bye()).awaitUninterruptibly(1, TimeUnit.SECONDS);
        }
        c.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
      }
    }
    threads.shutdown();
  }
}
