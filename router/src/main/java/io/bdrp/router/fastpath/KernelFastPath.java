package io.bdrp.router.fastpath;

import io.bdrp.router.ControlThread;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.udp.UdpLinks;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.routing.ForwardingTable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's side of the kernel fast path ({@code fastPath: ebpf}): loads the TC program when the
 * router starts, removes what an earlier run of the same router number left on this host's
 * interfaces, attaches the program to the interface of each UDP link as the link comes up, writes a
 * new table whenever the routes or the links change, and shows the program's counters in the
 * metrics. When the program cannot run, it logs the one reason why and the router forwards in the
 * JVM; nothing else changes.
 *
 * <p>The loop only notices that the routes or the links changed and hands a copy of what the table
 * is made from ({@link Inputs}) to the fast path's own thread ({@code bdrp-fastpath-N}), which
 * reads the ARP table and the interfaces, writes the program's maps, attaches it, reads its
 * counters for a scrape and unloads it: no file read or map write on the loop. Loading happens when
 * the router starts, on the thread that starts it.
 */
public final class KernelFastPath {
  private static final Logger log = LoggerFactory.getLogger(KernelFastPath.class);

  private final RouterCore core;
  private final RouterConfig config;
  private volatile EbpfFastPath fp; // null: forwarding in the JVM; used on `thread` once started
  private ControlThread thread; // null while fp is
  private final FastPathTables tables;
  private ForwardingTable lastRoutes; // on the loop
  private long lastLinks = -1;
  private boolean lastHosts; // on the loop
  private volatile boolean incomplete; // a neighbour's Ethernet address was missing: build again
  private long builtAt;
  private final AtomicReference<FastPathTables.Inputs> next =
      new AtomicReference<>(); // not yet written
  private volatile long[] counters = new long[FastPathCounter.values().length];
  private volatile long[] forwarded;
  private final int[] neighbours;

  private final java.util.function.IntFunction<Link> links;
  private final UdpLinks udp;

  public KernelFastPath(RouterCore core, java.util.function.IntFunction<Link> links, UdpLinks udp) {
    this.core = core;
    this.links = links;
    this.udp = udp;
    this.config = core.config();
    this.neighbours =
        config.neighbours().stream().mapToInt(RouterConfig.Neighbour::router).toArray();
    this.forwarded = new long[neighbours.length];
    this.tables = new FastPathTables(config);
  }

  /** Whether the kernel fast path is loaded and forwarding transit DATA of UDP links now. */
  public boolean active() {
    return fp != null;
  }

  /** Loads the program if the configuration asks for it and it can run; logs why not otherwise. */
  public void start() {
    if (config.fastPath() != RouterConfig.FastPath.EBPF) {
      return;
    }
    String why = null;
    if (!config.usesUdp()) {
      why = "no neighbour's link uses UDP, and the fast path forwards UDP DATA only";
    } else if (config.udpProtection() == io.bdrp.transport.UdpProtection.ENCRYPT) {
      why = "auth.udp is encrypt, which hides the DATA header from the kernel";
    } else if (config.routing().maxRouters() > 64 * FastPathTable.MAX_WORDS) {
      why =
          "routing.maxRouters is "
              + config.routing().maxRouters()
              + ", above the "
              + 64 * FastPathTable.MAX_WORDS
              + " routers the program's tables hold";
    } else if (!EbpfFastPath.isAvailable()) {
      why = EbpfFastPath.unavailabilityReason();
    }
    if (why == null) {
      removeStale();
      try {
        fp = EbpfFastPath.open(config.router());
        log.info(
            "router {}: kernel fast path loaded (program id {}); transit DATA from UDP links is"
                + " forwarded at TC ingress",
            config.router(),
            fp.programId());
      } catch (IOException | RuntimeException e) {
        why = e.getMessage();
        fp = null;
      }
    }
    if (why != null) {
      log.warn(
          "router {}: fastPath ebpf is not available: {}; forwarding in the JVM",
          config.router(),
          why);
      return;
    }
    thread = new ControlThread("bdrp-fastpath-" + config.router());
    registerMetrics();
  }

  /** Removes this router number's filters left on any interface by an earlier run (kill -9). */
  private void removeStale() {
    try {
      for (NetworkInterface nif : NetworkInterface.networkInterfaces().toList()) {
        try {
          int id = EbpfFastPath.removeStale(config.router(), nif.getIndex());
          if (id != 0) {
            log.info(
                "router {}: removed the fast-path program (id {}) an earlier run left on {}",
                config.router(),
                id,
                nif.getName());
          }
        } catch (IOException e) {
          log.warn(
              "router {}: cannot check {} for an earlier run's fast path: {}",
              config.router(),
              nif.getName(),
              e.getMessage());
        }
      }
    } catch (SocketException e) {
      log.warn("router {}: cannot list interfaces: {}", config.router(), e.getMessage());
    }
  }

  /**
   * If the routes or the links changed since the last table, hands a copy of them to the fast
   * path's thread, which writes the new table and attaches the program to the interfaces of new UDP
   * links. On the loop; cheap when nothing changed.
   */
  public void sync() {
    if (fp == null) {
      return;
    }
    ForwardingTable routes = core.node().routes();
    long links = udp.generation();
    long now = System.nanoTime();
    boolean retry = incomplete && now - builtAt > 1_000_000_000L;
    // Whether a broadcast's local copy goes up: when this router gets its first host or loses its
    // last one.
    boolean hosts = core.node().local().hostCount() > 0;
    if (routes == lastRoutes && links == lastLinks && hosts == lastHosts && !retry) {
      return;
    }
    lastRoutes = routes;
    lastLinks = links;
    lastHosts = hosts;
    builtAt = now;
    incomplete = false;
    List<FastPathTables.Peer> peers = new ArrayList<>();
    for (int n : neighbours) {
      Link l = this.links.apply(n);
      if (l == null || l.session == null) {
        continue;
      }
      UdpLinks.Session u = l.udp;
      peers.add(
          new FastPathTables.Peer(
              n,
              l.udpPeer,
              ((InetSocketAddress) l.session.localAddress()).getAddress(),
              l.dataBy(RouterConfig.LinkTransport.UDP),
              routes.behind(n),
              u,
              u == null ? 0 : u.opener().highest(false),
              u == null ? 0 : u.opener().highest(true)));
    }
    if (next.getAndSet(new FastPathTables.Inputs(udp.port(), List.copyOf(peers), routes, hosts))
        == null) {
      try {
        thread.execute(this::write);
      } catch (java.util.concurrent.RejectedExecutionException closed) {
        // The router is stopping.
      }
    }
  }

  /** Writes a table from the latest inputs (on the fast path's thread). */
  private void write() {
    FastPathTables.Inputs in = next.getAndSet(null);
    EbpfFastPath f = fp;
    if (in == null || f == null) {
      return;
    }
    FastPathTables.Built built = tables.build(in);
    incomplete = built.incomplete();
    try {
      for (int ifindex : built.interfaces()) {
        if (f.attach(ifindex)) {
          log.info(
              "router {}: kernel fast path attached to {}",
              config.router(),
              FastPathTables.nameOf(ifindex));
        }
      }
      f.setTable(built.table());
    } catch (IOException e) {
      log.warn(
          "router {}: the kernel fast path failed ({}); unloading it, forwarding in the JVM",
          config.router(),
          e.getMessage());
      unload();
    }
  }

  // ---- the broadcasts the router took itself, for the program's duplicate window ----

  /**
   * Marks gathered on the loop or on their way to the program, at most: beyond, a mark is dropped
   * and counted (the program then forwards a second copy of that broadcast once, and the receivers'
   * windows drop it).
   */
  static final int MAX_MARKS = 4096;

  private int[] markSources = new int[64]; // on the loop
  private long[] markIds = new long[64];
  private int marks;
  private boolean marksQueued;
  private final Runnable handOverMarks = this::handOverMarks; // queued once per turn: made once
  private final java.util.concurrent.atomic.AtomicInteger marksInFlight =
      new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong marksEntered =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong marksDropped =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * The router took broadcast {@code (source, id)} itself (over TCP or the ring, or passed up by
   * the program without being entered): the program's window is told, so that a copy of it that the
   * program takes later from a tree parent is dropped there as the router's window would. On the
   * loop; the map is written on the fast path's thread, once per turn of the loop.
   */
  public void broadcastTaken(int source, long id) {
    if (fp == null) {
      return;
    }
    if (marks + marksInFlight.get() >= MAX_MARKS) {
      marksDropped.incrementAndGet();
      return;
    }
    if (marks == markIds.length) {
      markSources = java.util.Arrays.copyOf(markSources, 2 * marks);
      markIds = java.util.Arrays.copyOf(markIds, 2 * marks);
    }
    markSources[marks] = source;
    markIds[marks] = id;
    marks++;
    if (!marksQueued) {
      marksQueued = true;
      core.loop().execute(handOverMarks);
    }
  }

  /** Hands the marks gathered this turn to the fast path's thread (on the loop). */
  private void handOverMarks() {
    marksQueued = false;
    int n = marks;
    ControlThread t = thread;
    if (n == 0 || t == null) {
      marks = 0;
      return;
    }
    int[] sources = java.util.Arrays.copyOf(markSources, n);
    long[] ids = java.util.Arrays.copyOf(markIds, n);
    marks = 0;
    marksInFlight.addAndGet(n);
    try {
      t.execute(() -> enterMarks(sources, ids, n));
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      marksInFlight.addAndGet(-n);
    }
  }

  /** Writes marks into the program's window (on the fast path's thread). */
  private void enterMarks(int[] sources, long[] ids, int n) {
    try {
      EbpfFastPath f = fp;
      if (f != null) {
        int entered = f.markBroadcasts(sources, ids, n);
        marksEntered.addAndGet(entered);
        marksDropped.addAndGet(n - entered);
      }
    } catch (IOException e) {
      marksDropped.addAndGet(n);
      log.debug("router {}: marking broadcasts in the kernel: {}", config.router(), e.getMessage());
    } finally {
      marksInFlight.addAndGet(-n);
    }
  }

  // ---- metrics ----

  private void registerMetrics() {
    Metrics m = core.metrics().registry();
    for (FastPathCounter c : FastPathCounter.values()) {
      m.counter(
          "bdrp_fastpath_packets_total",
          "DATA datagrams for this router's UDP port seen by the kernel fast path, by what it did:"
              + " split (forwarded in the kernel), split_local (and one copy up for local"
              + " delivery), bcast and bcast_local (a broadcast copied to the tree children in the"
              + " kernel, and one copy up for local delivery only), drop_bcast_duplicate (a"
              + " broadcast the kernel took already), drop_local_flag (the local-delivery flag"
              + " from the wire), up_* (passed to the router as they came, and why; up_large: too"
              + " large for the kernel to check its tag), drop_mac and drop_replay (a forged,"
              + " altered or replayed datagram dropped in the kernel), redirect_failed.",
          () -> counter(c),
          "result",
          c.label());
    }
    String marks =
        "Broadcasts the router took itself (not through the kernel fast path) that it entered in"
            + " the program's duplicate window (entered), or could not (dropped: too many waiting,"
            + " or the map refused them).";
    m.counter("bdrp_fastpath_broadcast_marks_total", marks, marksEntered::get, "result", "entered");
    m.counter("bdrp_fastpath_broadcast_marks_total", marks, marksDropped::get, "result", "dropped");
    for (int i = 0; i < neighbours.length; i++) {
      int k = i;
      m.counter(
          "bdrp_fastpath_forwarded_total",
          "Copies the kernel fast path sent to a neighbour.",
          () -> forwarded(k),
          "neighbour",
          Integer.toString(neighbours[i]));
    }
  }

  /**
   * Reads the program's counters for a scrape, on the fast path's thread (waiting for it up to a
   * second); not on the loop, which renders what was read last.
   */
  public void readCounters() {
    ControlThread t = thread;
    if (fp == null || t == null) {
      return;
    }
    try {
      java.util.concurrent.CompletableFuture.runAsync(
              () -> {
                EbpfFastPath f = fp;
                if (f != null) {
                  try {
                    counters = f.counters();
                    forwarded = f.forwarded(neighbours);
                  } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                }
              },
              t)
          .get(1, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException
        | java.util.concurrent.RejectedExecutionException e) {
      log.debug("router {}: cannot read the fast path's counters: {}", config.router(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private long counter(FastPathCounter c) {
    return counters[c.ordinal()];
  }

  /**
   * Broadcasts the program dropped because its duplicate window held them already, as last read for
   * a scrape: part of the router's {@code bdrp_drops_total{reason="duplicate"}}. The program is
   * loaded once, so the count only grows.
   */
  public long duplicates() {
    return counter(FastPathCounter.DROP_BCAST_DUPLICATE);
  }

  private long forwarded(int i) {
    return forwarded[i];
  }

  /**
   * Detaches and unloads the program (the router stops), on the fast path's thread; waits for it up
   * to 5 s unless called on the loop.
   */
  public void close() {
    ControlThread t = thread;
    if (t == null) {
      return;
    }
    try {
      t.execute(this::unload);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      return; // closed already
    }
    t.shutdown();
    if (!core.loop().inEventLoop()) {
      try {
        t.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Detaches and unloads the program (on the fast path's thread, or before it exists). */
  private void unload() {
    EbpfFastPath f = fp;
    if (f == null) {
      return;
    }
    fp = null;
    try {
      f.close();
      log.info("router {}: kernel fast path removed", config.router());
    } catch (IOException e) {
      log.warn("router {}: removing the kernel fast path: {}", config.router(), e.getMessage());
    }
  }
}
