package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.Frames;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;

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
 * predicate. Messages sent while disconnected fail their future, except reliable ones.
 *
 * <p><b>Reliable messages.</b> {@link #sendReliable} numbers each message as one of this client's
 * {@linkplain #publisherId() publisher}, keeps it until the router confirms that every router whose
 * hosts want it has it, and sends it again, in order, after every reconnect; destination routers
 * drop what they delivered already, so no host receives a message twice.
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
    private final Subscriptions.Entry entry;

    private Subscription(Predicate predicate, Consumer<Message> handler) {
      this.entry = new Subscriptions.Entry(predicate, handler);
    }

    /** The subscription's predicate. */
    public Predicate predicate() {
      return entry.predicate;
    }

    /** Removes the subscription; the future completes when the router has the new predicate. */
    public CompletableFuture<Void> cancel() {
      subscriptions.remove(entry);
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

  /**
   * Thrown into the future of a reliable message when the router gave up on it: some routers whose
   * hosts wanted it did not acknowledge it before the router's retention ended (a partition that
   * lasted longer than a minute). The other routers of its destination set have it.
   */
  public static final class UnreachedException extends IOException {
    private static final long serialVersionUID = 1L;
    private final long publisherSeq;
    private final int[] routers;

    UnreachedException(long publisherSeq, int[] routers) {
      super(
          "reliable message "
              + publisherSeq
              + " did not reach router"
              + (routers.length == 1 ? " " : "s ")
              + java.util.Arrays.toString(routers));
      this.publisherSeq = publisherSeq;
      this.routers = routers.clone();
    }

    /** The message's number (the publisher's sequence number it was sent with). */
    public long publisherSeq() {
      return publisherSeq;
    }

    /** The numbers of the routers that never acknowledged the message. */
    public int[] routers() {
      return routers.clone();
    }
  }

  // The parts of a client (docs/client.md, "Inside the client"); each says which thread owns it.
  private final ClientOptions options;
  private final ClientThreads threads;
  private final Requests requests;
  private final Subscriptions subscriptions;
  private final Connection connection;
  private final Outbox outbox;
  private final ReliableSender reliable;
  private final java.util.concurrent.atomic.AtomicLong refusedFrames =
      new java.util.concurrent.atomic.AtomicLong();

  private BdrpClient(ClientOptions options) {
    this.options = options;
    this.threads = new ClientThreads(options.group(), options.callbackExecutor());
    this.requests = new Requests(threads::settle);
    this.subscriptions = new Subscriptions(options.onMessage(), threads::callback);
    this.reliable =
        new ReliableSender(
            options.publisherId(),
            options.publisherSeqStart(),
            options.maxUnconfirmed(),
            threads::settle,
            refusedFrames);
    this.connection =
        new Connection(this, options, threads, requests, subscriptions, reliable, refusedFrames);
    this.outbox =
        new Outbox(
            connection::channel, threads.group(), requests, threads::settle, options.where());
  }

  /** A builder with the defaults: router 127.0.0.1:7400, reconnect on. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a client. */
  public static final class Builder {
    private InetSocketAddress router = InetSocketAddress.createUnresolved("127.0.0.1", 7400);
    private final java.util.List<InetSocketAddress> failover = new java.util.ArrayList<>();
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
    private long publisherId;
    private long publisherSeqStart = 1;
    private int maxUnconfirmed = 1_000;

    private Builder() {}

    /** A random publisher id for a new client: 64 bits from {@link SecureRandom}, never 0. */
    private static long drawPublisherId() {
      SecureRandom random = new SecureRandom();
      long id;
      do {
        id = random.nextLong();
      } while (id == 0);
      return id;
    }

    /** The options as they are now, for a client about to connect. */
    ClientOptions options() {
      return new ClientOptions(
          router,
          java.util.List.copyOf(failover),
          name,
          authToken,
          tls,
          connectTimeout,
          reconnect,
          maxFrameBytes,
          onMessage,
          listener,
          callbackExecutor,
          group,
          publisherId != 0 ? publisherId : drawPublisherId(),
          publisherSeqStart,
          maxUnconfirmed);
    }

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

    /**
     * Another router to attach to when a connection to the one before it in the list (the {@link
     * #router} first, then the failover routers in the order added) cannot be opened: a client
     * whose router has died moves on to the next one, and back to the first after the last. A
     * session that breaks is dialled again at the same router first. The client's predicate and its
     * unconfirmed reliable messages go with it; destination routers drop what they delivered
     * already. Each router must accept the client's credentials.
     */
    public Builder failover(String host, int port) {
      return failover(InetSocketAddress.createUnresolved(host, port));
    }

    /** Another router to attach to, as {@link #failover(String, int)}. */
    public Builder failover(InetSocketAddress address) {
      failover.add(Objects.requireNonNull(address));
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

    /**
     * The publisher id of this client's reliable messages (default: a random one, drawn for each
     * client). Destination routers drop a publisher's messages numbered at or below the last one
     * they delivered from it, so an id set here that outlives the process must come with numbering
     * that goes on above every number it used before: see {@link #publisherSeqStart}. A process
     * that does not keep its numbering should leave the id random.
     *
     * @throws IllegalArgumentException if {@code id} is 0 (reserved)
     */
    public Builder publisherId(long id) {
      if (id == 0) {
        throw new IllegalArgumentException("publisherId: 0 is reserved");
      }
      this.publisherId = id;
      return this;
    }

    /**
     * The number of this client's first reliable message (default 1); the next ones follow one by
     * one. With a {@link #publisherId} kept across restarts, start above the last number sent
     * before, or destination routers drop the new messages as duplicates.
     *
     * @throws IllegalArgumentException if {@code first} is below 1
     */
    public Builder publisherSeqStart(long first) {
      if (first < 1) {
        throw new IllegalArgumentException("publisherSeqStart: " + first + " is below 1");
      }
      this.publisherSeqStart = first;
      return this;
    }

    /**
     * How many reliable messages may be sent to the router and unconfirmed at a time (default
     * 1,000). {@link BdrpClient#sendReliable} never blocks: messages beyond this wait in the
     * client, without bound, and are sent as confirmations arrive; an application that publishes
     * faster than the network confirms bounds what waits itself, by waiting on the futures.
     *
     * @throws IllegalArgumentException if {@code n} is below 1
     */
    public Builder maxUnconfirmed(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxUnconfirmed: " + n + " is below 1");
      }
      this.maxUnconfirmed = n;
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
      BdrpClient c = new BdrpClient(options());
      c.connection.dial();
      return c.connection.firstConnect;
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
      BdrpClient c = new BdrpClient(options());
      c.connection.dial();
      // Safety net only: the TCP connect and the HELLO each time out by themselves.
      long waitMs = 2 * connectTimeout.toMillis() + 5_000;
      try {
        return c.connection.firstConnect.get(waitMs, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        c.close();
        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        c.close();
        throw new IOException("no session with " + c.options.where() + " within " + waitMs + " ms");
      } catch (InterruptedException e) {
        c.close();
        throw e;
      }
    }
  }

  /** The number of the router this client is attached to, or -1 while disconnected. */
  public int routerNumber() {
    return connection.routerNumber();
  }

  /** Whether a session is open. */
  public boolean isConnected() {
    return connection.isConnected();
  }

  /**
   * Adds a subscription: {@code handler} gets every message that satisfies {@code p}. The future
   * completes when the router holds the new combined predicate.
   */
  public CompletableFuture<Subscription> subscribe(Predicate p, Consumer<Message> handler) {
    Subscription s = new Subscription(p, handler);
    subscriptions.add(s.entry);
    return pushPredicate().thenApply(v -> s);
  }

  /**
   * Sets this host's predicate, replacing every subscription; delivered messages go to the
   * builder's {@link Builder#onMessage} handler. {@link Predicate#NONE} receives nothing.
   */
  public CompletableFuture<Void> setPredicate(Predicate p) {
    subscriptions.set(p);
    return pushPredicate();
  }

  private CompletableFuture<Void> pushPredicate() {
    Predicate p = subscriptions.combined();
    return request(id -> new ClientFrame.SetPredicate(id, p));
  }

  /**
   * Sends a message; the future completes when it is written to the router. Sends from any thread
   * are queued and written by the I/O thread in batches, one system call for many messages.
   */
  public CompletableFuture<Void> send(Message m) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    if (!isConnected()) {
      f.completeExceptionally(new IOException("not connected to " + options.where()));
      return f;
    }
    outbox.enqueue(new ClientFrame.Send(0, m), f, 0);
    return f;
  }

  /**
   * Sends a message without a future: as {@link #send}, for a publisher that sends many messages
   * and needs no answer for each, and saves the future's cost (its allocation, and its completion
   * on the callback thread). A message that is not written to the router, because the client is not
   * connected, the message does not encode or the write fails, is counted in {@link #unsent()}.
   */
  public void publish(Message m) {
    Objects.requireNonNull(m, "m");
    if (!isConnected()) {
      outbox.countUnsent();
      return;
    }
    outbox.enqueue(new ClientFrame.Send(0, m), null, Outbox.FORGET);
  }

  /**
   * How many messages {@link #publish} took that were not written to the router: sent while
   * disconnected, refused by the encoder, or lost with a write that failed. Messages that {@link
   * #send} could not write fail their futures instead.
   */
  public long unsent() {
    return outbox.unsent();
  }

  /**
   * Publishes a message reliably: numbers it as the next message of this client's {@linkplain
   * #publisherId() publisher}, keeps it, and sends it as soon as fewer than {@link
   * Builder#maxUnconfirmed} messages wait for confirmation. Never blocks; may be called while
   * disconnected. The future
   *
   * <ul>
   *   <li>completes when the router confirms that every router whose hosts want the message has it;
   *   <li>fails with {@link UnreachedException} when the router gave up on some of those routers;
   *   <li>fails with {@link RouterException} when the router refuses the message (BAD_MESSAGE,
   *       NOT_AUTHORIZED, ...), which is then forgotten; a router whose retention of reliable
   *       messages is full (OVERLOADED) is not an answer: the message and every later one are sent
   *       again, in order, after the next confirmation or a short wait;
   *   <li>fails with an {@link IOException} when the client is closed, or when its session breaks
   *       and it does not reconnect.
   * </ul>
   *
   * <p>Across a broken session the future stays pending: the next session (with the same router or
   * another) sends every unconfirmed message again, in order, before any new one, and routers drop
   * those their hosts already have. Messages of one client reach each host in the order they were
   * sent.
   */
  public CompletableFuture<Void> sendReliable(Message m) {
    return reliable.send(Objects.requireNonNull(m, "m"));
  }

  /**
   * The publisher id this client's reliable messages carry: the builder's {@link
   * Builder#publisherId}, or one drawn at random for this client.
   */
  public long publisherId() {
    return reliable.publisher();
  }

  /**
   * How many frames from the router this client has refused: frames that do not decode (each ends
   * its session; the {@linkplain Builder#listener listener} hears why, and the client dials again)
   * and confirmations naming reliable messages it never sent (ignored). Zero with a working router.
   */
  public long refusedFrames() {
    return refusedFrames.get();
  }

  /**
   * Completes when the router has answered a PING sent now: everything this client sent before has
   * been taken by the router (it handles a session's frames in order). Reliable messages are
   * answered by their own confirmations: those still waiting for room among {@link
   * Builder#maxUnconfirmed} have not been sent yet.
   */
  public CompletableFuture<Void> flush() {
    return request(ClientFrame.Ping::new);
  }

  /** Sends a message and completes when the router has accepted it. */
  public CompletableFuture<Void> sendAcknowledged(Message m) {
    return request(id -> new ClientFrame.Send(id, m));
  }

  /** How long {@link #trace(Message)} lets the router wait for the routers' reports: 2 s. */
  public static final Duration DEFAULT_TRACE_TIMEOUT = Duration.ofSeconds(2);

  /** As {@link #trace(Message, Duration)} with {@link #DEFAULT_TRACE_TIMEOUT}. */
  public CompletableFuture<ClientFrame.TraceResult> trace(Message m) {
    return trace(m, DEFAULT_TRACE_TIMEOUT);
  }

  /**
   * Traces {@code m} without publishing it (docs/trace.md): the router this client is attached to
   * routes a trace-only copy exactly as it would route the message, no host receives it, and every
   * router the copy reaches reports what it did. The future completes with the reports once every
   * router reported, or after {@code timeout} (1 ms to 60 s) with those that did and the routers
   * that did not ({@link ClientFrame.TraceResult#missing}); it fails with {@link RouterException}
   * when the router refuses the trace (NOT_AUTHORIZED: the message is outside this user's publish
   * permission; OVERLOADED: too many traces, trace again shortly).
   */
  public CompletableFuture<ClientFrame.TraceResult> trace(Message m, Duration timeout) {
    Objects.requireNonNull(m, "m");
    long ms = timeout.toMillis();
    if (ms < 1 || ms > ClientFrame.MAX_TRACE_TIMEOUT_MS) {
      throw new IllegalArgumentException(
          "trace timeout "
              + timeout
              + " outside 1 ms.."
              + ClientFrame.MAX_TRACE_TIMEOUT_MS
              + " ms");
    }
    CompletableFuture<ClientFrame.TraceResult> f = new CompletableFuture<>();
    if (!isConnected()) {
      f.completeExceptionally(new IOException("not connected to " + options.where()));
      return f;
    }
    long id = requests.add(f);
    outbox.enqueue(new ClientFrame.Trace(id, ms, m), null, id);
    return f;
  }

  /** Queues a request; its future waits in {@link Requests} for the router's answer. */
  private CompletableFuture<Void> request(LongFunction<ClientFrame> frame) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    if (!isConnected()) {
      if (frame.apply(0) instanceof ClientFrame.SetPredicate) {
        f.complete(null); // sent on the next session anyway
      } else {
        f.completeExceptionally(new IOException("not connected to " + options.where()));
      }
      return f;
    }
    long id = requests.add(f);
    outbox.enqueue(frame.apply(id), null, id);
    return f;
  }

  /**
   * Says goodbye, closes the session and stops the client's threads. Called from a thread other
   * than the client's own, it returns when those threads have ended (or after a few seconds, if a
   * handler does not return); called from a handler or listener, it does not wait for them. Closing
   * again does nothing more (but waits likewise).
   */
  @Override
  public void close() {
    connection.close();
    if (!threads.isOwn(Thread.currentThread())) {
      threads.awaitTermination(TimeUnit.SECONDS.toNanos(5));
    }
  }
}
