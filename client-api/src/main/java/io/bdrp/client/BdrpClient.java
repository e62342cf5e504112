package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ClientFrameDecoder;
import io.bdrp.transport.ClientFrameEncoder;
import io.bdrp.transport.FrameDecoder;
import io.bdrp.transport.Frames;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A client of a B-DRP router: it attaches a host to the router, sets the host's predicate and sends
 * and receives messages.
 *
 * <pre>{@code
 * try (BdrpClient c = BdrpClient.builder().router("127.0.0.1", 7400).name("ticker").connect()) {
 *   c.subscribe(Predicate.parse("stock = \"XYZ\" && price > 20"), m -> System.out.println(m));
 *   c.send(Message.builder().put("stock", "XYZ").put("price", 21L).build());
 * }
 * }</pre>
 *
 * <p><b>Subscriptions.</b> A client may hold several subscriptions; the router knows one predicate
 * per host, the disjunction of them all, and each delivered message is handed to the handlers of
 * the subscriptions it satisfies (an exact match done here). {@link #setPredicate} replaces them
 * all with one predicate whose messages go to the {@linkplain Builder#onMessage default handler}.
 *
 * <p><b>Threads.</b> I/O runs on the client's own event-loop thread; handlers and listeners run on
 * a separate single callback thread (or the executor given to the builder), in delivery order, so a
 * slow handler never stalls the connection. Methods may be called from any thread.
 *
 * <p><b>Reconnection.</b> When the session breaks, the client (unless {@linkplain Builder#reconnect
 * disabled}) dials again with growing back-off, up to a few seconds, and re-registers its
 * predicate. Messages sent while disconnected fail their future.
 */
public final class BdrpClient implements AutoCloseable {
  /** Told about the session's state, on the callback thread. */
  public interface ConnectionListener {
    /** A session is open (after the first connect and after every reconnect). */
    default void connected(int routerNumber) {}

    /** The session broke; {@code willReconnect} says whether the client dials again. */
    default void disconnected(Throwable cause, boolean willReconnect) {}

    /** The router reported an error that is not the answer to a request. */
    default void error(int code, String message) {}
  }

  /** A subscription; {@link #cancel()} removes it. */
  public final class Subscription {
    private final Predicate predicate;
    private final Consumer<Message> handler;

    private Subscription(Predicate predicate, Consumer<Message> handler) {
      this.predicate = predicate;
      this.handler = handler;
    }

    /** The subscription's predicate. */
    public Predicate predicate() {
      return predicate;
    }

    /** Removes the subscription; the future completes when the router has the new predicate. */
    public CompletableFuture<Void> cancel() {
      synchronized (BdrpClient.this) {
        subscriptions.remove(this);
      }
      return pushPredicate();
    }
  }

  /** Thrown into futures when the router answers a request with an error. */
  public static final class RouterException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int code;
    private final long position;

    RouterException(int code, String message, long position) {
      super(message + " (code " + code + (position > 0 ? ", at " + position : "") + ")");
      this.code = code;
      this.position = position;
    }

    /** The error code ({@code io.bdrp.transport.ErrorCode} numbers). */
    public int code() {
      return code;
    }

    /** The position (1-based column) the error refers to, or 0. */
    public long position() {
      return position;
    }
  }

  private final Builder options;
  private final EventLoopGroup group;
  private final boolean ownGroup;
  private final ExecutorService ownCallbacks;
  private final java.util.concurrent.Executor callbacks;
  private final List<Subscription> subscriptions = new ArrayList<>();
  private Predicate rawPredicate; // set by setPredicate, when not using subscriptions
  private final Map<Long, CompletableFuture<Void>> pending = new HashMap<>();
  private long nextCorrelation = 1;
  private volatile Channel channel;
  private volatile int routerNumber = -1;
  private volatile boolean closed;
  private CompletableFuture<BdrpClient> firstConnect = new CompletableFuture<>();
  private long backoffMs;

  private BdrpClient(Builder b) {
    this.options = b;
    this.ownGroup = b.group == null;
    this.group =
        b.group != null ? b.group : new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    if (b.callbackExecutor == null) {
      ownCallbacks =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "bdrp-client-callbacks");
                t.setDaemon(true);
                return t;
              });
      callbacks = ownCallbacks;
    } else {
      ownCallbacks = null;
      callbacks = b.callbackExecutor;
    }
  }

  /** A builder with the defaults: router 127.0.0.1:7400, reconnect on. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a client. */
  public static final class Builder {
    private InetSocketAddress router = InetSocketAddress.createUnresolved("127.0.0.1", 7400);
    private String name = "bdrp-client";
    private byte[] authToken = new byte[0];
    private Duration connectTimeout = Duration.ofSeconds(5);
    private boolean reconnect = true;
    private int maxFrameBytes = Frames.DEFAULT_MAX_FRAME_BYTES;
    private Consumer<Message> onMessage = m -> {};
    private ConnectionListener listener = new ConnectionListener() {};
    private java.util.concurrent.Executor callbackExecutor;
    private EventLoopGroup group;

    private Builder() {}

    /**
     * An event-loop group to do I/O on, shared with other clients (default: one thread of this
     * client's own). A shared group is not shut down by {@link BdrpClient#close()}.
     */
    public Builder eventLoopGroup(EventLoopGroup g) {
      this.group = g;
      return this;
    }

    /** The router's client address (default 127.0.0.1:7400). */
    public Builder router(String host, int port) {
      this.router = InetSocketAddress.createUnresolved(host, port);
      return this;
    }

    /** The router's client address. */
    public Builder router(InetSocketAddress address) {
      this.router = Objects.requireNonNull(address);
      return this;
    }

    /** A name for this client in the router's logs and metrics (default "bdrp-client"). */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name);
      return this;
    }

    /** A token the router checks (default none). */
    public Builder authToken(String token) {
      this.authToken = token.getBytes(StandardCharsets.UTF_8);
      return this;
    }

    /** How long a connection attempt may take (default 5 s). */
    public Builder connectTimeout(Duration d) {
      this.connectTimeout = d;
      return this;
    }

    /** Whether to dial again after the session breaks (default true). */
    public Builder reconnect(boolean on) {
      this.reconnect = on;
      return this;
    }

    /** Largest frame accepted from the router (default 1 MiB). */
    public Builder maxFrameBytes(int n) {
      this.maxFrameBytes = n;
      return this;
    }

    /** Handler of messages delivered for a predicate set with {@link #setPredicate}. */
    public Builder onMessage(Consumer<Message> handler) {
      this.onMessage = Objects.requireNonNull(handler);
      return this;
    }

    /** Listener of the session's state. */
    public Builder listener(ConnectionListener l) {
      this.listener = Objects.requireNonNull(l);
      return this;
    }

    /** Where handlers and listeners run (default: one thread of the client's own). */
    public Builder callbackExecutor(java.util.concurrent.Executor e) {
      this.callbackExecutor = e;
      return this;
    }

    /** Connects; the future fails if the first session cannot be opened. */
    public CompletableFuture<BdrpClient> connectAsync() {
      BdrpClient c = new BdrpClient(this);
      c.dial();
      return c.firstConnect;
    }

    /** Connects and waits for the session. */
    public BdrpClient connect() throws IOException, InterruptedException {
      try {
        return connectAsync().get(connectTimeout.toMillis() + 5_000, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IOException("no session with " + router + " within the connect timeout");
      }
    }
  }

  /** The router's address as HOST:PORT, for messages. */
  private String where() {
    return options.router.getHostString() + ":" + options.router.getPort();
  }

  /** The number of the router this client is attached to, or -1 while disconnected. */
  public int routerNumber() {
    return routerNumber;
  }

  /** Whether a session is open. */
  public boolean isConnected() {
    Channel c = channel;
    return c != null && c.isActive() && routerNumber >= 0;
  }

  /**
   * Adds a subscription: {@code handler} gets every message that satisfies {@code p}. The future
   * completes when the router holds the new combined predicate.
   */
  public CompletableFuture<Subscription> subscribe(Predicate p, Consumer<Message> handler) {
    Subscription s = new Subscription(p, handler);
    synchronized (this) {
      rawPredicate = null;
      subscriptions.add(s);
    }
    return pushPredicate().thenApply(v -> s);
  }

  /**
   * Sets this host's predicate, replacing every subscription; delivered messages go to the
   * builder's {@link Builder#onMessage} handler. {@link Predicate#NONE} receives nothing.
   */
  public CompletableFuture<Void> setPredicate(Predicate p) {
    synchronized (this) {
      subscriptions.clear();
      rawPredicate = p;
    }
    return pushPredicate();
  }

  private synchronized Predicate combined() {
    if (rawPredicate != null) {
      return rawPredicate;
    }
    List<Predicate> all = new ArrayList<>();
    for (Subscription s : subscriptions) {
      all.add(s.predicate);
    }
    return all.isEmpty() ? Predicate.NONE : Predicate.or(all);
  }

  private CompletableFuture<Void> pushPredicate() {
    Predicate p = combined();
    return request(id -> new ClientFrame.SetPredicate(id, p));
  }

  /**
   * Sends a message; the future completes when it is written to the router. Sends from any thread
   * are queued and written by the I/O thread in batches, one system call for many messages.
   */
  public CompletableFuture<Void> send(Message m) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    if (!isConnected()) {
      f.completeExceptionally(new IOException("not connected to " + where()));
      return f;
    }
    enqueue(new ClientFrame.Send(0, m), f, 0);
    return f;
  }

  /**
   * A frame waiting for the I/O thread: a send with its future, or a request with its correlation
   * id (its future waits in {@code pending} for the router's answer).
   */
  private record Outgoing(ClientFrame frame, CompletableFuture<Void> written, long correlation) {}

  private final java.util.concurrent.ConcurrentLinkedQueue<Outgoing> outbox =
      new java.util.concurrent.ConcurrentLinkedQueue<>();
  private final java.util.concurrent.atomic.AtomicBoolean drainQueued =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** Queues a frame; everything queued goes out in order, sends and requests alike. */
  private void enqueue(ClientFrame frame, CompletableFuture<Void> written, long correlation) {
    outbox.add(new Outgoing(frame, written, correlation));
    if (drainQueued.compareAndSet(false, true)) {
      Channel c = channel;
      (c != null ? c.eventLoop() : group.next()).execute(this::drain);
    }
  }

  /**
   * On the I/O thread: encodes every queued frame into as few buffers as it can, writes and flushes
   * them once, then settles the futures.
   */
  private void drain() {
    drainQueued.set(false);
    Channel c = channel;
    List<CompletableFuture<Void>> written = new ArrayList<>();
    Outgoing o;
    io.netty.channel.ChannelFuture last = null;
    io.netty.buffer.ByteBuf out = null;
    while ((o = outbox.poll()) != null) {
      if (c == null || !c.isActive()) {
        failed(o, new IOException("not connected to " + where()));
        continue;
      }
      int n;
      try {
        n = ClientFrameCodec.encodedLength(o.frame);
      } catch (RuntimeException e) {
        failed(o, e);
        continue;
      }
      if (out != null && out.writableBytes() < n) {
        last = c.write(out);
        out = null;
      }
      if (out == null) {
        out = c.alloc().directBuffer(Math.max(n, BATCH_BYTES));
      }
      int mark = out.writerIndex();
      try {
        ClientFrameCodec.encode(o.frame, out);
      } catch (RuntimeException e) {
        out.writerIndex(mark);
        failed(o, e);
        continue;
      }
      if (o.written != null) {
        written.add(o.written);
      }
    }
    if (out != null) {
      if (out.isReadable()) {
        last = c.write(out);
      } else {
        out.release();
      }
    }
    if (last == null) {
      return;
    }
    c.flush();
    if (!written.isEmpty()) {
      last.addListener(
          w -> {
            Throwable cause = w.cause();
            callbacks.execute(
                () -> {
                  for (CompletableFuture<Void> f : written) {
                    if (cause == null) {
                      f.complete(null);
                    } else {
                      f.completeExceptionally(cause);
                    }
                  }
                });
          });
    }
  }

  private static final int BATCH_BYTES = 64 * 1024;

  private void failed(Outgoing o, Throwable e) {
    CompletableFuture<Void> w = o.written;
    if (w != null) {
      callbacks.execute(() -> w.completeExceptionally(e));
    } else {
      fail(o.correlation, e);
    }
  }

  /**
   * Completes when the router has answered a PING sent now: everything this client sent before has
   * been taken by the router (it handles a session's frames in order).
   */
  public CompletableFuture<Void> flush() {
    return request(ClientFrame.Ping::new);
  }

  /** Sends a message and completes when the router has accepted it. */
  public CompletableFuture<Void> sendAcknowledged(Message m) {
    return request(id -> new ClientFrame.Send(id, m));
  }

  private CompletableFuture<Void> request(java.util.function.LongFunction<ClientFrame> frame) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    Channel c = channel;
    if (c == null || !isConnected()) {
      if (frame.apply(0) instanceof ClientFrame.SetPredicate) {
        f.complete(null); // sent on the next session anyway
      } else {
        f.completeExceptionally(new IOException("not connected to " + where()));
      }
      return f;
    }
    long id;
    synchronized (this) {
      id = nextCorrelation++;
      pending.put(id, f);
    }
    enqueue(frame.apply(id), null, id);
    return f;
  }

  private void fail(long id, Throwable cause) {
    CompletableFuture<Void> f;
    synchronized (this) {
      f = pending.remove(id);
    }
    if (f != null) {
      f.completeExceptionally(cause);
    }
  }

  // ---- session ----

  private void dial() {
    if (closed) {
      return;
    }
    InetSocketAddress a = options.router;
    InetSocketAddress target =
        a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a;
    new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) options.connectTimeout.toMillis())
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                ch.pipeline()
                    .addLast(new FrameDecoder(options.maxFrameBytes))
                    .addLast(new ClientFrameDecoder(options.maxFrameBytes))
                    .addLast(new ClientFrameEncoder())
                    .addLast(new Handler());
              }
            })
        .connect(target)
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                broken(f.cause());
              }
            });
  }

  private void broken(Throwable cause) {
    boolean again = options.reconnect && !closed && firstConnect.isDone();
    routerNumber = -1;
    List<CompletableFuture<Void>> waiting;
    synchronized (this) {
      waiting = new ArrayList<>(pending.values());
      pending.clear();
    }
    IOException io =
        cause instanceof IOException e
            ? e
            : new IOException("session with " + where() + " lost", cause);
    waiting.forEach(w -> w.completeExceptionally(io));
    if (!firstConnect.isDone()) {
      firstConnect.completeExceptionally(
          new IOException("cannot connect to " + where() + ": " + cause.getMessage(), cause));
      return;
    }
    if (closed) {
      return;
    }
    callbacks.execute(() -> options.listener.disconnected(cause, again));
    if (again) {
      backoffMs = Math.min(5_000, backoffMs == 0 ? 100 : backoffMs * 2);
      group.schedule(this::dial, backoffMs, TimeUnit.MILLISECONDS);
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<ClientFrame> {
    private boolean helloDone;
    private List<Message> delivered = new ArrayList<>();

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (!delivered.isEmpty()) {
        dispatch(delivered);
        delivered = new ArrayList<>();
      }
      ctx.fireChannelReadComplete();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.writeAndFlush(new ClientFrame.Hello(Frames.VERSION, options.name, options.authToken));
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
      switch (f) {
        case ClientFrame.HelloOk ok -> {
          helloDone = true;
          channel = ctx.channel();
          routerNumber = ok.routerNumber();
          backoffMs = 0;
          Predicate p = combined();
          if (!p.equals(Predicate.NONE)) {
            ctx.writeAndFlush(
                new ClientFrame.SetPredicate(0, p)); // re-registered after a reconnect
          }
          firstConnect.complete(BdrpClient.this);
          callbacks.execute(() -> options.listener.connected(ok.routerNumber()));
        }
        case ClientFrame.Ok ok -> complete(ok.correlationId(), null);
        case ClientFrame.Error e -> {
          RouterException ex = new RouterException(e.code(), e.message(), e.position());
          if (e.correlationId() != 0 && complete(e.correlationId(), ex)) {
            return;
          }
          if (!helloDone && !firstConnect.isDone()) {
            firstConnect.completeExceptionally(ex);
          }
          callbacks.execute(() -> options.listener.error(e.code(), e.message()));
        }
        case ClientFrame.Deliver d -> delivered.add(d.message());
        case ClientFrame.Ping p -> ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
        case ClientFrame.Pong p -> complete(p.nonce(), null);
        case ClientFrame.Bye b -> ctx.close();
        default -> {}
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (channel == ctx.channel()) {
        channel = null;
      }
      broken(new IOException("session with " + where() + " closed"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  private boolean complete(long id, Throwable error) {
    CompletableFuture<Void> f;
    synchronized (this) {
      f = pending.remove(id);
    }
    if (f == null) {
      return false;
    }
    if (error == null) {
      callbacks.execute(() -> f.complete(null));
    } else {
      callbacks.execute(() -> f.completeExceptionally(error));
    }
    return true;
  }

  /**
   * Hands a batch of delivered messages (one read's worth) to the callback thread in one task: a
   * thread wake-up per batch rather than per message.
   */
  private void dispatch(List<Message> batch) {
    List<Subscription> subs;
    boolean raw;
    synchronized (this) {
      subs = subscriptions.isEmpty() ? List.of() : new ArrayList<>(subscriptions);
      raw = rawPredicate != null;
    }
    callbacks.execute(
        () -> {
          for (Message m : batch) {
            if (raw) {
              options.onMessage.accept(m);
              continue;
            }
            for (Subscription s : subs) {
              if (s.predicate.matches(m)) {
                s.handler.accept(m);
              }
            }
          }
        });
  }

  /** Says goodbye, closes the session and stops the client's threads. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Channel c = channel;
    if (c != null && c.isActive()) {
      c.writeAndFlush(new ClientFrame.Bye()).awaitUninterruptibly(1, TimeUnit.SECONDS);
      c.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
    }
    if (ownGroup) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
    if (ownCallbacks != null) {
      ownCallbacks.shutdown();
    }
  }
}
