package io.bdrp.router.config;

/**
 * Limits that bound what a router holds in memory ({@link RouterConfig#limits()}).
 *
 * @param maxFrameBytes largest frame accepted from a client or router
 * @param linkHighWaterBytes a link's output buffer above which it is not writable: data copies to
 *     it are dropped and counted until it drains below the low water mark
 * @param linkLowWaterBytes see linkHighWaterBytes
 * @param hostHighWaterBytes as linkHighWaterBytes, for a client session's deliveries
 * @param hostLowWaterBytes see hostHighWaterBytes
 * @param maxClients largest number of client sessions at once
 * @param maxDatagramBytes largest DATA frame sent as one UDP datagram (the default fits a 1500-byte
 *     MTU after the IPv4 and UDP headers); larger frames go over TCP
 * @param udpReceiveBufferBytes receive buffer asked for the UDP socket (the kernel caps it at
 *     net.core.rmem_max unless the router runs as root); datagrams that overflow it are lost and
 *     counted
 * @param udpSendBufferBytes send buffer of the UDP socket: it bounds the DATA this router keeps in
 *     the kernel's link queues; when it is full the socket pushes back, and copies wait in the
 *     router and are dropped and counted above {@code linkHighWaterBytes}, as on TCP, rather than
 *     lost unseen in a full link queue
 * @param helloTimeoutMs a connection, on either port, that has not completed its HELLO this long
 *     after it opened is closed ({@code TIMEOUT}); until then it may send only small frames ({@link
 *     #HANDSHAKE_FRAME_BYTES})
 * @param maxHandshakes connections accepted on one port that have not completed their HELLO; more
 *     are refused ({@code OVERLOADED}) until some complete or time out
 * @param slowConsumerMs a client session whose output stays above its high water mark this long is
 *     disconnected as a slow consumer ({@code SLOW_CONSUMER}); meanwhile its requests are not read,
 *     so its replies cannot pile up
 * @param inboundBufferBytes what the partial frames of all the connections of one port may hold
 *     together (each holds at most one frame); a frame that would exceed it ends its session
 *     ({@code OVERLOADED})
 * @param linkControlPercent the share, in percent of {@code linkHighWaterBytes}, that control
 *     frames may hold of a link's output buffer; more wait in the router, so that control cannot
 *     crowd out DATA on a full link, nor DATA control
 * @param linkControlFramesPerSecond control frames (and PINGs) a router link's neighbour may have
 *     taken per second, on average, in bursts of a tenth of that at most; more wait in the router,
 *     in order, and the link is not read meanwhile, so that one neighbour cannot keep the router's
 *     event loop busy with small frames and nothing it sends is lost
 * @param ringBytes capacity of the shared-memory ring this router makes for each neighbour whose
 *     link is {@code transport: shm} (a power of two); a full ring drops DATA copies and counts
 *     them, as a link's full output buffer does
 * @param ringWatermarkBytes bytes the reader of a ring consumes before it tells the writer
 *     (publishes its head); it also does so before it sleeps and when the writer waits
 * @param hosts what one client, and the clients of one user, may ask of the router
 */
public record RouterLimits(
    int maxFrameBytes,
    int linkHighWaterBytes,
    int linkLowWaterBytes,
    int hostHighWaterBytes,
    int hostLowWaterBytes,
    int maxClients,
    int maxDatagramBytes,
    int udpReceiveBufferBytes,
    int udpSendBufferBytes,
    int helloTimeoutMs,
    int maxHandshakes,
    int slowConsumerMs,
    int inboundBufferBytes,
    int linkControlPercent,
    int linkControlFramesPerSecond,
    int ringBytes,
    int ringWatermarkBytes,
    HostLimits hosts) {
  /** The defaults. */
  public static final RouterLimits DEFAULT =
      new RouterLimits(
          1 << 20,
          8 << 20,
          4 << 20,
          4 << 20,
          2 << 20,
          10_000,
          1472,
          16 << 20,
          512 << 10,
          5_000,
          256,
          10_000,
          64 << 20,
          25,
          20_000,
          8 << 20,
          1 << 20,
          HostLimits.DEFAULT);

  /** These limits with {@code hosts} in place of theirs. */
  public RouterLimits withHosts(HostLimits hosts) {
    return new RouterLimits(
        maxFrameBytes,
        linkHighWaterBytes,
        linkLowWaterBytes,
        hostHighWaterBytes,
        hostLowWaterBytes,
        maxClients,
        maxDatagramBytes,
        udpReceiveBufferBytes,
        udpSendBufferBytes,
        helloTimeoutMs,
        maxHandshakes,
        slowConsumerMs,
        inboundBufferBytes,
        linkControlPercent,
        linkControlFramesPerSecond,
        ringBytes,
        ringWatermarkBytes,
        hosts);
  }

  public RouterLimits {
    java.util.Objects.requireNonNull(hosts, "hosts");
  }

  /**
   * The largest frame a connection may send before its HELLO is accepted: room for a HELLO with the
   * longest name and token.
   */
  public static final int HANDSHAKE_FRAME_BYTES = 4096;
}
