package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.codec.PredicateCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Reads and writes {@link ClientFrame}s as whole frames (length, version, type, body) over Netty
 * {@link ByteBuf}s, without a pipeline; {@link ClientFrameEncoder} and {@link ClientFrameDecoder}
 * put it in one. Predicates and messages are written and read by the encoding module's {@link
 * PredicateCodec} and {@link MessageCodec}. The layouts are in {@code docs/wire-protocol.md}.
 *
 * <p>Stateless and thread-safe. No method releases or retains the buffers it is given.
 */
public final class ClientFrameCodec {
  private ClientFrameCodec() {}

  /** Exact number of bytes {@link #encode(ClientFrame, ByteBuf)} writes, prefix included. */
  public static int encodedLength(ClientFrame f) {
    return Frames.PREFIX_BYTES
        + switch (f) {
          case ClientFrame.Hello h ->
              1 + 1 + Frames.utf8Length(h.clientName()) + 2 + h.authToken().length;
          case ClientFrame.HelloOk h -> 1 + 2 + 1 + Frames.utf8Length(h.serverName());
          case ClientFrame.SetPredicate s -> 8 + PredicateCodec.encodedLength(s.predicate());
          case ClientFrame.Ok o -> 8;
          case ClientFrame.Error e -> 8 + 2 + 2 + Frames.utf8Length(e.message()) + 4;
          case ClientFrame.Send s -> 8 + MessageCodec.encodedLength(s.message());
          case ClientFrame.Deliver d -> MessageCodec.encodedLength(d.message());
          case ClientFrame.SendReliable s -> 8 + 8 + 8 + MessageCodec.encodedLength(s.message());
          case ClientFrame.Confirm c -> 8 + 8;
          case ClientFrame.Unreached u -> 8 + 8 + 2 + 2 * u.routers().length;
          case ClientFrame.ConfirmRange c -> 8 + 8 + 8;
          case ClientFrame.Trace t -> 8 + 4 + MessageCodec.encodedLength(t.message());
          case ClientFrame.TraceResult t -> {
            int n = 8 + 8 + 2 + 2 + 2 * t.destinations().length + 2 + 2 * t.missing().length + 2;
            for (TraceReport r : t.reports()) {
              n += r.encodedLength();
            }
            yield n;
          }
          case ClientFrame.Ping p -> 8;
          case ClientFrame.Pong p -> 8;
          case ClientFrame.Bye b -> 0;
        };
  }

  /** The frame in a new buffer from {@code alloc}, which the caller then owns. */
  public static ByteBuf encode(ByteBufAllocator alloc, ClientFrame f) {
    int n = encodedLength(f);
    ByteBuf out = alloc.buffer(n);
    try {
      encode(f, out, n);
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  /** Writes the whole frame at the writer index of {@code out}. */
  public static void encode(ClientFrame f, ByteBuf out) {
    encode(f, out, -1);
  }

  /**
   * As {@link #encode(ClientFrame, ByteBuf)} for a caller that has measured the frame already to
   * size its buffer: {@code length} is {@link #encodedLength(ClientFrame) encodedLength(f)}, so the
   * message of a SEND is not measured again (every name and string of it read once more).
   *
   * @throws IllegalArgumentException if the frame did not take {@code length} bytes; the writer
   *     index is then where it was
   */
  public static void encodeMeasured(ClientFrame f, ByteBuf out, int length) {
    if (length < Frames.PREFIX_BYTES) {
      throw new IllegalArgumentException("frame length " + length + " is below its prefix");
    }
    int start = out.writerIndex();
    try {
      encode(f, out, length);
    } catch (RuntimeException e) {
      out.writerIndex(start);
      throw e;
    }
  }

  /** Writes the whole frame, of {@code length} bytes if that is not negative. */
  private static void encode(ClientFrame f, ByteBuf out, int length) {
    int start = Frames.beginFrame(out, f.type());
    switch (f) {
      case ClientFrame.Hello h -> {
        out.writeByte(h.maxVersion());
        Frames.writeShortString(out, h.clientName());
        byte[] token = h.authToken();
        out.writeShort(token.length);
        out.writeBytes(token);
      }
      case ClientFrame.HelloOk h -> {
        out.writeByte(h.version());
        out.writeShort(h.routerNumber());
        Frames.writeShortString(out, h.serverName());
      }
      case ClientFrame.SetPredicate s -> {
        out.writeLong(s.correlationId());
        Frames.writeVia(
            out,
            s.predicate(),
            PredicateCodec.encodedLength(s.predicate()),
            PredicateCodec::encode);
      }
      case ClientFrame.Ok o -> out.writeLong(o.correlationId());
      case ClientFrame.Send s -> {
        out.writeLong(s.correlationId());
        writeMessage(out, s.message(), length, 8);
      }
      case ClientFrame.Deliver d -> writeMessage(out, d.message(), length, 0);
      case ClientFrame.SendReliable s -> {
        out.writeLong(s.correlationId());
        out.writeLong(s.publisher());
        out.writeLong(s.publisherSeq());
        writeMessage(out, s.message(), length, 8 + 8 + 8);
      }
      case ClientFrame.Confirm c -> {
        out.writeLong(c.publisher());
        out.writeLong(c.publisherSeq());
      }
      case ClientFrame.ConfirmRange c -> {
        out.writeLong(c.publisher());
        out.writeLong(c.firstSeq());
        out.writeLong(c.lastSeq());
      }
      case ClientFrame.Unreached u -> {
        out.writeLong(u.publisher());
        out.writeLong(u.publisherSeq());
        int[] routers = u.routers();
        out.writeShort(routers.length);
        for (int router : routers) {
          out.writeShort(router);
        }
      }
      case ClientFrame.Trace t -> {
        out.writeLong(t.correlationId());
        out.writeInt((int) t.timeoutMs());
        writeMessage(out, t.message(), length, 8 + 4);
      }
      case ClientFrame.TraceResult t -> {
        out.writeLong(t.correlationId());
        out.writeLong(t.traceId());
        out.writeShort(t.ingress());
        writeRouters(out, t.destinations());
        writeRouters(out, t.missing());
        out.writeShort(t.reports().size());
        for (TraceReport r : t.reports()) {
          r.encode(out);
        }
      }
      case SessionFrame s -> encodeSessionBody(s, out);
    }
    if (length >= 0 && out.writerIndex() - start != length) {
      int took = out.writerIndex() - start;
      throw new IllegalArgumentException(
          f.type() + " frame of " + length + " bytes takes " + took + " bytes");
    }
    Frames.endFrame(out, start);
  }

  /**
   * Writes a frame's message, the rest of its body: of {@code frameLength} bytes less the prefix
   * and the {@code header} bytes of the body before it, or measured here if {@code frameLength} is
   * negative. Written in place through the buffer's own NIO view (one per buffer, not one per
   * message) when the buffer is one region, as every buffer Netty allocates is.
   */
  private static void writeMessage(ByteBuf out, Message m, int frameLength, int header) {
    int length =
        frameLength < 0
            ? MessageCodec.encodedLength(m)
            : frameLength - Frames.PREFIX_BYTES - header;
    if (length < 0) {
      throw new IllegalArgumentException("frame length " + frameLength + " leaves no message");
    }
    out.ensureWritable(length);
    int at = out.writerIndex();
    if (out.nioBufferCount() == 1) {
      MessageCodec.encode(m, out.internalNioBuffer(at, length), length);
    } else {
      java.nio.ByteBuffer tmp = java.nio.ByteBuffer.allocate(length);
      MessageCodec.encode(m, tmp, length);
      out.setBytes(at, tmp.flip());
    }
    out.writerIndex(at + length);
  }

  private static void writeRouters(ByteBuf out, int[] routers) {
    out.writeShort(routers.length);
    for (int r : routers) {
      out.writeShort(r);
    }
  }

  private static int[] readRouters(FrameReader r, String what) {
    int at = r.offset();
    int count = r.u16();
    r.requireItems(at, count, what, 2, 0);
    int[] routers = new int[count];
    for (int i = 0; i < count; i++) {
      routers[i] = r.u16();
    }
    return routers;
  }

  /** Writes the body (no prefix) of a frame that is valid on every link. */
  public static void encodeSessionBody(SessionFrame f, ByteBuf out) {
    switch (f) {
      case ClientFrame.Error e -> {
        out.writeLong(e.correlationId());
        out.writeShort(e.code());
        Frames.writeString(out, e.message());
        out.writeInt((int) e.position());
      }
      case ClientFrame.Ping p -> out.writeLong(p.nonce());
      case ClientFrame.Pong p -> out.writeLong(p.nonce());
      case ClientFrame.Bye b -> {}
    }
  }

  /**
   * Reads one whole frame that fills {@code frame} from its reader index to its writer index, with
   * the default maximum frame size.
   *
   * @throws ProtocolException if it is not a valid client-session frame
   */
  public static ClientFrame decode(ByteBuf frame) {
    return decode(frame, Frames.DEFAULT_MAX_FRAME_BYTES);
  }

  /** As {@link #decode(ByteBuf)} with a maximum value of the length field. */
  public static ClientFrame decode(ByteBuf frame, int maxFrameBytes) {
    int number = Frames.openFrame(frame, maxFrameBytes);
    return decodeBody(clientType(number), frame);
  }

  /**
   * The client-session frame type with this number.
   *
   * @throws ProtocolException {@link ErrorCode#UNKNOWN_TYPE} for a number that names no frame,
   *     {@link ErrorCode#PROTOCOL_VIOLATION} for a frame of router links
   */
  public static FrameType clientType(int number) {
    FrameType type = FrameType.fromNumber(number);
    if (type == null) {
      throw new ProtocolException(ErrorCode.UNKNOWN_TYPE, "unknown frame type " + number);
    }
    if (type.number() >= FrameType.ROUTER_HELLO.number()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_VIOLATION, type + " is a router-link frame, not a client frame");
    }
    return type;
  }

  /** Reads the body of a client-session frame of a known type; it must fill {@code body}. */
  public static ClientFrame decodeBody(FrameType type, ByteBuf body) {
    FrameReader r = new FrameReader(body, type);
    ClientFrame f =
        switch (type) {
          case HELLO -> {
            int maxVersion = r.u8();
            String name = r.shortString("client name");
            byte[] token = r.blob("auth token", Frames.MAX_TOKEN_BYTES);
            yield new ClientFrame.Hello(maxVersion, name, token);
          }
          case HELLO_OK -> {
            int version = r.u8();
            int router = r.u16();
            yield new ClientFrame.HelloOk(version, router, r.shortString("server name"));
          }
          case SET_PREDICATE -> {
            long id = r.i64();
            yield new ClientFrame.SetPredicate(
                id, r.rest(PredicateCodec::decode, ErrorCode.BAD_PREDICATE, "predicate", id));
          }
          case OK -> new ClientFrame.Ok(r.i64());
          case SEND -> {
            long id = r.i64();
            yield new ClientFrame.Send(
                id, r.rest(MessageCodec::decode, ErrorCode.BAD_MESSAGE, "message", id));
          }
          case DELIVER ->
              new ClientFrame.Deliver(
                  r.rest(MessageCodec::decode, ErrorCode.BAD_MESSAGE, "message", 0));
          case SEND_RELIABLE -> {
            long id = r.i64();
            long publisher = publisher(r);
            long seq = publisherSeq(r);
            yield new ClientFrame.SendReliable(
                id,
                publisher,
                seq,
                r.rest(MessageCodec::decode, ErrorCode.BAD_MESSAGE, "message", id));
          }
          case CONFIRM -> new ClientFrame.Confirm(publisher(r), publisherSeq(r));
          case CONFIRM_RANGE -> {
            long publisher = publisher(r);
            long first = publisherSeq(r);
            int at = r.offset();
            long last = r.i64();
            if (last < first) {
              throw r.malformed(at, "lastSeq " + last + " below firstSeq " + first);
            }
            yield new ClientFrame.ConfirmRange(publisher, first, last);
          }
          case UNREACHED -> {
            long publisher = publisher(r);
            long seq = publisherSeq(r);
            int at = r.offset();
            int count = r.u16();
            r.requireItems(at, count, "routers", 2, 0);
            int[] routers = new int[count];
            for (int i = 0; i < count; i++) {
              routers[i] = r.u16();
            }
            yield new ClientFrame.Unreached(publisher, seq, routers);
          }
          case TRACE -> {
            long id = r.i64();
            int at = r.offset();
            long timeout = r.u32();
            if (id == 0 || timeout < 1 || timeout > ClientFrame.MAX_TRACE_TIMEOUT_MS) {
              throw r.malformed(
                  at,
                  "correlation id "
                      + id
                      + " and timeout "
                      + timeout
                      + " ms: need an id other than 0 and 1.."
                      + ClientFrame.MAX_TRACE_TIMEOUT_MS
                      + " ms");
            }
            yield new ClientFrame.Trace(
                id, timeout, r.rest(MessageCodec::decode, ErrorCode.BAD_MESSAGE, "message", id));
          }
          case TRACE_RESULT -> {
            long id = r.i64();
            long traceId = r.i64();
            int ingress = r.u16();
            int[] d = readRouters(r, "destinations");
            int[] missing = readRouters(r, "missing routers");
            int at = r.offset();
            int count = r.u16();
            r.requireItems(at, count, "reports", 14, 0);
            java.util.List<TraceReport> reports = new java.util.ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              at = r.offset();
              try {
                reports.add(TraceReport.decode(r));
              } catch (IllegalArgumentException e) {
                throw r.malformed(at, e.getMessage());
              }
            }
            yield new ClientFrame.TraceResult(id, traceId, ingress, d, missing, reports);
          }
          default -> decodeSession(type, r);
        };
    r.requireEnd();
    return f;
  }

  /** A publisher id: an i64 other than 0. */
  private static long publisher(FrameReader r) {
    int at = r.offset();
    long publisher = r.i64();
    if (publisher == 0) {
      throw r.malformed(at, "publisher 0");
    }
    return publisher;
  }

  /** A publisher's message number: an i64 of at least 1. */
  private static long publisherSeq(FrameReader r) {
    int at = r.offset();
    long seq = r.i64();
    if (seq < 1) {
      throw r.malformed(at, "publisherSeq " + seq + " below 1");
    }
    return seq;
  }

  /**
   * Reads the body of ERROR, PING, PONG or BYE; shared with the router-link codec. Does not check
   * that the body ends there (the caller does, with {@link FrameReader#requireEnd()}).
   *
   * @throws ProtocolException {@link ErrorCode#PROTOCOL_VIOLATION} for any other type
   */
  public static SessionFrame decodeSession(FrameType type, FrameReader r) {
    return switch (type) {
      case ERROR -> {
        long id = r.i64();
        int codeAt = r.offset();
        int code = r.u16();
        if (code == 0) {
          throw r.malformed(codeAt, "error code 0");
        }
        String message = r.string("error message", Frames.MAX_ERROR_TEXT_BYTES);
        yield new ClientFrame.Error(id, code, message, r.u32());
      }
      case PING -> new ClientFrame.Ping(r.i64());
      case PONG -> new ClientFrame.Pong(r.i64());
      case BYE -> new ClientFrame.Bye();
      default ->
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, type + " is not valid on this kind of link");
    };
  }
}
