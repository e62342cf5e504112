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
import io.netty.util.concurrent.DefaultThreadFactory;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A client of a B-DRP router: it attaches a host to the router, sets the host's predicate and sends
 * and receives messages.
 *
 * <pre>{@code
 * BlockingQueue<Message> received = new ArrayBlockingQueue<>(16);
 * try (BdrpClient c = BdrpClient.builder().router("127.0.0.1", 7400).name("ticker").connect()) {
 *   // Wait until the router holds the predicate, then until it has taken the message.
 *   c.subscribe(Predicate.parse("stock = \"XYZ\" && price > 20"), received::add).get();
 *   c.sendAcknowledged(Message.builder().put("stock", "XYZ").put("price", 21L).build()).get();
 *   System.out.println(received.poll(10, TimeUnit.SECONDS)); // handlers run on another thread
 * }
 * }</pre>
 *
 * <p>docs/client.md is the guide: how to get the library, a complete example, and these rules.
 *
 * <p><b>Subscriptions.</b> A client may hold several subscriptions; the router knows one predicate
 * per host, the disjunction of them all, and each delivered message is handed to the handlers of
 * the subscriptions it satisfies (an exact match done here). {@link #setPredicate} replaces them
 * all with one predicate whose messages go to the {@linkplain Builder#onMessage default handler}.
 *
 * <p><b>Threads.</b> I/O runs on the client's own event-loop thread; handlers and listeners run on
 * a separate single callback thread (or the executor given to the builder), in delivery order, so a
 * slow handler never stalls the connection. Methods may be called from any thread. The client's own
 * threads are daemon threads: they never keep the JVM alive on their own, so a program that waits
 * for messages must wait itself (on a latch, a queue, ...) until it has what it wants.
 *
 * <p><b>Resources.</b> {@link #close()} releases everything the client holds: the session, its
 * event-loop thread (unless the group was {@linkplain Builder#eventLoopGroup given}) and its
 * callback thread; called from any other thread than the client's own, it returns once those
 * threads have ended. A {@link Builder#connect()} that fails (connection refused, connect timeout,
 * no answer to HELLO, HELLO refused with an ERROR, the router closing the connection during the
 * handshake, a malformed frame) has released the same before it throws, and has made no attempt to
 * reconnect; a failed {@link Builder#connectAsync()} has released them (its threads end within
 * moments) before its future fails.
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

  /** Every thread this client has started (its own event loop and callback thread). */
  private final List<Thread> ownThreads = new CopyOnWriteArrayList<>();

  /** Set once the channel, the group and the callback executor have been told to stop. */
  private final AtomicBoolean released = new AtomicBoolean();

  /** Set once the first session has failed; the client then releases itself. */
  private final AtomicBoolean firstFailed = new AtomicBoolean();

  /** The channel of the latest connection attempt, open or not, with or without a session. */
  private volatile Channel attempt;

  private final List<Subscription> subscriptions = new ArrayList<>();
  private Predicate rawPredicate; // set by setPredicate, when not using subscriptions
  private final Map<Long, CompletableFuture<Void>> pending = new HashMap<>();
  private long nextCorrelation = 1;
  private volatile Channel channel;
  private volatile int routerNumber = -1;
  private volatile boolean closed;
  private final CompletableFuture<BdrpClient> firstConnect = new CompletableFuture<>();
  private long backoffMs;

  private BdrpClient(Builder b) {
    this.options = b;
    this.ownGroup = b.group == null;
    if (ownGroup) {
      ThreadFactory io = new DefaultThreadFactory("bdrp-client-io", true);
      this.group =
          new MultiThreadIoEventLoopGroup(
              1,
              r -> {
                Thread t = io.newThread(r);
                ownThreads.add(t);
                return t;
              },
              NioIoHandler.newFactory());
    } else {
      this.group = b.group;
    }
    if (b.callbackExecutor == null) {
      ownCallbacks =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "bdrp-client-callbacks");
                t.setDaemon(true);
                ownThreads.add(t);
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
    private io.netty.handler.ssl.SslContext tls;
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

    /**
     * Speaks TLS 1.3 to the router and trusts the certificate authorities in {@code caFile} (PEM):
     * the router's certificate must be signed by one of them and name the host or address dialled.
     * The engine is Netty's default: BoringSSL when {@code netty-tcnative-boringssl-static} is on
     * the class path and loads, the JDK's otherwise.
     *
     * @throws IllegalArgumentException if the file cannot be read as PEM certificates
     */
    public Builder tls(java.nio.file.Path caFile) {
      return tls(caFile, null, null);
    }

    /**
     * As {@link #tls(java.nio.file.Path)}, presenting a client certificate and its PKCS#8 key (PEM)
     * too: a router with {@code tls.clientCa} takes the user the certificate names ({@code
     * urn:bdrp:user:NAME}) without a token.
     *
     * @throws IllegalArgumentException if the files cannot be used
     */
    public Builder tls(java.nio.file.Path caFile, java.nio.file.Path cert, java.nio.file.Path key) {
      try {
        io.netty.handler.ssl.SslContextBuilder b =
            io.netty.handler.ssl.SslContextBuilder.forClient()
                .protocols("TLSv1.3")
                .trustManager(caFile.toFile())
                .endpointIdentificationAlgorithm("HTTPS");
        if (cert != null) {
          b.keyManager(cert.toFile(), key.toFile());
        }
        this.tls = b.build();
      } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "cannot use " + caFile + " as certificate authorities: " + e.getMessage(), e);
      }
      return this;
    }

    /** A token the router checks (default none). */
    public Builder authToken(String token) {
      this.authToken = token.getBytes(StandardCharsets.UTF_8);
      return this;
    }

    /**
     * How long a connection attempt may take (default 5 s): the TCP connect, and then again the
     * router's answer to HELLO.
     */
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

    /**
     * Connects; the future fails (with an {@link IOException}, a {@link RouterException} when the
     * router refused the HELLO) if the first session cannot be opened, after the client has
     * released its channel and told its threads to stop.
     */
    public CompletableFuture<BdrpClient> connectAsync() {
      BdrpClient c = new BdrpClient(this);
      c.dial();
      return c.firstConnect;
    }

    /**
     * Connects and waits for the session. When it throws, the client has closed its connection and
     * every thread it started has ended.
     *
     * @throws RouterException the router refused the HELLO (bad token, version, ...)
     * @throws IOException no session: refused, timed out, closed during the handshake
     * @throws InterruptedException interrupted while waiting (the client is closed first)
     */
    public BdrpClient connect() throws IOException, InterruptedException {
      BdrpClient c = new BdrpClient(this);
      c.dial();
      // Safety net only: the TCP connect and the HELLO each time out by themselves.
      long waitMs = 2 * connectTimeout.toMillis() + 5_000;
      try {
        return c.firstConnect.get(waitMs, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        c.close();
        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        c.close();
        throw new IOException("no session with " + c.where() + " within " + waitMs + " ms");
      } catch (InterruptedException e) {
        c.close();
        throw e;
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
            settle(
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
      settle(() -> w.completeExceptionally(e));
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
    try {
      InetSocketAddress a = options.router;
      InetSocketAddress target =
          a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a;
      io.netty.channel.ChannelFuture connecting = bootstrap().connect(target);
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

  private Bootstrap bootstrap() {
    return new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) options.connectTimeout.toMillis())
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                if (options.tls != null) {
                  ch.pipeline()
                      .addLast(
                          options.tls.newHandler(
                              ch.alloc(),
                              options.router.getHostString(),
                              options.router.getPort()));
                }
                ch.pipeline()
                    .addLast(new FrameDecoder(options.maxFrameBytes))
                    .addLast(new ClientFrameDecoder(options.maxFrameBytes))
                    .addLast(new ClientFrameEncoder())
                    .addLast(new Handler());
              }
            });
  }

  private void broken(Throwable cause) {
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
      failFirst(
          cause instanceof RouterException refused
              ? refused
              : new IOException("cannot connect to " + where() + ": " + describe(cause), cause));
      return;
    }
    if (closed) {
      return;
    }
    boolean again = options.reconnect;
    callback(() -> options.listener.disconnected(cause, again));
    if (again) {
      backoffMs = Math.min(5_000, backoffMs == 0 ? 100 : backoffMs * 2);
      group.schedule(this::dial, backoffMs, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A failure's message, with its root cause's where that says more (a TLS engine's handshake
   * failure names the certificate problem only in its cause).
   */
  private static String describe(Throwable cause) {
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

  /**
   * Runs a handler or listener on the callback executor; dropped once that executor has stopped
   * (after {@link #close()}).
   */
  private void callback(Runnable r) {
    try {
      callbacks.execute(r);
    } catch (RejectedExecutionException e) {
      // closed: nobody listens any more
    }
  }

  /**
   * Completes futures on the callback executor, or here once that executor has stopped, so that no
   * future is left pending by a close.
   */
  private void settle(Runnable r) {
    try {
      callbacks.execute(r);
    } catch (RejectedExecutionException e) {
      r.run();
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<ClientFrame> {
    private boolean helloDone;
    private List<Message> delivered = new ArrayList<>();

    /** Why the connection is being closed, when this side closes it during the handshake. */
    private Throwable failure;

    private io.netty.util.concurrent.ScheduledFuture<?> helloTimer;

    /** Ends the connection during the handshake, for a reason reported to the connect future. */
    private void abandon(ChannelHandlerContext ctx, Throwable why) {
      if (failure == null) {
        failure = why;
      }
      ctx.close();
    }

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
      long ms = options.connectTimeout.toMillis();
      helloTimer =
          ctx.executor()
              .schedule(
                  () -> {
                    if (!helloDone) {
                      abandon(ctx, new IOException("no answer to HELLO within " + ms + " ms"));
                    }
                  },
                  ms,
                  TimeUnit.MILLISECONDS);
      ctx.writeAndFlush(new ClientFrame.Hello(Frames.VERSION, options.name, options.authToken));
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
      switch (f) {
        case ClientFrame.HelloOk ok -> {
          if (helloDone) {
            return;
          }
          helloDone = true;
          helloTimer.cancel(false);
          if (closed) {
            ctx.close();
            return;
          }
          channel = ctx.channel();
          routerNumber = ok.routerNumber();
          backoffMs = 0;
          Predicate p = combined();
          if (!p.equals(Predicate.NONE)) {
            ctx.writeAndFlush(
                new ClientFrame.SetPredicate(0, p)); // re-registered after a reconnect
          }
          firstConnect.complete(BdrpClient.this);
          callback(() -> options.listener.connected(ok.routerNumber()));
        }
        case ClientFrame.Ok ok -> complete(ok.correlationId(), null);
        case ClientFrame.Error e -> {
          if (!helloDone) {
            // The router refused the HELLO; it closes the connection, and so does this side.
            abandon(
                ctx,
                new RouterException(
                    e.code(), "router " + where() + " refused the session: " + e.message(), 0));
            if (firstConnect.isDone()) { // refused on a reconnect: the listener hears of it
              callback(() -> options.listener.error(e.code(), e.message()));
            }
            return;
          }
          RouterException ex = new RouterException(e.code(), e.message(), e.position());
          if (e.correlationId() != 0 && complete(e.correlationId(), ex)) {
            return;
          }
          callback(() -> options.listener.error(e.code(), e.message()));
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
      if (helloTimer != null) {
        helloTimer.cancel(false);
      }
      if (channel == ctx.channel()) {
        channel = null;
      }
      if (failure != null) {
        broken(failure);
      } else if (!helloDone) {
        broken(new IOException("the router closed the connection during the handshake"));
      } else {
        broken(new IOException("session with " + where() + " closed"));
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (!helloDone) {
        abandon(ctx, cause);
      } else {
        ctx.close();
      }
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
      settle(() -> f.complete(null));
    } else {
      settle(() -> f.completeExceptionally(error));
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
    callback(
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

  /**
   * Says goodbye, closes the session and stops the client's threads. Called from a thread other
   * than the client's own, it returns when those threads have ended (or after a few seconds, if a
   * handler does not return); called from a handler or listener, it does not wait for them. Closing
   * again does nothing more (but waits likewise).
   */
  @Override
  public void close() {
    closed = true;
    release(true);
    if (!ownThreads.contains(Thread.currentThread())) {
      awaitThreads(TimeUnit.SECONDS.toNanos(5));
    }
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
    if (ownGroup) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
    if (ownCallbacks != null) {
      ownCallbacks.shutdown();
    }
  }

  /** Waits, up to {@code nanos}, for the group to terminate and every own thread to end. */
  private void awaitThreads(long nanos) {
    long deadline = System.nanoTime() + nanos;
    boolean interrupted = false;
    if (ownGroup) {
      group.terminationFuture().awaitUninterruptibly(nanos, TimeUnit.NANOSECONDS);
    }
    for (Thread t : ownThreads) {
      while (t.isAlive()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
