package io.bdrp.transport;

import io.netty.handler.codec.DecoderException;

/**
 * A frame that the receiver refuses: carries the {@link ErrorCode} to send back, a reason a person
 * can read, the correlation id of the request when the fault lies in one (0 otherwise), and a
 * 1-based position of the fault inside the offending predicate or message (0 when there is none).
 *
 * <p>Extends Netty's {@link DecoderException} so that a decoder in a pipeline passes it on as it
 * is, unwrapped, to {@link ProtocolErrorHandler}.
 */
public final class ProtocolException extends DecoderException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode code;
  private final String reason;
  private final long correlationId;
  private final long position;
  private final boolean closesSession;

  /** An error that is no answer to a request and has no position. */
  public ProtocolException(ErrorCode code, String reason) {
    this(code, reason, 0, 0);
  }

  /**
   * @param code what to put in the ERROR frame
   * @param reason human-readable text for the ERROR frame and the log
   * @param correlationId the request's correlation id, or 0
   * @param position 1-based byte position of the fault in the predicate or message, or 0
   */
  public ProtocolException(ErrorCode code, String reason, long correlationId, long position) {
    this(code, reason, correlationId, position, code.closesSession());
  }

  /**
   * An error that is no answer to a request and ends the session if {@code closesSession}, whatever
   * its code does otherwise (an overload refusal in the middle of a frame leaves the stream out of
   * step).
   */
  public ProtocolException(ErrorCode code, String reason, boolean closesSession) {
    this(code, reason, 0, 0, closesSession);
  }

  private ProtocolException(
      ErrorCode code, String reason, long correlationId, long position, boolean closesSession) {
    super(code + ": " + reason);
    this.code = code;
    this.reason = reason;
    this.correlationId = correlationId;
    this.position = position;
    this.closesSession = closesSession;
  }

  /** Whether the session ends after this error is reported. */
  public boolean closesSession() {
    return closesSession;
  }

  /** The error code to send. */
  public ErrorCode code() {
    return code;
  }

  /** What is wrong, for a person. */
  public String reason() {
    return reason;
  }

  /** Correlation id of the request at fault, or 0. */
  public long correlationId() {
    return correlationId;
  }

  /** 1-based position of the fault in the predicate or message, or 0. */
  public long position() {
    return position;
  }

  /** The ERROR frame that reports this exception to the peer. */
  public ClientFrame.Error toFrame() {
    return new ClientFrame.Error(correlationId, code.number(), reason, position);
  }
}
