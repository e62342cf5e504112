package io.bdrp.transport;

/**
 * The frame types and their wire numbers (the {@code type} byte of every frame), for both kinds of
 * link: client sessions use 0x01..0x10, router links 0x20..0x2D plus the session frames ERROR,
 * PING, PONG and BYE, which are valid on every link. Numbers are stable; unlisted ones are unknown
 * and end the session with {@link ErrorCode#UNKNOWN_TYPE}.
 */
public enum FrameType {
  /** Client to router: first frame of a client session. */
  HELLO(0x01),
  /** Router to client: the session is open. */
  HELLO_OK(0x02),
  /** Client to router: replace the client's predicate. */
  SET_PREDICATE(0x03),
  /** Router to client: a request with this correlation id succeeded. */
  OK(0x04),
  /** Either way, any link: an error, possibly the answer to a request. */
  ERROR(0x05),
  /** Client to router: publish a message. */
  SEND(0x06),
  /** Router to client: a message that matched the client's predicate. */
  DELIVER(0x07),
  /** Either way, any link: liveness probe. */
  PING(0x08),
  /** Either way, any link: answer to a PING, same nonce. */
  PONG(0x09),
  /** Either way, any link: orderly close; nothing follows. */
  BYE(0x0A),
  /** Router to router: first frame of a link. */
  ROUTER_HELLO(0x20),
  /** Router to router: distance-vector hello ({@code ControlMessage.Hello}). */
  DV_HELLO(0x21),
  /** Router to router: distance-vector routes ({@code ControlMessage.RouteUpdate}). */
  ROUTE_UPDATE(0x22),
  /** Router to router: {@code ControlMessage.SeqnoRequest}. */
  SEQNO_REQUEST(0x23),
  /** Router to router: flooded encoded predicate ({@code ControlMessage.PredicateAd}). */
  PREDICATE_AD(0x24),
  /** Router to router: {@code ControlMessage.PredicateRequest}. */
  PREDICATE_REQUEST(0x25),
  /** Router to router: a message with its destination set; see {@link DataHeader}. */
  DATA(0x26),
  /** Router to router: several advertisements ({@code ControlMessage.PredicateBatch}). */
  PREDICATE_BATCH(0x27),
  /** Router to router: a change of an encoded predicate ({@code ControlMessage.PredicateDelta}). */
  PREDICATE_DELTA(0x28),
  /** Router to router: a router's certificate chain ({@code ControlMessage.RouterCert}). */
  ROUTER_CERT(0x29),
  /** Router to router: a copy of a reliable message; see {@code ReliableFrames}. */
  RELIABLE_DATA(0x2A),
  /** Router to router: a reliable acknowledgement, routed towards its ingress. */
  RELIABLE_ACK(0x2B),
  /**
   * Router to router: a trace copy of a message, DATA's layout under its own type; see {@link
   * TraceFrames}.
   */
  TRACE_DATA(0x2C),
  /** Router to router: what one router did with a trace copy, routed towards its ingress. */
  TRACE_REPORT(0x2D),
  /** Router to router: a periodic full update as a digest ({@code ControlMessage.RouteDigest}). */
  ROUTE_DIGEST(0x2E),
  /** Router to router: asks for the full route table ({@code ControlMessage.TableRequest}). */
  TABLE_REQUEST(0x2F),
  /** Client to router: publish a message reliably, as a numbered message of a publisher. */
  SEND_RELIABLE(0x0B),
  /** Router to client: every router of a reliable message's D has it. */
  CONFIRM(0x0C),
  /** Router to client: a reliable message's retention ended before some routers of D had it. */
  UNREACHED(0x0D),
  /**
   * Router to client, on sessions of version 2: every router of D has each of a run of a
   * publisher's consecutive reliable messages.
   */
  CONFIRM_RANGE(0x0E),
  /**
   * Client to router: trace a message (route a trace-only copy, deliver it to no host, collect what
   * each router did with it); answered by {@link #TRACE_RESULT} or ERROR.
   */
  TRACE(0x0F),
  /** Router to client: the reports of a trace. */
  TRACE_RESULT(0x10);

  private static final FrameType[] BY_NUMBER = new FrameType[256];

  static {
    for (FrameType t : values()) {
      BY_NUMBER[t.number] = t;
    }
  }

  private final int number;

  FrameType(int number) {
    this.number = number;
  }

  /** The value of the type byte. */
  public int number() {
    return number;
  }

  /** The type with this number (0..255), or {@code null}. */
  public static FrameType fromNumber(int number) {
    return number >= 0 && number < 256 ? BY_NUMBER[number] : null;
  }
}
