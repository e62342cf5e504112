package io.bdrp.router;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.fastpath.KernelFastPath;
import io.bdrp.router.hosts.ClientSessions;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.DataReceiver;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.router.links.RouterLinks;
import io.bdrp.router.links.rdma.RdmaLinks;
import io.bdrp.router.links.shm.ShmLinks;
import io.bdrp.router.links.udp.UdpLinks;
import io.bdrp.router.metrics.LoopLag;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.MetricsHttp;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.router.mqtt.MqttListener;
import io.bdrp.router.security.OriginKeys;
import io.bdrp.router.security.RouterClaims;
import io.bdrp.router.security.RouterTls;
import io.bdrp.router.security.TlsReloader;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.MessageIds;
import io.bdrp.routing.Reliable;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ProtocolErrorCounters;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router daemon: a client port for hosts, a router port for neighbouring routers, a UDP socket
 * when some neighbour's DATA travels by UDP, an optional HTTP metrics port, the routing state
 * machines ({@link RoutingNode}) and the data plane ({@link DataPlane}) driving them.
 *
 * <p>An assembly: it makes the parts ({@link ClientSessions} for hosts, {@link RouterLinks} and the
 * {@link DataTransport}s for neighbours, {@link LinkOutput} and {@link DataReceiver} around the
 * data plane, {@link KernelFastPath}), hands each the {@link RouterCore} and the parts it works
 * with, binds the ports and closes it all; no part calls back into it. Forwarding itself — the
 * match at the ingress router, the partition of D, the transit split, local delivery — is the data
 * plane's, in the routing module. {@link RouterView} reads its state for tools and tests.
 *
 * <p><b>Threads.</b> One event loop does every session's I/O, the routing state, the data plane and
 * the timers, and owns their state, so nothing is locked; work whose cost a client or a neighbour
 * sets (an index build, a predicate, a large advertisement) runs on control threads beside it and
 * comes back to it as a task. {@link #close()} and the views hand their work to the loop. The
 * native epoll transport is used when available, NIO otherwise.
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
  private final ControlThread control;

  /**
   * The links' control thread: work whose cost a neighbour sets (decoding a large advertisement)
   * runs here, apart from the control thread so that it never waits behind an index build.
   */
  private final ControlThread linkControl;

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
  private final MqttListener mqtt; // null without listen.mqtt
  private final RouterLinks links;
  private final UdpLinks udp;
  private final ShmLinks shm;
  private final List<DataTransport> transports; // every transport of DATA besides TCP
  private final DataPlane<MessageBytes> dataPlane;
  private final Reliable<MessageBytes> reliable;
  private final RoutingTimer reliableTimer;
  private final KernelFastPath kernel;
  private final DataReceiver data;
  private final Traces traces;
  private final RoutingTimer timer;
  private final RouterView view;
  private final RateSampler rates;

  /**
   * Every channel of this router (listening, accepted, dialled, UDP), closed one by one before the
   * loop stops: the group's shutdown alone has been seen to leave a connection open (its close
   * deferred to a task the terminating loop then refused), and a client would never notice.
   */
  private final ChannelGroup channels;

  private Channel clientServer;
  private Channel mqttServer;
  private Channel routerServer;
  private Channel metricsServer;
  private volatile boolean closed;

  private Router(RouterConfig config) {
    this.config = config;
    this.node = RouterCore.routingNode(config); // first: it refuses an epoch too far ahead
    this.epoll = Epoll.isAvailable();
    this.group = RouterCore.group(epoll);
    this.loop = group.next();
    this.channels = new DefaultChannelGroup("router " + config.router(), loop);
    node.predicates().onRefusal(new RefusalLog(config.router()));
    this.metrics = new RouterMetrics(new Metrics(), node, errors);
    this.tls = new TlsReloader(config, metrics);
    // With mutual TLS from files, the router signs its own claims with its certificate's key and
    // verifies every other router's (see OriginKeys).
    this.originKeys = RouterClaims.load(config, node, metrics);
    this.control = RouterCore.thread("bdrp-control-" + config.router());
    this.linkControl = RouterCore.thread("bdrp-links-" + config.router());
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
            this::rearmTimer,
            () -> closed);
    this.batches = new OutputBatches(loop);
    this.hosts = new Hosts();
    metrics.clients(hosts::size);
    DataTransport.Receiver receiver = this::receiveData;
    this.udp = new UdpLinks(core, batches, receiver);
    this.shm = new ShmLinks(core, this::link, receiver);
    this.transports = List.of(udp, shm, new RdmaLinks(core, this::link, receiver));
    this.links =
        new RouterLinks(
            core,
            transports,
            udp::port,
            this::metricsAddress,
            tls::routerTls,
            originKeys,
            receiver);
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
    // The reliable service shares the data plane's tables and message ids; its numbering starts
    // again under each epoch, which destinations see in its copies.
    this.reliable =
        new Reliable<>(
            dataPlane,
            node,
            config.epoch(),
            () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()),
            config.limits().hosts().reliable(Reliable.Config.DEFAULT),
            output);
    this.reliableTimer =
        new RoutingTimer(
            loop, reliable::nextDeadlineMillis, reliable::tick, () -> {}, () -> closed);
    this.clients =
        new ClientSessions(
            core,
            hosts,
            batches,
            dataPlane,
            reliable,
            reliableTimer::rearm,
            tls::clientTls,
            originKeys != null);
    this.mqtt =
        config.mqttListen() == null
            ? null
            : new MqttListener(
                core,
                hosts,
                clients.predicates(),
                dataPlane,
                reliable,
                reliableTimer::rearm,
                batches,
                tls::clientTls);
    // Publisher ids are random 64-bit numbers: each front end answers its own and ignores others.
    LinkOutput.Publishers bdrp = clients.publishers();
    LinkOutput.Publishers mqttPublishers = mqtt == null ? null : mqtt.publishers();
    output.publishers(
        new LinkOutput.Publishers() {
          @Override
          public void confirmed(long publisher, long publisherSeq) {
            bdrp.confirmed(publisher, publisherSeq);
            if (mqttPublishers != null) {
              mqttPublishers.confirmed(publisher, publisherSeq);
            }
          }

          @Override
          public void unreached(long publisher, long publisherSeq, long[] unreached) {
            bdrp.unreached(publisher, publisherSeq, unreached);
            if (mqttPublishers != null) {
              mqttPublishers.unreached(publisher, publisherSeq, unreached);
            }
          }
        });
    this.kernel = new KernelFastPath(core, this::link, udp);
    output.broadcastsTaken(kernel::broadcastTaken);
    this.data = new DataReceiver(config.router(), metrics, dataPlane, reliable, kernel::active);
    metrics.reliable(reliable);
    metrics.dataPlane(dataPlane, udp::receiveBufferDrops, kernel::duplicates);
    this.traces = new Traces(core, dataPlane, output, hosts, kernel::active);
    clients.traces(traces);
    this.timer = new RoutingTimer(loop, node, kernel::sync, () -> closed);
    this.view = new RouterView(config.router(), loop, node, links, shm, clients);
    this.lag = new LoopLag(loop, metrics.loopLagSeconds, System::nanoTime);
    this.rates = new RateSampler(loop, config, links, hosts);
    // The index of D over every router's filters is built on the control thread: an
    // advertisement, however large, costs the loop a copy of references, not the build.
    node.predicates()
        .buildIndexWith((work, done) -> core.offload("building the index of D", work, done));
  }

  // The parts made before the data plane reach these two through the router's methods: they are
  // made after it.
  private void rearmTimer() {
    timer.rearm();
  }

  private void receiveData(Link from, io.netty.buffer.ByteBuf frame, String transport) {
    int type =
        frame.readableBytes() > io.bdrp.transport.Frames.TYPE_OFFSET
            ? frame.getUnsignedByte(frame.readerIndex() + io.bdrp.transport.Frames.TYPE_OFFSET)
            : -1;
    if (type == io.bdrp.transport.FrameType.DATA.number()) {
      data.receive(from, frame, transport); // the hot path: one test
    } else if (type == io.bdrp.transport.FrameType.RELIABLE_DATA.number()
        || type == io.bdrp.transport.FrameType.RELIABLE_ACK.number()) {
      data.receiveReliable(from, frame, transport);
      reliableTimer.rearm();
    } else if (type == io.bdrp.transport.FrameType.TRACE_DATA.number()
        || type == io.bdrp.transport.FrameType.TRACE_REPORT.number()) {
      traces.receive(from, frame, transport);
    } else {
      data.receive(from, frame, transport); // anything else: refused and counted as malformed
    }
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
    clientServer = bindOn("listen.clients", config.clientListen(), clients.initializer(), group);
    if (mqtt != null) {
      mqttServer = bindOn("listen.mqtt", config.mqttListen(), mqtt.initializer(), group);
    }
    for (DataTransport t : transports) {
      // Before the router port: every hello this router sends announces its UDP port, and a
      // neighbour maps its ring at link-up.
      t.start();
    }
    // Before the router port too: every hello this router sends tells its admin API's port.
    if (config.metricsListen() != null) {
      metricsServer =
          bindOn(
              "listen.metrics",
              config.metricsListen(),
              MetricsHttp.initializer(
                  metrics,
                  this::readMetricFiles,
                  loop,
                  config.metricsAccess(),
                  tls::clientTls,
                  new RouterAdmin(config, loop, node, links, hosts, kernel, this::listening)),
              metricsGroup = RouterCore.group(epoll));
    }
    routerServer = bindOn("listen.routers", config.routerListen(), links.initializer(null), group);
    CompletableFuture<Void> retainedStore = new CompletableFuture<>();
    loop.execute(
        () -> {
          if (mqtt != null) {
            // The store of retained messages in the first aggregate advertised.
            mqtt.start().whenComplete((v, e) -> retainedStore.complete(null));
          } else {
            retainedStore.complete(null);
          }
          links.start();
          timer.rearm();
        });
    lag.start();
    rates.start();
    if (tls.watching()) {
      tls.start(
          config.router(),
          loop,
          now ->
              RouterClaims.renewal(
                  originKeys, now, config.router(), node, timer::rearm, () -> closed));
    }
    // A started router's store of retained messages takes what its MQTT port is published: its
    // predicate is set off the loop, and a retained PUBLISH matched before it would miss it.
    try {
      retainedStore.get(10, TimeUnit.SECONDS);
    } catch (TimeoutException | ExecutionException e) {
      log.warn(
          "router {}: the store of retained messages had no predicate 10 s after the start",
          config.router());
    }
    log.info(
        "router {} (epoch {}) listening: clients {}, routers {}{}{}{}; {} neighbours; {} transport",
        config.router(),
        config.epoch(),
        clientServer.localAddress(),
        routerServer.localAddress(),
        mqttServer == null ? "" : ", mqtt " + mqttServer.localAddress(),
        udp.address() == null ? "" : ", udp " + udp.address(),
        metricsServer == null ? "" : ", metrics " + metricsServer.localAddress(),
        config.neighbours().size(),
        epoll ? "epoll" : "NIO");
    RouterPorts.warnExposure(config, clientServer, routerServer);
    if (mqtt != null) {
      mqtt.warnExposure(mqttAddress());
    }
  }

  private Channel bindOn(
      String field,
      InetSocketAddress address,
      ChannelInitializer<? extends Channel> init,
      EventLoopGroup on)
      throws InterruptedException {
    return RouterPorts.listen(on, epoll, channels, field, address, init);
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

  /** The bound MQTT address, or null without {@code listen.mqtt}. */
  public InetSocketAddress mqttAddress() {
    return mqttServer == null ? null : (InetSocketAddress) mqttServer.localAddress();
  }

  /** The bound UDP address for DATA datagrams, or null when no neighbour uses UDP. */
  public InetSocketAddress udpAddress() {
    return udp.address();
  }

  /** The bound metrics address, or null. */
  public InetSocketAddress metricsAddress() {
    return metricsServer == null ? null : (InetSocketAddress) metricsServer.localAddress();
  }

  /** The bound addresses by port name (null: not listening), for the admin API. */
  private java.util.Map<String, Object> listening() {
    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("clients", text(clientAddress()));
    m.put("routers", routerServer == null ? null : text(routerAddress())); // while starting
    m.put("mqtt", text(mqttAddress()));
    m.put("udp", text(udpAddress()));
    m.put("metrics", text(metricsAddress()));
    return m;
  }

  private static String text(InetSocketAddress a) {
    return a == null ? null : a.getHostString() + ":" + a.getPort();
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

  /** What the router holds now, read on its loop: routes, predicates, the state of its links. */
  public RouterView view() {
    return view;
  }

  /** Stops the router: closes every session and port, and ends its thread. */
  @Override
  public void close() {
    closed = true;
    lag.stop();
    rates.stop();
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
    // What the reliable service keeps is released on its loop, once nothing arrives any more.
    if (loop.inEventLoop()) {
      reliable.close();
    } else {
      try {
        loop.submit(reliable::close).awaitUninterruptibly(5, TimeUnit.SECONDS);
      } catch (java.util.concurrent.RejectedExecutionException stopped) {
        // the loop has stopped: nothing runs on it any more
      }
    }
    if (metricsGroup != null) {
      metricsGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Override
  public String toString() {
    return "router " + config.router();
  }
}
