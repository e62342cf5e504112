package io.bdrp.router;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.MessageIds;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ProtocolErrorCounters;
import io.bdrp.transport.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router daemon: a client port for hosts, a router port for neighbouring routers, a UDP socket
 * when some neighbour's DATA travels by UDP, an optional HTTP metrics port, the routing state
 * machines ({@link RoutingNode}) and the data plane ({@link DataPlane}) driving them.
 *
 * <p>The parts: {@link ClientSessions} (hosts: predicates, SENDs), {@link RouterLinks} (TCP
 * sessions with neighbours: hello checks, control frames, DATA), {@link UdpLinks} (DATA datagrams),
 * {@link LinkOutput} (the data plane's output: DATA copies and deliveries written straight into
 * {@link OutputBatches}). Forwarding itself — the match at the ingress router, the partition of D,
 * the transit split, local delivery — is the data plane's, in the routing module.
 *
 * <p><b>Threads.</b> Everything runs on one event loop: every session's I/O, the routing state, the
 * data plane and the timers. No state is shared across threads, so nothing is locked; {@link
 * #close()} and the accessors hand their work to that loop. The native epoll transport is used when
 * available, NIO otherwise.
 */
public final class Router implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Router.class);

  private final RouterConfig config;
  private final EventLoopGroup group;
  private EventLoopGroup metricsGroup; // null until the metrics port is bound

  /**
   * The control thread: work whose cost a client sets (preparing a predicate) runs here, never on
   * the loop; results go back to the loop as tasks.
   */
  private final java.util.concurrent.ExecutorService control;

  /**
   * The links' control thread: work whose cost a neighbour sets (decoding a large advertisement)
   * runs here, apart from the control thread so that it never waits behind an index build.
   */
  private final java.util.concurrent.ExecutorService linkControl;

  private final EventLoop loop;
  private final LoopLag lag;
  private final boolean epoll;
  private final RoutingNode node;
  private final ProtocolErrorCounters errors = new ProtocolErrorCounters();
  private final RouterMetrics metrics;
  private final TlsReloader tls;
  private final OriginKeys originKeys; // null: claims are neither signed nor verified
  private final OutputBatches batches;
  private final Hosts hosts; // every front end's hosts, by number
  private final ClientSessions clients;
  private final RouterLinks links;
  private final UdpLinks udp;
  private final ShmLinks shm;
  private final List<DataTransport> transports; // every transport of DATA besides TCP
  private final DataPlane<MessageBytes> dataPlane;
  private final KernelFastPath kernel;

  /**
   * Every channel of this router (listening, accepted, dialled, UDP), closed one by one before the
   * loop stops: the group's shutdown alone has been seen to leave a connection open (its close
   * deferred to a task the terminating loop then refused), and a client would never notice.
   */
  private final ChannelGroup channels;

  private Channel clientServer;
  private Channel routerServer;
  private Channel metricsServer;
  private ScheduledFuture<?> timer;
  private long timerAt = Long.MAX_VALUE;
  private volatile boolean closed;

  private Router(RouterConfig config) {
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
    this.config = config;
    this.epoll = Epoll.isAvailable();
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    this.loop = group.next();
    this.channels = new DefaultChannelGroup("router " + config.router(), loop);
    this.node =
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
    node.predicates().onRefusal(this::refused);
    this.metrics = new RouterMetrics(new Metrics(), node, errors);
    this.tls = new TlsReloader(config, metrics);
    // With mutual TLS from files, the router signs its own claims with its certificate's key and
    // verifies every other router's (see OriginKeys).
    RouterTls rt = config.routerTls();
    this.originKeys =
        rt != null && rt.cert() != null
            ? OriginKeys.load(config.router(), rt.cert(), rt.key(), rt.ca(), metrics)
            : null;
    if (originKeys != null) {
      node.useAuthority(originKeys);
      for (io.bdrp.routing.OriginAuthority.ClaimKind k :
          io.bdrp.routing.OriginAuthority.ClaimKind.values()) {
        for (io.bdrp.routing.OriginAuthority.Verdict v :
            io.bdrp.routing.OriginAuthority.Verdict.values()) {
          if (v != io.bdrp.routing.OriginAuthority.Verdict.OK
              && (k != io.bdrp.routing.OriginAuthority.ClaimKind.CERTIFICATE
                  || v == io.bdrp.routing.OriginAuthority.Verdict.BAD_SIGNATURE)) {
            originKeys.refusals(k, v); // every series present from the start, at 0
          }
        }
      }
      metrics
          .registry()
          .gauge(
              "bdrp_router_certificates",
              "Routers whose certificate this router holds to verify their claims, itself"
                  + " included (with mutual TLS).",
              originKeys::certificatesHeld);
    }
    this.control =
        java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bdrp-control-" + config.router());
              t.setDaemon(true);
              return t;
            });
    this.linkControl =
        java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bdrp-links-" + config.router());
              t.setDaemon(true);
              return t;
            });
    // The parts: each gets the core and the parts it works with, none the router.
    RouterCore core =
        new RouterCore(
            config,
            loop,
            control,
            linkControl,
            metrics,
            errors,
            node,
            epoll,
            channels,
            this::rearm,
            () -> closed);
    this.batches = new OutputBatches(loop);
    this.hosts = new Hosts();
    metrics.clients(hosts::size);
    DataTransport.Receiver receiver = this::receiveData;
    this.udp = new UdpLinks(core, batches, receiver);
    this.shm = new ShmLinks(core, this::link, receiver);
    this.transports = List.of(udp, shm);
    this.links = new RouterLinks(core, transports, udp::port, tls::routerTls, originKeys, receiver);
    LinkOutput output = new LinkOutput(links.byNumber, hosts, batches, metrics.matchSeconds);
    // Message ids are a keyed permutation of a counter under a key drawn now (MessageIds): no
    // other router can predict them, so none can make a receiver's duplicate window
    // (DataPlane.Drop.DUPLICATE) drop this router's broadcasts with forged copies. The counter
    // starts at the epoch times 64, above that of any earlier run, so pre-images never repeat.
    this.dataPlane =
        new DataPlane<>(
            node,
            output,
            System::nanoTime,
            MessageIds.secure(config.router(), Math.min(config.epoch(), 1L << 41) << 6));
    this.clients =
        new ClientSessions(core, hosts, batches, dataPlane, tls::clientTls, originKeys != null);
    metrics.dataPlane(dataPlane, udp::receiveBufferDrops);
    this.kernel = new KernelFastPath(core, this::link, udp);
    this.lag = new LoopLag(loop, metrics.loopLagSeconds, System::nanoTime);
    // The index of D over every router's filters is built on the control thread: an
    // advertisement, however large, costs the loop a copy of references, not the build.
    node.predicates().buildIndexWith(this::buildIndex);
  }

  /** The link to neighbour {@code n}, or null (on the loop). */
  private Link link(int n) {
    return links.get(n);
  }

  /**
   * Starts a router: binds its ports, dials its neighbours, and returns once it listens.
   *
   * @throws IllegalStateException if a port cannot be bound (the message says which)
   */
  public static Router start(RouterConfig config) throws InterruptedException {
    Router r = new Router(config);
    try {
      r.bind();
    } catch (RuntimeException | InterruptedException e) {
      r.close();
      throw e;
    }
    return r;
  }

  // ---- for tests in this package: what the router was assembled from ----

  /** TLS on router links as now loaded (null: none). */
  RouterTls routerTls() {
    return tls.routerTls();
  }

  EventLoop loop() {
    return loop;
  }

  /** Runs an index build on the control thread and hands the result back to the loop. */
  private void buildIndex(
      java.util.function.Supplier<io.bdrp.encoding.bloom.EncodedIndex> work,
      java.util.function.Consumer<io.bdrp.encoding.bloom.EncodedIndex> done) {
    try {
      control.execute(
          () -> {
            io.bdrp.encoding.bloom.EncodedIndex index;
            try {
              index = work.get();
            } catch (RuntimeException e) {
              log.warn("router {}: building the index of D failed", config.router(), e);
              index = null;
            }
            io.bdrp.encoding.bloom.EncodedIndex built = index;
            try {
              loop.execute(() -> done.accept(built));
            } catch (java.util.concurrent.RejectedExecutionException closed) {
              // The router has stopped.
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // The router is stopping: nothing is built any more.
    }
  }

  /**
   * After the TLS files of router links were reloaded (on the reloader's thread): reads the new
   * certificate and key there and returns the task, for the loop, that signs the claims with them
   * from then on, floods this router's new certificate and signs its route and advertisement anew.
   */
  private Runnable renewOriginKeys(RouterTls now) {
    if (originKeys == null || now == null || now.cert() == null) {
      return null;
    }
    OriginKeys.Loaded keys;
    try {
      keys = OriginKeys.read(now.cert(), now.key(), now.ca());
    } catch (IllegalArgumentException e) {
      log.warn(
          "router {}: cannot sign with the reloaded TLS files: {}",
          config.router(),
          e.getMessage());
      return null;
    }
    return () -> {
      if (!closed && originKeys.use(keys)) {
        node.certificateRenewed();
        rearm();
        log.info(
            "router {}: new certificate flooded; route and advertisement signed anew",
            config.router());
      }
    };
  }

  /** The authority that signs and verifies claims, or null without mutual TLS from files. */
  OriginKeys originKeys() {
    return originKeys;
  }

  /** The links' control thread (see {@link #linkControl}). */
  java.util.concurrent.Executor linkControl() {
    return linkControl;
  }

  RoutingNode node() {
    return node;
  }

  RouterMetrics metrics() {
    return metrics;
  }

  RouterLinks links() {
    return links;
  }

  private void bind() throws InterruptedException {
    // First: a filter an earlier run of this router left in the kernel (kill -9) forwards with that
    // run's routes until it is removed. On this thread: loading reads files.
    kernel.start();
    clientServer = bindOn("listen.clients", config.clientListen(), clients.initializer());
    for (DataTransport t : transports) {
      // Before the router port: every hello this router sends announces its UDP port, and a
      // neighbour maps its ring at link-up.
      t.start();
    }
    routerServer = bindOn("listen.routers", config.routerListen(), links.initializer(null));
    if (config.metricsListen() != null) {
      metricsServer =
          bindOn(
              "listen.metrics",
              config.metricsListen(),
              MetricsHttp.initializer(
                  this::readMetricFiles,
                  metrics.registry()::scrape,
                  loop,
                  Metrics::format,
                  config.metricsAccess(),
                  tls::clientTls,
                  metrics.connectionsClosed("metrics", "connections"),
                  metrics.connectionsClosed("metrics", "idle")),
              metricsGroup());
    }
    loop.execute(
        () -> {
          links.start();
          rearm();
        });
    lag.start();
    if (tls.watching()) {
      tls.start(config.router(), loop, this::renewOriginKeys);
    }
    log.info(
        "router {} (epoch {}) listening: clients {}, routers {}{}{}; {} neighbours; {} transport",
        config.router(),
        config.epoch(),
        clientServer.localAddress(),
        routerServer.localAddress(),
        udp.address() == null ? "" : ", udp " + udp.address(),
        metricsServer == null ? "" : ", metrics " + metricsServer.localAddress(),
        config.neighbours().size(),
        epoll ? "epoll" : "NIO");
    RouterPorts.warnExposure(config, clientServer, routerServer);
  }

  private Channel bindOn(
      String field, InetSocketAddress address, ChannelInitializer<? extends Channel> init)
      throws InterruptedException {
    return bindOn(field, address, init, group);
  }

  private Channel bindOn(
      String field,
      InetSocketAddress address,
      ChannelInitializer<? extends Channel> init,
      EventLoopGroup on)
      throws InterruptedException {
    return RouterPorts.listen(on, epoll, channels, field, address, init);
  }

  /** The thread of the metrics port's connections, made when first asked for. */
  private EventLoopGroup metricsGroup() {
    if (metricsGroup == null) {
      metricsGroup =
          new MultiThreadIoEventLoopGroup(
              1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }
    return metricsGroup;
  }

  // ---- DATA from neighbours ----

  // Reused by every DATA frame, by TCP or UDP: the loop handles one at a time.
  private final DataHeader header = new DataHeader();
  private final MessageBytes dataBytes = new MessageBytes();

  /**
   * A DATA frame from neighbour {@code from} over {@code transport} ({@code tcp} or {@code udp}),
   * which the caller still owns: a malformed header is counted and dropped, anything else goes to
   * the data plane.
   */
  void receiveData(Link from, ByteBuf frame, String transport) {
    from.in.inc();
    DataHeader h;
    try {
      h = header.wrap(frame);
    } catch (ProtocolException e) {
      metrics.malformedData(transport).inc();
      log.debug(
          "router {}: malformed DATA from {} over {}: {}",
          config.router(),
          from.neighbour(),
          transport,
          e.getMessage());
      return;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "router {}: DATA from router {} over {}: source router {}, message {}, {}, hop limit {},"
              + " {} bytes",
          config.router(),
          from.neighbour(),
          transport,
          h.sourceRouter(),
          h.messageId(),
          h.isBroadcast() ? "broadcast" : "by D",
          h.hopLimit(),
          h.messageLength());
    }
    dataPlane.receive(
        from.neighbour(),
        h,
        dataBytes.set(frame, frame.readerIndex() + h.messageOffset(), h.messageLength()));
  }

  // ---- addresses ----

  /** The bound client address. */
  public InetSocketAddress clientAddress() {
    return (InetSocketAddress) clientServer.localAddress();
  }

  /** The bound router address. */
  public InetSocketAddress routerAddress() {
    return (InetSocketAddress) routerServer.localAddress();
  }

  /** The bound UDP address for DATA datagrams, or null when no neighbour uses UDP. */
  public InetSocketAddress udpAddress() {
    return udp.address();
  }

  /** The bound metrics address, or null. */
  public InetSocketAddress metricsAddress() {
    return metricsServer == null ? null : (InetSocketAddress) metricsServer.localAddress();
  }

  /** This router's number. */
  public int number() {
    return config.router();
  }

  /**
   * The metrics, rendered (files read and text formatted on the caller's thread, the series read on
   * the router's loop).
   */
  public String metricsText() {
    readMetricFiles();
    return Metrics.format(loop.submit(metrics.registry()::scrape).syncUninterruptibly().getNow());
  }

  /** Reads what series need from files and the kernel, before a scrape: never on the loop. */
  private void readMetricFiles() {
    udp.readReceiveBufferDrops();
    kernel.readCounters();
  }

  /** Routers this router has a route to (runs on the router's loop). */
  public int[] reachable() {
    return loop.submit(() -> node.unicast().reachable()).syncUninterruptibly().getNow();
  }

  /** How many origins PREDICATES holds, this router included (runs on the router's loop). */
  public int predicateOrigins() {
    return loop.submit(() -> node.predicates().size()).syncUninterruptibly().getNow();
  }

  /** Whether DATA to {@code neighbour} goes by UDP now (runs on the router's loop). */
  public boolean dataOverUdp(int neighbour) {
    return loop.submit(
            () -> {
              Link l = links.get(neighbour);
              return l != null && l.dataBy(RouterConfig.LinkTransport.UDP);
            })
        .syncUninterruptibly()
        .getNow();
  }

  /**
   * The counters of the shared-memory ring DATA to {@code neighbour} goes into now, or null when it
   * goes by socket (runs on the router's loop).
   */
  public io.bdrp.router.ring.SharedRing.Counters ringTo(int neighbour) {
    return loop.submit(
            () -> {
              Link l = links.get(neighbour);
              return l != null && l.path instanceof ShmLinks.RingPath r ? r.ring.counters() : null;
            })
        .syncUninterruptibly()
        .getNow();
  }

  /**
   * The counters of the shared-memory ring this router reads from {@code neighbour}, or null when
   * there is none (runs on the router's loop).
   */
  public io.bdrp.router.ring.SharedRing.Counters ringFrom(int neighbour) {
    return loop.submit(() -> shm.inbound(neighbour)).syncUninterruptibly().getNow();
  }

  /**
   * Dials configured neighbour {@code neighbour} at {@code address} (for neighbours whose address
   * is learnt after start, such as routers bound to port 0), and keeps redialling it when the
   * session breaks.
   */
  public void connect(int neighbour, InetSocketAddress address) {
    loop.submit(
            () -> {
              Link l = links.get(neighbour);
              if (l == null) {
                throw new IllegalArgumentException(
                    "router " + neighbour + " is not a configured neighbour of " + config.router());
              }
              links.connect(l, address);
            })
        .syncUninterruptibly();
  }

  /** The encoded predicate this router holds for {@code origin}, or null (on the router's loop). */
  public EncodedPredicate predicateOf(int origin) {
    return loop.submit(() -> node.predicates().get(origin)).syncUninterruptibly().getNow();
  }

  /** Whether the index of D this router matches with is built from all it holds now. */
  public boolean indexReady() {
    return loop.submit(() -> node.predicates().indexReady()).syncUninterruptibly().getNow();
  }

  /**
   * This router's own aggregate, the OR of its hosts' predicates, encoded, as it advertises it (on
   * its loop).
   */
  public EncodedPredicate aggregate() {
    return loop.submit(() -> node.predicates().get(config.router())).syncUninterruptibly().getNow();
  }

  /**
   * Whether every router of an in-process federation holds every other one's current aggregate and
   * has indexed it: predicates have propagated, and D computed anywhere is exact but for false
   * positives.
   */
  public static boolean predicatesAgree(Collection<Router> routers) {
    for (Router r : routers) {
      if (!r.indexReady()) {
        return false; // its index of D is still being built from what it holds
      }
    }
    for (Router origin : routers) {
      EncodedPredicate p = origin.aggregate();
      for (Router r : routers) {
        if (r != origin && !p.equals(r.predicateOf(origin.number()))) {
          return false;
        }
      }
    }
    return true;
  }

  // ---- timers ----

  /** Arms the timer for the routing state's next deadline (after anything that may move it). */
  void rearm() {
    kernel.sync();
    long deadline = node.nextDeadlineMillis();
    if (deadline == Long.MAX_VALUE || closed) {
      return;
    }
    if (timer != null && deadline >= timerAt && !timer.isDone()) {
      return;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    long now = TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    timerAt = deadline;
    timer =
        loop.schedule(
            () -> {
              timerAt = Long.MAX_VALUE;
              node.tick();
              rearm();
            },
            Math.max(0, deadline - now),
            TimeUnit.MILLISECONDS);
  }

  /** Stops the router: closes every session and port, and ends its thread. */
  @Override
  public void close() {
    closed = true;
    lag.stop();
    tls.close();
    control.shutdown(); // what is queued runs and releases its frames; the loop drops the results
    linkControl.shutdown();
    for (DataTransport t : transports) {
      t.close(); // a ring's reader hands frames to the loop: stopped while the loop still runs
    }
    // The kernel fast path's filters are removed (they would outlive the router).
    kernel.close();
    var closing = channels.close();
    if (!loop.inEventLoop()) {
      closing.awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    if (metricsGroup != null) {
      metricsGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private long refusalLoggedNanos;
  private long refusalsUnlogged;

  /**
   * A version of PREDICATES refused for a bound: a WARN, at most one every 10 s (the rest counted
   * in the metrics and in the next line).
   */
  private void refused(io.bdrp.routing.PredicateTable.Refusal r) {
    long now = System.nanoTime();
    if (refusalLoggedNanos != 0 && now - refusalLoggedNanos < TimeUnit.SECONDS.toNanos(10)) {
      refusalsUnlogged++;
      return;
    }
    refusalLoggedNanos = now;
    log.warn(
        "router {}: {}{}",
        config.router(),
        r.message(),
        refusalsUnlogged == 0
            ? ""
            : " (and " + refusalsUnlogged + " more refusals since the last such line)");
    refusalsUnlogged = 0;
  }

  /** Client connections in their HELLO now (on the router's loop). */
  int clientHandshakesPending() {
    return clients.handshakesPending();
  }

  /** For tests: the predicate the router holds for a host id (runs on the router's loop). */
  Predicate hostPredicate(int host) {
    return loop.submit(() -> node.local().predicate(host)).syncUninterruptibly().getNow();
  }

  @Override
  public String toString() {
    return "router " + config.router();
  }
}
