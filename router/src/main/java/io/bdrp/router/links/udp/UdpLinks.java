package io.bdrp.router.links.udp;

import io.bdrp.router.Capabilities;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.RouterPorts;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.links.DataPath;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.UdpProtection;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.IntegerUnixChannelOption;
import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DATA over UDP: one socket per router, bound when some neighbour's link is configured with {@code
 * transport: udp}. Each datagram holds exactly one DATA frame, laid out as on TCP (length field
 * first, then the fixed header, D and the message), so that a program in the kernel can read and
 * rewrite the header at a fixed offset without parsing the message.
 *
 * <p>A neighbour's hello announces its UDP port; DATA to it goes to that port at the address of its
 * TCP session when this router's configuration says {@code udp} for it, and comes from there. A
 * frame larger than {@code limits.maxDatagramBytes} goes over the TCP session instead. Datagrams
 * that are malformed, or come from an address that is no neighbour's, are counted and dropped;
 * datagrams lost to a full socket receive buffer are counted by the kernel and shown in the
 * metrics. Nothing here blocks or throws into the loop.
 *
 * <p>Datagrams are protected as {@code auth.udp} says ({@link DatagramAuth}): by default each
 * carries a sequence number and a SipHash tag under a key of the link's session, and one that is
 * forged, altered or replayed is dropped and counted ({@code
 * bdrp_udp_datagrams_dropped_total{reason="mac"|"replay"|"short"}}).
 *
 * <p>Control frames (hellos, routes, advertisements) never travel by UDP.
 *
 * <p>Owned by the router's event loop.
 */
public final class UdpLinks implements DataTransport {
  private static final Logger log = LoggerFactory.getLogger(UdpLinks.class);

  private final RouterCore core;
  private final RouterConfig config;
  private Channel channel;
  private final Map<InetSocketAddress, Link> bySender = new HashMap<>();
  private long generation; // counts link changes, for the kernel fast path's tables
  private long sessions; // numbers link sessions for their datagram protection

  private static final int SOL_SOCKET = 1;
  private static final IntegerUnixChannelOption SO_RCVBUFFORCE =
      new IntegerUnixChannelOption("SO_RCVBUFFORCE", SOL_SOCKET, 33);
  private static final IntegerUnixChannelOption SO_SNDBUFFORCE =
      new IntegerUnixChannelOption("SO_SNDBUFFORCE", SOL_SOCKET, 32);

  /** Datagrams dropped, by reason: made once, not per datagram. */
  private final Metrics.Counter unknownSender;

  private final Map<DatagramAuth.Refusal, Metrics.Counter> refused =
      new EnumMap<>(DatagramAuth.Refusal.class);

  private final DataTransport.Receiver receiver;

  private final OutputBatches batches;

  public UdpLinks(RouterCore core, OutputBatches batches, DataTransport.Receiver receiver) {
    this.core = core;
    this.batches = batches;
    this.receiver = receiver;
    this.config = core.config();
    this.unknownSender = core.metrics().udpDropped("unknown_sender");
    for (DatagramAuth.Refusal r : DatagramAuth.Refusal.values()) {
      refused.put(r, core.metrics().udpDropped(r.name().toLowerCase(Locale.ROOT)));
    }
    // The JVM's first nonce and key seed the generator and load the MAC (files read): here, on the
    // thread that starts the router, not on its loop at the first hello.
    DatagramAuth.key(new byte[0], 0, 0, DatagramAuth.newNonce(), DatagramAuth.newNonce());
    this.keyLog = UdpKeyLog.fromEnvironment(config, core.linkControl());
  }

  private final UdpKeyLog keyLog; // null: keys are not written

  @Override
  public String name() {
    return "udp";
  }

  /** Binds the socket if some neighbour uses UDP. */
  @Override
  public void start() throws InterruptedException {
    if (!config.usesUdp()) {
      return;
    }
    InetSocketAddress at = RouterPorts.resolve(config.effectiveUdpListen());
    RouterLimits limits = config.limits();
    int datagram = Math.max(2048, limits.maxDatagramBytes());
    Bootstrap b =
        new Bootstrap()
            .group(core.loop())
            .channel(core.datagramChannel())
            .option(ChannelOption.SO_RCVBUF, limits.udpReceiveBufferBytes())
            .option(ChannelOption.SO_SNDBUF, limits.udpSendBufferBytes())
            // Datagrams wait for the end of the batch's flush like a link's TCP output does.
            .option(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(limits.linkLowWaterBytes(), limits.linkHighWaterBytes()))
            .handler(new Receiver());
    if (core.epoll() && Capabilities.has(Capabilities.NET_ADMIN)) {
      // Datagrams have no flow control: a burst that outruns the loop is held here or lost. With
      // CAP_NET_ADMIN the sizes asked for hold even beyond net.core.rmem_max / wmem_max.
      b.option(SO_RCVBUFFORCE, limits.udpReceiveBufferBytes())
          .option(SO_SNDBUFFORCE, limits.udpSendBufferBytes());
    }
    if (core.epoll()) {
      // recvmmsg: one read system call fills a 64 KiB buffer with up to 32 datagrams.
      b.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, datagram)
          .option(
              ChannelOption.RECVBUF_ALLOCATOR,
              new FixedRecvByteBufAllocator(Math.max(64 * 1024, datagram)));
    } else {
      // One buffer per datagram, as large as the largest this network sends.
      b.option(ChannelOption.RECVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(datagram));
    }
    var f = b.bind(at).await();
    if (!f.isSuccess()) {
      throw new IllegalStateException(
          "listen.udp: cannot bind UDP " + at + ": " + f.cause().getMessage(), f.cause());
    }
    channel = f.channel();
    core.track(channel);
  }

  /** Takes {@code socket} as the UDP socket and reads its datagrams: for tests of this class. */
  void useSocket(Channel socket) {
    channel = socket;
    socket.pipeline().addLast(new Receiver());
  }

  /** The bound UDP port, or 0 if there is no socket. */
  public int port() {
    return channel == null ? 0 : ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The bound address, or null. */
  public InetSocketAddress address() {
    return channel == null ? null : (InetSocketAddress) channel.localAddress();
  }

  /**
   * The datagram protection of one link session: keys derived from the two hellos' nonces ({@link
   * DatagramAuth#key}), the sealer of datagrams to the neighbour, the opener of its datagrams (with
   * their replay windows), and the session's number, which the kernel fast path uses to tell a new
   * session's state from an old one's.
   */
  public record Session(
      long id,
      byte[] keyOut,
      byte[] keyIn,
      DatagramAuth.Sealer sealer,
      DatagramAuth.Opener opener) {}

  /**
   * The TCP session of {@code l} is up, with the neighbour at {@code peer.remote()} announcing UDP
   * port {@code peer.hello().udpPort()} (0: none): datagrams from there are the neighbour's, and
   * DATA to it goes there if configured so. The two hellos' nonces (empty with {@code auth.udp:
   * none}) make the session's keys.
   */
  @Override
  public DataPath linkUp(Link l, DataTransport.Peer peer) {
    linkDown(l);
    generation++;
    boolean wanted = l.config.transport() == RouterConfig.LinkTransport.UDP;
    int udpPort = peer.hello().udpPort();
    if (udpPort == 0 || channel == null) {
      if (wanted) {
        log.warn(
            "router {}: link to router {} is configured for UDP, but {}; DATA goes over TCP",
            config.router(),
            l.neighbour(),
            channel == null
                ? "this router has no UDP socket"
                : "the neighbour announced no UDP port (no neighbour of its uses udp)");
      }
      return null;
    }
    UdpProtection p = config.udpProtection();
    if (p != UdpProtection.NONE) {
      byte[] token = config.routerTokenBytes();
      byte[] ownNonce = peer.ownNonce();
      byte[] theirNonce = peer.hello().udpNonce();
      byte[] out = DatagramAuth.key(token, config.router(), l.neighbour(), ownNonce, theirNonce);
      byte[] in = DatagramAuth.key(token, l.neighbour(), config.router(), theirNonce, ownNonce);
      l.udp =
          new Session(
              ++sessions, out, in, new DatagramAuth.Sealer(p, out), new DatagramAuth.Opener(p, in));
      if (keyLog != null) {
        keyLog.append(l.neighbour(), l.udp);
      }
    }
    l.udpPeer = new InetSocketAddress(peer.remote().getAddress(), udpPort);
    bySender.put(l.udpPeer, l);
    return wanted ? new UdpPath(l) : null;
  }

  /** A link's DATA as datagrams to the neighbour's UDP socket. */
  private final class UdpPath implements DataPath {
    private final Link link;
    private final int maxDatagramBytes = config.limits().maxDatagramBytes();

    UdpPath(Link link) {
      this.link = link;
    }

    @Override
    public Outcome send(
        int hopLimit, int source, long messageId, long[] d, int layout, MessageBytes message) {
      int frame = DataHeader.frameLength(layout, 0) + message.length;
      int overhead = overhead();
      if (frame + overhead > maxDatagramBytes) {
        return Outcome.TOO_LARGE;
      }
      if (channel == null || !channel.isWritable()) {
        return Outcome.FULL;
      }
      ByteBuf b = channel.alloc().directBuffer(frame + overhead);
      DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, layout, message.length);
      message.writeTo(b);
      UdpLinks.this.send(link, b);
      return Outcome.SENT;
    }

    @Override
    public RouterConfig.LinkTransport transport() {
      return RouterConfig.LinkTransport.UDP;
    }

    @Override
    public String describe() {
      return "UDP to " + link.udpPeer;
    }
  }

  /** Bytes the datagram protection adds to each frame. */
  int overhead() {
    return DatagramAuth.overhead(config.udpProtection());
  }

  /** The TCP session of {@code l} is gone: no more DATA by UDP either way until it is back. */
  @Override
  public void linkDown(Link l) {
    generation++;
    if (l.udpPeer != null) {
      bySender.remove(l.udpPeer, l);
    }
    l.udpPeer = null;
    l.udp = null;
  }

  /** The socket is one of the router's channels, closed with them. */
  @Override
  public void close() {}

  /** Increases whenever a link comes up or goes down. */
  public long generation() {
    return generation;
  }

  /** The socket, or null when no neighbour uses UDP. */
  Channel channel() {
    return channel;
  }

  /** Sends {@code frame}, one DATA frame, to {@code l} as a datagram (flushed with the batch). */
  private void send(Link l, ByteBuf frame) {
    ByteBuf datagram = l.udp == null ? frame : l.udp.sealer().seal(channel.alloc(), frame);
    channel.write(new DatagramPacket(datagram, l.udpPeer), channel.voidPromise());
    core.metrics().udpSent.inc();
    batches.flushLater(channel);
  }

  /** Datagrams to the socket. */
  private final class Receiver extends SimpleChannelInboundHandler<DatagramPacket> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket p) {
      core.metrics().udpReceived.inc();
      Link from = bySender.get(p.sender());
      if (from == null) {
        unknownSender.inc();
        log.debug("router {}: datagram from {}, no neighbour's", config.router(), p.sender());
        return;
      }
      Session session = from.udp;
      if (session == null) {
        receiver.receive(from, p.content(), "udp");
        return;
      }
      ByteBuf frame = session.opener().open(ctx.alloc(), p.content());
      if (frame == null) {
        DatagramAuth.Refusal why = session.opener().refusal();
        refused.get(why).inc();
        log.debug(
            "router {}: datagram from router {} refused: {}",
            config.router(),
            from.neighbour(),
            why);
        return;
      }
      try {
        receiver.receive(from, frame, "udp");
      } finally {
        if (config.udpProtection() == UdpProtection.ENCRYPT) {
          frame.release(); // decrypted into a buffer of its own
        }
      }
    }
  }

  private volatile long receiveBufferDrops;

  /**
   * Datagrams the kernel dropped because the socket's receive buffer was full, as {@link
   * #readReceiveBufferDrops} last read them (0 before that, or while they cannot be read).
   */
  public long receiveBufferDrops() {
    return receiveBufferDrops;
  }

  /**
   * Reads the datagrams the kernel dropped because the socket's receive buffer was full from the
   * {@code drops} column of {@code /proc/thread-self/net/udp} and {@code udp6} (the calling
   * thread's network namespace, the router's) for this socket's port, for {@link
   * #receiveBufferDrops}. A file read: on any thread but the router's loop.
   */
  public void readReceiveBufferDrops() {
    int port = port();
    long drops = port == 0 ? 0 : ProcNetUdp.drops(port);
    if (drops >= 0) {
      receiveBufferDrops = drops;
    }
  }
}
