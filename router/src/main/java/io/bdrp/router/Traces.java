package io.bdrp.router;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Trace;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import io.bdrp.transport.TraceFrames;
import io.bdrp.transport.TraceReport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Message tracing at this router (see {@code docs/trace.md}): as the ingress of a client's TRACE,
 * it routes a trace copy through the data plane ({@link DataPlane#trace}), collects the report of
 * every router the copies reach under the trace's id, and answers the client with TRACE_RESULT once
 * every expected report is in or its timeout passes; as any other router, it handles the TRACE_DATA
 * copies that neighbours send ({@link DataPlane#traceReceive}), sends its report towards the
 * ingress, and passes on the TRACE_REPORTs of others along the unicast routes.
 *
 * <p><b>How many reports to wait for.</b> Each report lists the copies its router sent on, and each
 * copy a link took is answered by one report of that neighbour, which names the sender: the ingress
 * waits for one report per copy taken, per (sender, receiver), holds a report that overtook the one
 * announcing its copy, and names the routers whose reports did not come.
 *
 * <p><b>Bounds.</b> A host may start {@link #PER_HOST_PER_SECOND} traces a second, the router
 * handles {@link #COPIES_PER_SECOND} trace copies from neighbours a second (the rest are dropped,
 * and their ingress names them missing), at most {@link #MAX_PENDING} traces wait for reports at
 * once, each at most its timeout; a report lists at most {@link TraceReport#MAX_HOSTS} hosts. Each
 * refusal is counted in {@code bdrp_traces_refused_total} by reason.
 *
 * <p>Owned by the router's event loop.
 */
public final class Traces {
  private static final Logger log = LoggerFactory.getLogger(Traces.class);

  /** Traces a host may start per second (and in a burst). */
  public static final int PER_HOST_PER_SECOND = 10;

  /** Trace copies from neighbours this router handles per second (and in a burst). */
  public static final int COPIES_PER_SECOND = 200;

  /** Traces that wait for reports at once, at most. */
  public static final int MAX_PENDING = 64;

  /** Reports held per trace that came before the report announcing their copy, at most. */
  private static final int MAX_EARLY = 1024;

  /** The largest TRACE_RESULT: reports beyond it are left out. */
  private static final int MAX_RESULT_BYTES = Frames.DEFAULT_MAX_FRAME_BYTES - 1024;

  private final RouterCore core;
  private final int self;
  private final DataPlane<MessageBytes> dataPlane;
  private final LinkOutput out;
  private final Hosts hosts;
  private final BooleanSupplier fastPathActive;
  private final DataHeader header = new DataHeader();
  private final MessageBytes message = new MessageBytes();
  private final Bucket copies = new Bucket(COPIES_PER_SECOND);
  private final Map<Long, Pending> pending = new LinkedHashMap<>();
  private final Metrics.Counter started;
  private final Metrics.Counter reportsUnsent;

  /** Whether the copies being sent now carry {@link DataHeader#FLAG_NAMED}. */
  private boolean named;

  private final Trace.Output<MessageBytes> copyOut;

  /**
   * @param fastPathActive whether the kernel fast path forwards transit DATA of UDP links now
   */
  public Traces(
      RouterCore core,
      DataPlane<MessageBytes> dataPlane,
      LinkOutput out,
      Hosts hosts,
      BooleanSupplier fastPathActive) {
    this.core = core;
    this.self = core.config().router();
    this.dataPlane = dataPlane;
    this.out = out;
    this.hosts = hosts;
    this.fastPathActive = fastPathActive;
    this.started = core.metrics().traces();
    this.reportsUnsent = core.metrics().traceReportsUnsent();
    this.copyOut =
        (neighbour, hopLimit, source, traceId, d, m) ->
            out.sendTrace(neighbour, hopLimit, source, traceId, d, named, m);
  }

  /**
   * The counter of traces refused for {@code reason}: {@code publish_permission}, {@code
   * host_rate}, {@code pending_full} (at the ingress), {@code router_rate} (trace copies from
   * neighbours); {@code not_offered} is counted by client sessions without tracing.
   */
  public Metrics.Counter refused(String reason) {
    return core.metrics().tracesRefused(reason);
  }

  /**
   * A token bucket: {@code rate} tokens a second, at most {@code rate} held. Owned by one thread.
   */
  public static final class Bucket {
    private final int rate;
    private double tokens;
    private long last = Long.MIN_VALUE;

    public Bucket(int rate) {
      this.rate = rate;
      this.tokens = rate;
    }

    /** Takes a token at time {@code nowNanos}; false if none is left. */
    public boolean take(long nowNanos) {
      if (last != Long.MIN_VALUE) {
        tokens = Math.min(rate, tokens + (nowNanos - last) * rate / 1e9);
      }
      last = nowNanos;
      if (tokens < 1) {
        return false;
      }
      tokens -= 1;
      return true;
    }
  }

  /** A trace waiting for its reports. */
  static final class Pending {
    final long traceId;
    final long correlationId;
    final Channel client;
    final int[] destinations;
    final List<TraceReport> reports = new ArrayList<>();

    /** Reports to come per copy taken: (sender, receiver) -> count. */
    final Map<Long, Integer> expected = new LinkedHashMap<>();

    /**
     * Reports that came before the report announcing their copy: reports travel back on the unicast
     * routes, so the report of a router two hops out may overtake its parent's. Held until
     * announced (at most {@link #MAX_EARLY}); those never announced are left out of the answer.
     */
    final List<TraceReport> early = new ArrayList<>();

    int outstanding;
    ScheduledFuture<?> timeout;

    Pending(long traceId, long correlationId, Channel client, int[] destinations) {
      this.traceId = traceId;
      this.correlationId = correlationId;
      this.client = client;
      this.destinations = destinations;
    }

    /** Takes a report: the ingress's own, or one of a router that was sent a copy. */
    void add(TraceReport r, boolean own) {
      if (!own && !consume(r)) {
        if (early.size() < MAX_EARLY) {
          early.add(r);
        }
        return;
      }
      reports.add(r);
      boolean announced = false;
      for (TraceReport.Copy c : r.copies()) {
        if (c.sent()) {
          expected.merge(edge(r.router(), c.neighbour()), 1, Integer::sum);
          outstanding++;
          announced = true;
        }
      }
      if (announced && !early.isEmpty()) {
        for (int i = 0; i < early.size(); i++) {
          TraceReport e = early.get(i);
          if (expected.containsKey(edge(e.from(), e.router()))) {
            early.remove(i);
            add(e, false);
            i = -1; // the list changed under the recursion: look again from the start
          }
        }
      }
    }

    /** Counts {@code r} against the copy it answers; false if that copy is not (yet) known. */
    private boolean consume(TraceReport r) {
      long edge = edge(r.from(), r.router());
      Integer left = expected.get(edge);
      if (left == null) {
        return false;
      }
      outstanding--;
      if (left == 1) {
        expected.remove(edge);
      } else {
        expected.put(edge, left - 1);
      }
      return true;
    }
  }

  private static long edge(int from, int to) {
    return ((long) from << 32) | (to & 0xffffffffL);
  }

  /**
   * Starts the trace a client asked for, the checks of its permission passed: routes its trace copy
   * and answers on {@code client} (TRACE_RESULT, or ERROR OVERLOADED when too many traces wait).
   *
   * @param named whether the tracing user may see host names
   * @return false if refused for want of room (the caller answers and counts)
   */
  public boolean start(ClientFrame.Trace t, boolean named, Channel client) {
    if (pending.size() >= MAX_PENDING) {
      refused("pending_full").inc();
      return false;
    }
    started.inc();
    Message m = t.message();
    int length = MessageCodec.encodedLength(m);
    ByteBuf bytes = Unpooled.buffer(length);
    Trace.Step step;
    try {
      Frames.writeVia(bytes, m, length, MessageCodec::encode);
      this.named = named;
      step = dataPlane.trace(m, message.set(bytes, 0, length), copyOut);
    } finally {
      message.set(null, 0, 0);
      bytes.release();
    }
    int[] d = routers(step.destinations());
    Pending p = new Pending(step.traceId(), t.correlationId(), client, d);
    p.add(report(step, named), true);
    if (p.outstanding == 0) {
      answer(p);
      return true;
    }
    pending.put(p.traceId, p);
    p.timeout = core.loop().schedule(() -> expire(p.traceId), t.timeoutMs(), TimeUnit.MILLISECONDS);
    return true;
  }

  private void expire(long traceId) {
    Pending p = pending.remove(traceId);
    if (p != null) {
      answer(p);
    }
  }

  /** Answers the client of {@code p} with what came in. */
  private void answer(Pending p) {
    if (p.timeout != null) {
      p.timeout.cancel(false);
    }
    List<Integer> missing = new ArrayList<>();
    p.expected.forEach(
        (edge, n) -> {
          for (int i = 0; i < n; i++) {
            missing.add((int) (long) edge);
          }
        });
    List<TraceReport> reports = new ArrayList<>();
    int bytes = 64 + 2 * p.destinations.length + 2 * missing.size();
    for (TraceReport r : p.reports) {
      bytes += r.encodedLength();
      if (bytes > MAX_RESULT_BYTES) {
        log.info(
            "router {}: trace {} has reports beyond {} bytes; {} left out",
            self,
            p.traceId,
            MAX_RESULT_BYTES,
            p.reports.size() - reports.size());
        break;
      }
      reports.add(r);
    }
    if (p.client.isActive()) {
      p.client.writeAndFlush(
          new ClientFrame.TraceResult(
              p.correlationId,
              p.traceId,
              self,
              p.destinations,
              missing.stream().mapToInt(Integer::intValue).toArray(),
              reports));
    }
  }

  /**
   * A TRACE_DATA or TRACE_REPORT frame from neighbour {@code from}, which the caller still owns;
   * taken from a link's TCP session only. A malformed one is counted and dropped.
   */
  public void receive(Link from, ByteBuf frame, String transport) {
    int type = frame.getUnsignedByte(frame.readerIndex() + Frames.TYPE_OFFSET);
    try {
      if (!transport.equals("tcp")) {
        throw new ProtocolException(
            io.bdrp.transport.ErrorCode.MALFORMED_FRAME,
            "trace frames travel on the TCP session only");
      }
      if (type == FrameType.TRACE_REPORT.number()) {
        receiveReport(frame);
      } else {
        receiveCopy(from, frame);
      }
    } catch (ProtocolException e) {
      core.metrics().malformedData(transport).inc();
      log.debug(
          "router {}: malformed trace frame from {} over {}: {}",
          self,
          from.neighbour(),
          transport,
          e.getMessage());
    }
  }

  private void receiveCopy(Link from, ByteBuf frame) {
    DataHeader h = header.wrapTrace(frame);
    if (!copies.take(System.nanoTime())) {
      refused("router_rate").inc();
      return;
    }
    Trace.Step step;
    try {
      this.named = h.named();
      step =
          dataPlane.traceReceive(
              from.neighbour(),
              h,
              message.set(frame, frame.readerIndex() + h.messageOffset(), h.messageLength()),
              copyOut);
    } finally {
      message.set(null, 0, 0);
    }
    TraceReport r = report(step, h.named());
    if (step.source() == self) {
      taken(step.traceId(), r); // a copy that came back here (never from a correct neighbour)
      return;
    }
    int hop = core.node().routes().nextHop(step.source());
    if (hop < 0 || !out.sendTraceReport(hop, step.source(), step.traceId(), r)) {
      reportsUnsent.inc();
      log.debug("router {}: trace report for router {} not sent", self, step.source());
    }
  }

  private void receiveReport(ByteBuf frame) {
    int source = TraceFrames.reportSource(frame);
    if (source != self) {
      int hop = core.node().routes().nextHop(source);
      if (hop < 0 || !out.forward(hop, frame)) {
        reportsUnsent.inc();
        log.debug("router {}: trace report for router {} not passed on", self, source);
      }
      return;
    }
    TraceFrames.Report r = TraceFrames.readReport(frame);
    taken(r.traceId(), r.report());
  }

  private void taken(long traceId, TraceReport r) {
    Pending p = pending.get(traceId);
    if (p == null) {
      return; // answered already (timed out), or not this router's
    }
    p.add(r, false);
    if (p.outstanding <= 0) {
      pending.remove(traceId);
      answer(p);
    }
  }

  /** The report of {@code step}: its copies with what the fast path would do, hosts, drops. */
  private TraceReport report(Trace.Step step, boolean named) {
    int flags =
        (step.ingress() ? TraceReport.INGRESS : 0)
            | (step.broadcast() ? TraceReport.BROADCAST : 0)
            | (step.local() ? TraceReport.LOCAL : 0)
            | (named ? TraceReport.NAMED : 0);
    boolean fast = kernelWouldForward(step);
    List<TraceReport.Copy> copies = new ArrayList<>();
    for (Trace.Copy c : step.copies()) {
      copies.add(new TraceReport.Copy(c.neighbour(), c.sent(), fast, routers(c.d())));
    }
    int[] ids = step.hosts();
    List<TraceReport.Host> listed = new ArrayList<>();
    for (int i = 0; i < Math.min(ids.length, TraceReport.MAX_HOSTS); i++) {
      String name = "";
      if (named && hosts.get(ids[i]) instanceof AttachedHost a) {
        name = a.name;
      }
      listed.add(new TraceReport.Host(ids[i] & 0xFFFF_FFFFL, name));
    }
    List<TraceReport.Dropped> drops = new ArrayList<>();
    for (Trace.Dropped d : step.drops()) {
      if (drops.size() == TraceReport.MAX_DROPS) {
        break;
      }
      drops.add(
          new TraceReport.Dropped(
              d.reason().name().toLowerCase(Locale.ROOT), d.count(), d.routers()));
    }
    return new TraceReport(
        self, step.from(), step.hopLimit(), flags, copies, step.matching(), listed, drops);
  }

  /**
   * Whether the kernel fast path would have forwarded the real DATA packet of {@code step} without
   * waking the JVM: it is loaded, the packet is a transit packet (not at its ingress) that came by
   * UDP with a hop limit above 1, every copy goes to a neighbour whose DATA goes by UDP, and either
   * it goes by D and every router of D other than this one has a next hop, or it is a broadcast
   * from the next hop towards its source, which has no former next hop in its grace (the conditions
   * of the TC program, sidecar/).
   */
  private boolean kernelWouldForward(Trace.Step step) {
    if (!fastPathActive.getAsBoolean()
        || step.ingress()
        || step.hopLimit() <= 1
        || !out.dataByUdp(step.from())
        || step.copies().isEmpty()) {
      return false;
    }
    if (step.broadcast()) {
      io.bdrp.routing.ForwardingTable routes = core.node().routes();
      if (routes.nextHop(step.source()) != step.from()) {
        return false; // from a former parent: the kernel passes it up
      }
      for (var n : core.config().neighbours()) {
        if (routes.isFormerHop(step.source(), n.router())) {
          return false; // the source's tree is changing: the kernel passes it up
        }
      }
    }
    for (Trace.Dropped d : step.drops()) {
      if (d.reason() != DataPlane.Drop.LINK) {
        return false; // routers without a route, unknown routers: the kernel passes it up
      }
    }
    for (Trace.Copy c : step.copies()) {
      if (!out.dataByUdp(c.neighbour())) {
        return false;
      }
    }
    return true;
  }

  /** The routers of bitmap {@code d}, ascending (none for null). */
  private static int[] routers(long[] d) {
    if (d == null) {
      return new int[0];
    }
    int n = 0;
    for (long w : d) {
      n += Long.bitCount(w);
    }
    int[] r = new int[n];
    int k = 0;
    for (int i = 0; i < d.length; i++) {
      long w = d[i];
      while (w != 0) {
        r[k++] = (i << 6) + Long.numberOfTrailingZeros(w);
        w &= w - 1;
      }
    }
    return r;
  }
}
