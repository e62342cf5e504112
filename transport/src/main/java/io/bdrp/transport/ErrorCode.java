package io.bdrp.transport;

/**
 * The error codes of ERROR frames, with the stable numbers they have on the wire ({@code u16}).
 * Numbers are never reused; a receiver that meets a number it does not know keeps the number (see
 * {@link ClientFrame.Error#knownCode()}) and treats it like {@link #INTERNAL}.
 */
public enum ErrorCode {
  /** A frame body that does not parse: truncated field, count beyond the bytes, bad UTF-8, ... */
  MALFORMED_FRAME(1, true),
  /** The length field announces more than the receiver's maximum frame size. */
  FRAME_TOO_LARGE(2, true),
  /** The version byte is not one the receiver speaks. */
  UNSUPPORTED_VERSION(3, true),
  /** The type byte names no frame type. */
  UNKNOWN_TYPE(4, true),
  /** SET_PREDICATE carried a predicate that does not decode or breaks a limit. */
  BAD_PREDICATE(5, false),
  /** SEND carried a message that does not decode or breaks a limit. */
  BAD_MESSAGE(6, false),
  /** The credentials in a HELLO were refused. */
  NOT_AUTHORIZED(7, true),
  /** A well-formed frame arrived out of order or in the wrong direction. */
  PROTOCOL_VIOLATION(8, true),
  /** The receiver sheds load: a request was refused, the session may retry later. */
  OVERLOADED(9, false),
  /** The receiver failed for a reason of its own. */
  INTERNAL(10, true),
  /** A neighbour's ROUTER_HELLO does not fit: other Bloom parameters, or a clashing number. */
  INCOMPATIBLE_PEER(11, true),
  /**
   * The session's output stayed above its high water mark for longer than the receiver allows: the
   * peer does not read what it is sent, and is disconnected.
   */
  SLOW_CONSUMER(12, true),
  /** The peer did not complete a step in time: no HELLO within the handshake timeout. */
  TIMEOUT(13, true),
  /**
   * A ROUTER_HELLO claims the number of a router that already has a live session with the receiver
   * (a second process with the same number); the live session stays.
   */
  DUPLICATE_ROUTER(14, true);

  private static final ErrorCode[] BY_NUMBER = new ErrorCode[15];

  static {
    for (ErrorCode c : values()) {
      BY_NUMBER[c.number] = c;
    }
  }

  private final int number;
  private final boolean closesSession;

  ErrorCode(int number, boolean closesSession) {
    this.number = number;
    this.closesSession = closesSession;
  }

  /** The number carried in the ERROR frame's {@code code} field. */
  public int number() {
    return number;
  }

  /**
   * Whether a session that detects this error closes after sending the ERROR frame. The errors that
   * do not close are answers about the content of one well-delimited request (a bad predicate or
   * message, an overload refusal); the stream itself is still in sync.
   */
  public boolean closesSession() {
    return closesSession;
  }

  /** The code with this wire number, or {@code null} if there is none. */
  public static ErrorCode fromNumber(int number) {
    return number > 0 && number < BY_NUMBER.length ? BY_NUMBER[number] : null;
  }
}
