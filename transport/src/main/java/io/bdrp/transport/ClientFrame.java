package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * The frames of a client session, as immutable records: low-rate control and the messages a client
 * publishes and receives. Layouts are in {@code docs/wire-protocol.md}; {@link ClientFrameCodec}
 * reads and writes them. Constructors check every field against the limits of its wire field, so
 * any record that exists can be encoded.
 *
 * <pre>
 *  client                         router
 *    | HELLO ----------------------> |
 *    | &lt;------------- HELLO_OK | ERROR |   (ERROR then close)
 *    | SET_PREDICATE(id) ----------> |
 *    | &lt;------------ OK(id) | ERROR(id) |
 *    | SEND(id or 0) --------------> |   (OK(id) | ERROR(id) when id != 0)
 *    | SEND_RELIABLE(id, p, n) ----> |   (ERROR(id) if refused, else later:)
 *    | &lt;------ CONFIRM(p, n) | UNREACHED(p, n, routers) |
 *    | &lt;------ CONFIRM_RANGE(p, first, last) |   (session version 2)
 *    | &lt;----------------------- DELIVER |
 *    | TRACE(id, timeout) ---------> |
 *    | &lt;----- TRACE_RESULT(id) | ERROR(id) |
 *    | PING(n) / PONG(n) &lt;---------> |
 *    | BYE ------------------------> |   (either side)
 * </pre>
 */
public sealed interface ClientFrame
    permits ClientFrame.Hello,
        ClientFrame.HelloOk,
        ClientFrame.SetPredicate,
        ClientFrame.Ok,
        ClientFrame.Send,
        ClientFrame.Deliver,
        ClientFrame.SendReliable,
        ClientFrame.Confirm,
        ClientFrame.Unreached,
        ClientFrame.ConfirmRange,
        ClientFrame.Trace,
        ClientFrame.TraceResult,
        SessionFrame {
  /** The frame type this record is sent as. */
  FrameType type();

  /**
   * Opens a session. {@code maxVersion} is the highest protocol version the client speaks; {@code
   * clientName} (at most 255 bytes of UTF-8) names the client in logs; {@code authToken} (at most
   * {@link Frames#MAX_TOKEN_BYTES}, empty for none) is checked by the router.
   */
  record Hello(int maxVersion, String clientName, byte[] authToken) implements ClientFrame {
    public Hello {
      Frames.checkU8("maxVersion", maxVersion);
      Frames.checkString("clientName", clientName, Frames.MAX_NAME_BYTES);
      authToken = Frames.checkToken(authToken);
    }

    @Override
    public byte[] authToken() {
      return authToken.clone();
    }

    @Override
    public FrameType type() {
      return FrameType.HELLO;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Hello h
          && maxVersion == h.maxVersion
          && clientName.equals(h.clientName)
          && Arrays.equals(authToken, h.authToken);
    }

    @Override
    public int hashCode() {
      return Objects.hash(maxVersion, clientName, Arrays.hashCode(authToken));
    }

    @Override
    public String toString() {
      return "Hello[maxVersion="
          + maxVersion
          + ", clientName="
          + clientName
          + ", authToken="
          + authToken.length
          + " bytes]";
    }
  }

  /**
   * The router accepted the HELLO: the session speaks {@code version}; the router is number {@code
   * routerNumber} (0..65535) and calls itself {@code serverName} (at most 255 bytes of UTF-8).
   */
  record HelloOk(int version, int routerNumber, String serverName) implements ClientFrame {
    public HelloOk {
      Frames.checkU8("version", version);
      Frames.checkU16("routerNumber", routerNumber);
      Frames.checkString("serverName", serverName, Frames.MAX_NAME_BYTES);
    }

    @Override
    public FrameType type() {
      return FrameType.HELLO_OK;
    }
  }

  /**
   * Replaces the client's predicate ({@link Predicate#NONE} unsubscribes). Answered by {@link Ok}
   * or {@link Error} with the same {@code correlationId}.
   */
  record SetPredicate(long correlationId, Predicate predicate) implements ClientFrame {
    public SetPredicate {
      Objects.requireNonNull(predicate, "predicate");
    }

    @Override
    public FrameType type() {
      return FrameType.SET_PREDICATE;
    }
  }

  /** The request with this correlation id succeeded. */
  record Ok(long correlationId) implements ClientFrame {
    @Override
    public FrameType type() {
      return FrameType.OK;
    }
  }

  /**
   * An error. {@code correlationId} is that of the request it answers, 0 when it answers none;
   * {@code code} is an {@link ErrorCode} number (kept as a number so that codes added later pass
   * through); {@code message} is for people and is cut to {@link Frames#MAX_ERROR_TEXT_BYTES} bytes
   * of UTF-8; {@code position} is the 1-based position of the fault in the request's predicate or
   * message (a byte position for binary content), 0 when there is none.
   */
  record Error(long correlationId, int code, String message, long position)
      implements SessionFrame {
    public Error {
      Frames.checkU16("code", code);
      if (code == 0) {
        throw new IllegalArgumentException("error code 0 is reserved");
      }
      message =
          Frames.truncateUtf8(
              Objects.requireNonNull(message, "message"), Frames.MAX_ERROR_TEXT_BYTES);
      if (position < 0 || position > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException("position " + position + " outside 0..2^32-1");
      }
    }

    /** An error with a known code. */
    public Error(long correlationId, ErrorCode code, String message, long position) {
      this(correlationId, code.number(), message, position);
    }

    /** The code, if this implementation knows it. */
    public Optional<ErrorCode> knownCode() {
      return Optional.ofNullable(ErrorCode.fromNumber(code));
    }

    @Override
    public FrameType type() {
      return FrameType.ERROR;
    }
  }

  /**
   * Publishes {@code message}. With {@code correlationId} 0 the send is unacknowledged (the router
   * answers only if the message is refused, with an ERROR whose correlation id is 0); otherwise the
   * router answers {@link Ok} once it has routed the message, or {@link Error}.
   */
  record Send(long correlationId, Message message) implements ClientFrame {
    public Send {
      Objects.requireNonNull(message, "message");
    }

    @Override
    public FrameType type() {
      return FrameType.SEND;
    }
  }

  /** A message that matched the client's predicate. */
  record Deliver(Message message) implements ClientFrame {
    public Deliver {
      Objects.requireNonNull(message, "message");
    }

    @Override
    public FrameType type() {
      return FrameType.DELIVER;
    }
  }

  /**
   * Publishes {@code message} reliably, as message number {@code publisherSeq} (1, 2, 3, ...) of
   * the publisher {@code publisher} (a non-zero 64-bit id). The router answers {@link Confirm} once
   * every router of the message's destination set has it, {@link Unreached} if it gave up on some,
   * or, at once, {@link Error} with {@code correlationId} if it refused the message ({@link
   * ErrorCode#OVERLOADED}: its retention is full, send it again later). Destination routers drop a
   * publisher's message numbered at or below the last one they delivered from it, so a client may
   * send unconfirmed messages again, in the same order, through the same or another router.
   */
  record SendReliable(long correlationId, long publisher, long publisherSeq, Message message)
      implements ClientFrame {
    public SendReliable {
      checkPublisher(publisher, publisherSeq);
      Objects.requireNonNull(message, "message");
    }

    @Override
    public FrameType type() {
      return FrameType.SEND_RELIABLE;
    }
  }

  /**
   * Every router of the destination set of message {@code publisherSeq} of {@code publisher} has
   * it: the publisher need not keep it any longer.
   */
  record Confirm(long publisher, long publisherSeq) implements ClientFrame {
    public Confirm {
      checkPublisher(publisher, publisherSeq);
    }

    @Override
    public FrameType type() {
      return FrameType.CONFIRM;
    }
  }

  /**
   * Every router of the destination set of each of messages {@code firstSeq} to {@code lastSeq}
   * (both included, {@code 1 <= firstSeq <= lastSeq}) of {@code publisher} has it: the {@link
   * Confirm} of each of them in one frame. Sent only on sessions of version 2 ({@link
   * Frames#SESSION_VERSION}), where the router gathers the confirmations of a session made in one
   * batch of its work into runs of consecutive numbers.
   */
  record ConfirmRange(long publisher, long firstSeq, long lastSeq) implements ClientFrame {
    public ConfirmRange {
      checkPublisher(publisher, firstSeq);
      if (lastSeq < firstSeq) {
        throw new IllegalArgumentException("lastSeq " + lastSeq + " below firstSeq " + firstSeq);
      }
    }

    @Override
    public FrameType type() {
      return FrameType.CONFIRM_RANGE;
    }
  }

  /**
   * The router gave up on message {@code publisherSeq} of {@code publisher} (its retention ended,
   * e.g. a partition outlasted it): the routers numbered {@code routers} (each 0..65535, at most
   * 65,535 of them) never acknowledged it. The others have it.
   */
  record Unreached(long publisher, long publisherSeq, int[] routers) implements ClientFrame {
    public Unreached {
      checkPublisher(publisher, publisherSeq);
      routers = Objects.requireNonNull(routers, "routers").clone();
      Frames.checkU16("router count", routers.length);
      for (int router : routers) {
        Frames.checkU16("router", router);
      }
    }

    @Override
    public int[] routers() {
      return routers.clone();
    }

    @Override
    public FrameType type() {
      return FrameType.UNREACHED;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Unreached u
          && publisher == u.publisher
          && publisherSeq == u.publisherSeq
          && Arrays.equals(routers, u.routers);
    }

    @Override
    public int hashCode() {
      return Objects.hash(publisher, publisherSeq, Arrays.hashCode(routers));
    }

    @Override
    public String toString() {
      return "Unreached[publisher="
          + publisher
          + ", publisherSeq="
          + publisherSeq
          + ", routers="
          + Arrays.toString(routers)
          + "]";
    }
  }

  /**
   * Traces {@code message}: the router routes a trace-only copy of it exactly as it would route the
   * message, delivers it to no host, and answers {@link TraceResult} with the report of every
   * router the copy reached, once all are in or after {@code timeoutMs} (1..{@link
   * #MAX_TRACE_TIMEOUT_MS}); or {@link Error} with the same {@code correlationId} (not 0) if it
   * refuses the trace (NOT_AUTHORIZED: outside the user's publish permission; OVERLOADED: too many
   * traces).
   */
  record Trace(long correlationId, long timeoutMs, Message message) implements ClientFrame {
    public Trace {
      if (correlationId == 0) {
        throw new IllegalArgumentException("a TRACE needs a correlation id other than 0");
      }
      if (timeoutMs < 1 || timeoutMs > MAX_TRACE_TIMEOUT_MS) {
        throw new IllegalArgumentException(
            "timeoutMs " + timeoutMs + " outside 1.." + MAX_TRACE_TIMEOUT_MS);
      }
      Objects.requireNonNull(message, "message");
    }

    @Override
    public FrameType type() {
      return FrameType.TRACE;
    }
  }

  /** The longest a router waits for the reports of a trace: 60 s. */
  long MAX_TRACE_TIMEOUT_MS = 60_000;

  /**
   * The answer to {@link Trace} {@code correlationId}: the trace {@code traceId} entered the
   * network at router {@code ingress}, whose destination set D was {@code destinations}; {@code
   * reports} are those of the routers the copies reached (the ingress's first), and {@code missing}
   * the routers that were sent a copy and did not report before the timeout (one entry per missing
   * report). Each array holds router numbers 0..65535, at most 65,535 of them.
   */
  record TraceResult(
      long correlationId,
      long traceId,
      int ingress,
      int[] destinations,
      int[] missing,
      java.util.List<TraceReport> reports)
      implements ClientFrame {
    public TraceResult {
      Frames.checkU16("ingress", ingress);
      destinations = routers("destinations", destinations);
      missing = routers("missing", missing);
      reports = java.util.List.copyOf(reports);
      Frames.checkU16("reports", reports.size());
    }

    private static int[] routers(String what, int[] routers) {
      int[] r = Objects.requireNonNull(routers, what).clone();
      Frames.checkU16(what + " count", r.length);
      for (int x : r) {
        Frames.checkU16(what, x);
      }
      return r;
    }

    @Override
    public int[] destinations() {
      return destinations.clone();
    }

    @Override
    public int[] missing() {
      return missing.clone();
    }

    /** Whether every router sent a copy reported. */
    public boolean complete() {
      return missing.length == 0;
    }

    /**
     * The false positives of the Bloom encoding: routers of D that reported matching the message
     * against their hosts and found none whose exact predicate it satisfies. Ascending.
     */
    public int[] falsePositives() {
      java.util.TreeSet<Integer> matched = new java.util.TreeSet<>();
      java.util.TreeSet<Integer> checked = new java.util.TreeSet<>();
      for (TraceReport r : reports) {
        if (r.local()) {
          checked.add(r.router());
          if (r.matching() > 0) {
            matched.add(r.router());
          }
        }
      }
      return Arrays.stream(destinations)
          .filter(d -> checked.contains(d) && !matched.contains(d))
          .toArray();
    }

    /** The total of matching hosts over every report. */
    public long matchingHosts() {
      long n = 0;
      for (TraceReport r : reports) {
        n += r.matching();
      }
      return n;
    }

    @Override
    public FrameType type() {
      return FrameType.TRACE_RESULT;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof TraceResult t
          && correlationId == t.correlationId
          && traceId == t.traceId
          && ingress == t.ingress
          && Arrays.equals(destinations, t.destinations)
          && Arrays.equals(missing, t.missing)
          && reports.equals(t.reports);
    }

    @Override
    public int hashCode() {
      return Objects.hash(
          correlationId,
          traceId,
          ingress,
          Arrays.hashCode(destinations),
          Arrays.hashCode(missing),
          reports);
    }

    @Override
    public String toString() {
      return "TraceResult[correlationId="
          + correlationId
          + ", traceId="
          + traceId
          + ", ingress="
          + ingress
          + ", destinations="
          + Arrays.toString(destinations)
          + ", missing="
          + Arrays.toString(missing)
          + ", reports="
          + reports
          + "]";
    }
  }

  /** Fails unless {@code publisher} is non-zero and {@code publisherSeq} at least 1. */
  private static void checkPublisher(long publisher, long publisherSeq) {
    if (publisher == 0) {
      throw new IllegalArgumentException("publisher 0 is reserved");
    }
    if (publisherSeq < 1) {
      throw new IllegalArgumentException("publisherSeq " + publisherSeq + " below 1");
    }
  }

  /** Liveness probe; the peer answers {@link Pong} with the same nonce. */
  record Ping(long nonce) implements SessionFrame {
    @Override
    public FrameType type() {
      return FrameType.PING;
    }
  }

  /** Answer to a {@link Ping}. */
  record Pong(long nonce) implements SessionFrame {
    @Override
    public FrameType type() {
      return FrameType.PONG;
    }
  }

  /** Orderly close: the sender sends nothing more and closes once it is written. */
  record Bye() implements SessionFrame {
    @Override
    public FrameType type() {
      return FrameType.BYE;
    }
  }
}
