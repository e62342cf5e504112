package io.bdrp.router.links;

import io.bdrp.router.Handshakes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.OriginKeys;
import io.bdrp.routing.ControlMessage;
import io.bdrp.transport.AdminEndpoint;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolException;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.SessionFrame;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One router session: the hello exchange, then the neighbour's control and DATA frames (see {@link
 * RouterLinks} for what is checked and refused). Large advertisements arrive decoded by {@link
 * ControlOffload}; with signing routers, claims are verified on the links' control thread before
 * they are applied, in the link's order.
 *
 * <p>Owned by the router's event loop.
 */
final class LinkSession extends SimpleChannelInboundHandler<Object> {
  private static final Logger log = LoggerFactory.getLogger(RouterLinks.class);

  private final RouterLinks links;
  private final RouterCore core;
  private final RouterConfig config;
  private final Link dialling; // the link this session dials, or null if accepted
  private Link link; // after a valid hello
  // This session's hello nonce, from which its datagram keys are derived.
  private final byte[] nonce;

  LinkSession(RouterLinks links, Link dialling) {
    super(Object.class, false);
    this.links = links;
    this.core = links.core;
    this.config = links.config;
    this.dialling = dialling;
    this.nonce =
        config.udpProtection() == UdpProtection.NONE ? new byte[0] : DatagramAuth.newNonce();
    int rate = config.limits().linkControlFramesPerSecond();
    this.interval = Math.max(1, 1_000_000_000L / rate);
    this.burst = Math.max(1, rate / 10);
    this.drainBatch = Math.min(burst, Math.max(1, rate / 100));
  }

  /** Whatever a read brought from the neighbour shows it alive: once per read, not per frame. */
  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (link != null) {
      link.lastReadNanos = System.nanoTime();
      core.node().heard(link.neighbour());
    }
    ctx.fireChannelReadComplete();
  }

  /**
   * The dialling router speaks first; the accepting one answers once the dialler's hello has passed
   * its checks, when it knows which neighbour it answers and can put that link's transport
   * endpoints in its hello.
   */
  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (dialling != null) {
      ctx.writeAndFlush(links.ownHello(nonce, dialling, ctx.channel().localAddress()));
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof ClientFrame.Error e) {
        errorFromPeer(ctx, e);
      } else if (link == null) {
        if (!(msg instanceof RouterHello h)) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION,
              "the first frame of a router session must be ROUTER_HELLO");
        }
        hello(ctx, h);
      } else if (msg instanceof ByteBuf frame) {
        links.receiver.receive(link, frame, "tcp");
      } else if (msg instanceof ControlMessage m) {
        if (m.sender() != link.neighbour()) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION,
              "control message names sender " + m.sender() + " on the link to " + link.neighbour());
        }
        link.controlIn.inc();
        if (log.isDebugEnabled()) {
          log.debug("router {}: from router {}: {}", config.router(), link.neighbour(), m);
        }
        admit(ctx, m);
      } else if (msg instanceof ClientFrame.Ping p) {
        admit(ctx, p);
      } else if (msg instanceof SessionFrame s) {
        if (s instanceof ClientFrame.Bye) {
          ctx.close();
        }
      } else {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_VIOLATION, "unexpected frame " + msg.getClass().getSimpleName());
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  /** Control messages of this link handed to the control thread and not yet applied. */
  private int deferred;

  /**
   * Most control messages of one link waiting for the control thread: at this many the link is not
   * read until they are down to {@link #RESUME_DEFERRED}, so that a neighbour cannot queue without
   * bound behind a busy control thread (each message is at most one frame).
   */
  static final int MAX_DEFERRED = 64;

  static final int RESUME_DEFERRED = 16;

  // The neighbour's control frames (and PINGs) are taken at most limits.linkControlFramesPerSecond
  // a second, in bursts of a tenth of a second's worth at most (the generic cell rate algorithm: a
  // frame is taken when the time at which it would be due at the rate is at most a burst ahead of
  // now). Frames beyond it wait here, in order, and the link is not read until they are done, so
  // that a neighbour cannot keep the loop busy with small frames, nor hold it for long at once, and
  // nothing it sends is lost: it is read no faster than the rate.
  private final long interval; // nanoseconds between frames at the rate
  private final long burst; // the most frames taken at once
  private final long drainBatch; // the frames a drain waits for: a hundredth of a second's worth
  private long due = Long.MIN_VALUE; // when the next frame is due at the rate; none taken yet
  private final ArrayDeque<Object> held = new ArrayDeque<>();
  private ScheduledFuture<?> drain;

  /** Takes {@code frame} now if the rate allows it and nothing waits before it; else holds it. */
  private void admit(ChannelHandlerContext ctx, Object frame) {
    if (held.isEmpty() && take(ctx)) {
      take(ctx, frame);
      return;
    }
    held.add(frame);
    link.controlThrottled.inc();
    throttled();
    if (held.size() == 1) {
      ReadHolds.set(ctx.channel(), ReadHolds.RATE, true);
      scheduleDrain(ctx);
    }
  }

  /** Whether the rate allows a frame now; if so, it is counted. */
  private boolean take(ChannelHandlerContext ctx) {
    long now = ctx.executor().ticker().nanoTime();
    long start = due == Long.MIN_VALUE ? now : Math.max(due, now);
    if (start - now > (burst - 1) * interval) {
      return false;
    }
    due = start + interval;
    return true;
  }

  private void take(ChannelHandlerContext ctx, Object frame) {
    if (frame instanceof ClientFrame.Ping p) {
      // A reply is not queued above the link's high water mark: a neighbour that sends PINGs and
      // does not read cannot make PONGs pile up.
      if (ctx.channel().isWritable()) {
        ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
      }
      return;
    }
    ControlMessage m = (ControlMessage) frame;
    OriginKeys keys = links.originKeys;
    if (keys != null && (deferred > 0 || OriginKeys.carriesClaims(m))) {
      prepareThenApply(ctx, keys, m);
    } else {
      apply(m);
    }
  }

  /** Schedules the next take of waiting frames, when the rate allows a batch of them. */
  private void scheduleDrain(ChannelHandlerContext ctx) {
    long at = due - (burst - Math.min(held.size(), drainBatch)) * interval;
    long delay = Math.max(1, at - ctx.executor().ticker().nanoTime());
    drain = ctx.executor().schedule(() -> drain(ctx), delay, TimeUnit.NANOSECONDS);
  }

  /** Takes the waiting frames the rate allows now; reads the link again when none wait. */
  private void drain(ChannelHandlerContext ctx) {
    drain = null;
    if (!ctx.channel().isActive()) {
      held.clear();
      return;
    }
    int taken = 0;
    try {
      while (!held.isEmpty() && take(ctx)) {
        take(ctx, held.poll());
        taken++;
      }
    } catch (RuntimeException e) {
      ctx.fireExceptionCaught(e); // as if it had been taken when it came
    }
    if (taken > 0) {
      // What the neighbour sent arrives now, as far as liveness is concerned: a link read slowly
      // because its frames wait here is not a silent one.
      link.lastReadNanos = System.nanoTime();
      core.node().heard(link.neighbour());
    }
    if (held.isEmpty()) {
      ReadHolds.set(ctx.channel(), ReadHolds.RATE, false);
    } else {
      scheduleDrain(ctx);
    }
  }

  /** A frame held for the rate: a WARN line at most every ten seconds. */
  private void throttled() {
    long unlogged = link.throttledLog.due();
    if (unlogged >= 0) {
      log.warn(
          "router {}: router {} sends control frames faster than"
              + " limits.linkControlFramesPerSecond ({}): its link is read no faster ({} frames"
              + " waited since the last report)",
          config.router(),
          link.neighbour(),
          config.limits().linkControlFramesPerSecond(),
          unlogged + 1);
    }
  }

  private void apply(ControlMessage m) {
    if (!core.node().receive(m)) {
      futureEpoch(m);
    }
    core.rearm();
  }

  /**
   * Verifies the claims of {@code m} on the control thread, then applies it on the loop: signature
   * checks of a large flood stay off the loop. Every control message of the link that comes while
   * one is away takes the same way, so the link's messages are applied in the order they came.
   */
  private void prepareThenApply(ChannelHandlerContext ctx, OriginKeys keys, ControlMessage m) {
    if (++deferred == MAX_DEFERRED) {
      ReadHolds.set(ctx.channel(), ReadHolds.VERIFYING, true);
    }
    try {
      core.linkControl()
          .execute(
              () -> {
                try {
                  keys.prepare(m);
                } catch (RuntimeException e) {
                  log.warn("router {}: checking claims failed", config.router(), e);
                }
                try {
                  ctx.executor()
                      .execute(
                          () -> {
                            if (deferred-- == RESUME_DEFERRED + 1
                                && ReadHolds.held(ctx.channel(), ReadHolds.VERIFYING)) {
                              ReadHolds.set(ctx.channel(), ReadHolds.VERIFYING, false);
                            }
                            if (ctx.channel().isActive()) {
                              apply(m);
                            }
                          });
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                  // The router is stopping: nothing is applied any more.
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      deferred--; // the router is stopping
    }
  }

  /** A control message refused for its epoch: a WARN line at most every ten seconds. */
  private void futureEpoch(ControlMessage m) {
    long unlogged = links.futureEpochLog.due();
    if (unlogged >= 0) {
      log.warn(
          "router {}: refused {} from router {}: it names an epoch more than"
              + " routing.maxEpochAheadMs ({} ms) ahead of this clock ({} such messages since the"
              + " last report)",
          config.router(),
          m,
          link.neighbour(),
          config.routing().maxEpochAheadMs(),
          unlogged + 1);
    }
  }

  private void errorFromPeer(ChannelHandlerContext ctx, ClientFrame.Error e) {
    String code =
        e.knownCode()
            .map(c -> c.name().toLowerCase(java.util.Locale.ROOT))
            .orElse(Integer.toString(e.code()));
    core.metrics().linkErrorReceived(code).inc();
    log.warn(
        "router {}: neighbour {} at {} reports {}: {}",
        config.router(),
        link != null ? link.neighbour() : dialling != null ? dialling.neighbour() : "(unknown)",
        ctx.channel().remoteAddress(),
        code,
        e.message());
    if (link == null) {
      ctx.close(); // refused before the hello was accepted: nothing else can follow
    }
  }

  private void hello(ChannelHandlerContext ctx, RouterHello h) {
    RouterHello.Incompatibility why = links.ownHello(nonce, null, null).incompatibility(h);
    if (why != null) {
      if (dialling == null) {
        // The dialler learns this router's parameters, and refuses too, naming the same one
        // (not where its admin API is: the dialler is not a neighbour of this network).
        ctx.write(links.ownHello(nonce, null, null));
      }
      core.metrics().linkRefused(why.parameter()).inc();
      log.warn(
          "router {}: refusing router {} at {}: {}",
          config.router(),
          h.routerNumber(),
          ctx.channel().remoteAddress(),
          why.reason());
      throw new ProtocolException(ErrorCode.INCOMPATIBLE_PEER, why.reason());
    }
    Link l = links.get(h.routerNumber());
    if (l == null) {
      core.metrics().linkRefused("neighbour").inc();
      log.warn(
          "router {}: refusing router {} at {}: not a configured neighbour",
          config.router(),
          h.routerNumber(),
          ctx.channel().remoteAddress());
      throw new ProtocolException(
          ErrorCode.NOT_AUTHORIZED,
          "router " + h.routerNumber() + " is not a configured neighbour");
    }
    if (dialling != null && dialling != l) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_VIOLATION,
          "dialled router "
              + dialling.neighbour()
              + " but router "
              + h.routerNumber()
              + " answered");
    }
    if (config.routerTls() != null) {
      List<Integer> named = RouterLinks.peerRouterNumbers(ctx);
      if (!named.contains(h.routerNumber())) {
        core.metrics().linkRefused("certificate").inc();
        log.warn(
            "router {}: refusing router {} at {}: its certificate names {}",
            config.router(),
            h.routerNumber(),
            ctx.channel().remoteAddress(),
            named.isEmpty() ? "no router" : "router " + named);
        throw new ProtocolException(
            ErrorCode.NOT_AUTHORIZED,
            "the certificate names "
                + (named.isEmpty() ? "no router" : "router " + named)
                + ", the hello router "
                + h.routerNumber());
      }
    }
    if (!MessageDigest.isEqual(links.token(), h.authToken())) {
      core.metrics().linkRefused("token").inc();
      log.warn(
          "router {}: refusing router {} at {}: wrong router token",
          config.router(),
          h.routerNumber(),
          ctx.channel().remoteAddress());
      throw new ProtocolException(ErrorCode.NOT_AUTHORIZED, "wrong router token");
    }
    boolean ours = dialling != null;
    if (l.session != null && l.session.isActive() && links.silent(l)) {
      // Nothing heard on the live session for a dead interval: it is dead, whatever TCP says.
      Channel old = l.session;
      links.detach(l);
      links.closeSilent(l, old);
    }
    if (l.session != null && l.session.isActive() && h.epoch() != l.peerEpoch) {
      // Another process claims the number of a neighbour that has a live session here (a
      // restarted router whose old session is not yet known dead, or a misconfigured twin): the
      // live session stays; once it ends, a redial gets in.
      core.metrics().linkRefused("duplicate").inc();
      log.warn(
          "router {}: refusing router {} at {} (epoch {}): router {} is connected from {} (epoch"
              + " {})",
          config.router(),
          h.routerNumber(),
          ctx.channel().remoteAddress(),
          h.epoch(),
          l.neighbour(),
          l.session.remoteAddress(),
          l.peerEpoch);
      throw new ProtocolException(
          ErrorCode.DUPLICATE_ROUTER,
          "router " + h.routerNumber() + " is already connected from another process");
    }
    if (l.session != null && l.session.isActive()) {
      // Both sides dialled: keep the session dialled by the lower-numbered core.
      int keepDialler = Math.min(config.router(), l.neighbour());
      boolean newIsKeeper = (ours ? config.router() : l.neighbour()) == keepDialler;
      if (!newIsKeeper) {
        ctx.close();
        return;
      }
      Channel old = l.session;
      links.detach(l);
      old.close();
    }
    if (!ours) {
      ctx.writeAndFlush(links.ownHello(nonce, l, ctx.channel().localAddress()));
    }
    link = l;
    l.attach(ctx.channel());
    l.lastReadNanos = System.nanoTime();
    l.peerEpoch = h.epoch();
    l.dialledByUs = ours;
    l.advertisedAdmin = advertisedAdmin(h, (InetSocketAddress) ctx.channel().remoteAddress());
    core.node().unicast().acceptsDigests(l.neighbour(), h.takesRouteDigests());
    Handshakes.done(ctx);
    DataTransport.Peer peer =
        new DataTransport.Peer((InetSocketAddress) ctx.channel().remoteAddress(), h, nonce);
    for (DataTransport t : links.transports) {
      DataPath p = t.linkUp(l, peer);
      if (p != null) {
        l.path = p;
      }
    }
    ctx.channel()
        .closeFuture()
        .addListener(
            f -> {
              if (l.session == ctx.channel()) {
                if (!core.closed()) { // not every link of a router that stops
                  log.info("router {}: link to router {} down", config.router(), l.neighbour());
                }
                links.detach(l);
                core.rearm();
                if (l.dialledByUs) {
                  links.redialLater(l);
                }
              }
            });
    if (l.unreachableSince != 0) {
      log.info(
          "router {}: reached router {} after {} s",
          config.router(),
          l.neighbour(),
          TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - l.unreachableSince));
      l.unreachableSince = 0;
    }
    log.info(
        "router {}: link to router {} up ({}, DATA over {})",
        config.router(),
        l.neighbour(),
        ours ? "dialled" : "accepted",
        l.path != null ? l.path.describe() : "TCP");
  }

  /**
   * The base URL of the admin API the neighbour's hello tells ({@link AdminEndpoint}), at the
   * address its session comes from, or null when it tells none. An admin endpoint that is malformed
   * is the neighbour's input: ignored (WARN, {@code bdrp_link_hello_ignored_total{field="admin"}}),
   * and the link comes up all the same.
   */
  private String advertisedAdmin(RouterHello h, InetSocketAddress remote) {
    AdminEndpoint a;
    try {
      a = AdminEndpoint.of(h);
    } catch (IllegalArgumentException e) {
      core.metrics().helloIgnored(AdminEndpoint.TRANSPORT).inc();
      log.warn(
          "router {}: ignoring the admin endpoint in the hello of router {} at {}: {}",
          config.router(),
          h.routerNumber(),
          remote,
          e.getMessage());
      return null;
    }
    return a == null || remote == null || remote.getAddress() == null
        ? null
        : a.url(remote.getAddress());
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    held.clear();
    if (drain != null) {
      drain.cancel(false);
      drain = null;
    }
    if (dialling != null && link == null) {
      links.redialLater(dialling);
    }
    ctx.fireChannelInactive();
  }
}
