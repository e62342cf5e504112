package io.bdrp.transport;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes the frames of a router link as whole frames over Netty {@link ByteBuf}s, without
 * a pipeline: {@link RouterHello}, the {@link ControlMessage} records, and the session frames
 * (ERROR, PING, PONG, BYE, with the client codec's layouts). DATA frames are not records: their
 * header is read where it lies and written for each copy by {@link DataHeader}. Layouts in {@code
 * docs/wire-protocol.md}.
 *
 * <pre>
 *  DV_HELLO          | sender u16 | epoch i64 | echoEpoch i64 |
 *  ROUTE_UPDATE      | sender u16 | count u16 | count x route (17 bytes, more if signed) |
 *    route           | destination u16 | epoch i64 | seqno i32 | metric u16 | flags u8 |
 *                      [ sigLen u8 | sig ] |
 *                      flags bit 0: viaReceiver; bit 1: signed (sigLen and sig follow);
 *                      bits 2..7 reserved, 0
 *  SEQNO_REQUEST     | sender u16 | destination u16 | epoch i64 | seqno i32 | hopCount u16 |
 *  ROUTE_DIGEST      | sender u16 | count u32 (0..65536) | hash u64 |
 *  TABLE_REQUEST     | sender u16 |
 *  PREDICATE_AD      | sender u16 | origin u16 | epoch i64 | seq i64 | EncodedPredicateCodec ... |
 *  PREDICATE_REQUEST | sender u16 | origin u16 |
 *  PREDICATE_DELTA   | sender u16 | origin u16 | epoch i64 | seq i64 | baseSeq i64 |
 *                      removed: EncodedPredicateCodec ... | added: EncodedPredicateCodec ... |
 *  PREDICATE_BATCH   | sender u16 | count u16 | count x (kind u8 | as PREDICATE_AD (kind 0) or
 *                      PREDICATE_DELTA (kind 1) after the sender; kinds 2 and 3: the same,
 *                      signed, followed by sigLen u8 | sig) |
 *  ROUTER_CERT       | sender u16 | origin u16 | chainLen u16 | chain (DER certificates) |
 *  ROUTER_HELLO      | protocol u16 | router u16 | epoch i64 | maxRouters u32 | M u16 | k u8 |
 *                    | categories u8 (0 paper, 1 sharp) | udpPort u16 | tokenLen u16 | token |
 *                    | udpProtection u8 (0 none, 1 mac, 2 encrypt) | nonceLen u8 | nonce |
 *                    | [ count u8 (1..8) | count x endpoint ] |   (revision 6; absent: none)
 *    endpoint        | nameLen u8 (1..32) | name ([a-z0-9-], a letter first) | len u16 (0..256) |
 *                      bytes |
 *    admin endpoint  | name "admin" | len 3 | port u16 (1..65535) | flags u8 (bit 0: https) |
 *                      (read by AdminEndpoint, not here)
 * </pre>
 *
 * <p>A signed advertisement has no frame of its own: {@link #encode} writes a lone one as a
 * PREDICATE_BATCH of one, which {@link #decode} returns as such.
 *
 * <p>Router numbers, metrics and hop counts must fit their u16 fields; the encoder refuses others
 * with {@link IllegalArgumentException}. Stateless and thread-safe; no method retains or releases
 * the buffers it is given.
 *
 * <p><b>Allocation is bounded by the frame.</b> Decoding a frame of L bytes allocates at most
 * {@value #ALLOCATION_PER_BYTE} x L + {@value #ALLOCATION_FIXED} bytes, whatever its counts and
 * lengths say and whether it is accepted or refused (see {@link #decode(ByteBuf, int,
 * BloomParameters)}); a DATA frame read by {@link DataHeader} stays within the same bound.
 */
public final class RouterFrameCodec {
  /** The largest count of a ROUTE_DIGEST: one route per router number. */
  public static final int MAX_DIGEST_ROUTES = 1 << 16;

  /** Bytes of one route in a ROUTE_UPDATE. */
  public static final int ROUTE_BYTES = 17;

  /** Most routes in one ROUTE_UPDATE (the u16 count). */
  public static final int MAX_ROUTES = 0xFFFF;

  /**
   * Most bytes a decode allocates per frame byte (see {@link #decode(ByteBuf, int,
   * BloomParameters)}).
   */
  public static final int ALLOCATION_PER_BYTE = 40;

  /**
   * Bytes a decode may allocate whatever the frame's length (see {@link #decode(ByteBuf, int,
   * BloomParameters)}).
   */
  public static final int ALLOCATION_FIXED = 16 * 1024;

  private static final int VIA_RECEIVER = 0x01;

  private static final int SIGNED = 0x02;

  /** Kinds of advertisement in a PREDICATE_BATCH. */
  private static final int WHOLE = 0;

  private static final int CHANGE = 1;

  private static final int SIGNED_WHOLE = 2;

  private static final int SIGNED_CHANGE = 3;

  private RouterFrameCodec() {}

  /** The frame type that carries {@code m}. */
  public static FrameType typeOf(ControlMessage m) {
    return switch (m) {
      case ControlMessage.Hello h -> FrameType.DV_HELLO;
      case ControlMessage.RouteUpdate u -> FrameType.ROUTE_UPDATE;
      case ControlMessage.SeqnoRequest s -> FrameType.SEQNO_REQUEST;
      case ControlMessage.RouteDigest g -> FrameType.ROUTE_DIGEST;
      case ControlMessage.TableRequest t -> FrameType.TABLE_REQUEST;
      case ControlMessage.PredicateAd a ->
          a.signature() == null ? FrameType.PREDICATE_AD : FrameType.PREDICATE_BATCH;
      case ControlMessage.PredicateDelta d ->
          d.signature() == null ? FrameType.PREDICATE_DELTA : FrameType.PREDICATE_BATCH;
      case ControlMessage.PredicateBatch b -> FrameType.PREDICATE_BATCH;
      case ControlMessage.PredicateRequest r -> FrameType.PREDICATE_REQUEST;
      case ControlMessage.RouterCert c -> FrameType.ROUTER_CERT;
    };
  }

  /** Exact number of bytes the frame of {@code frame} takes, prefix included. */
  public static int encodedLength(Object frame) {
    return Frames.PREFIX_BYTES
        + switch (frame) {
          case RouterHello h ->
              2
                  + 2
                  + 8
                  + 4
                  + 2
                  + 1
                  + (h.protocol() >= 4 ? 1 : 0)
                  + 2
                  + 2
                  + h.authToken().length
                  + (h.protocol() >= 5 ? 2 + h.udpNonce().length : 0)
                  + endpointsLength(h.endpoints());
          case ControlMessage.Hello h -> 2 + 8 + 8;
          case ControlMessage.RouteUpdate u -> {
            int n = 2 + 2 + u.routes().size() * ROUTE_BYTES;
            for (ControlMessage.Route r : u.routes()) {
              n += signatureLength(r.signature());
            }
            yield n;
          }
          case ControlMessage.SeqnoRequest s -> 2 + 2 + 8 + 4 + 2;
          case ControlMessage.RouteDigest g -> 2 + 4 + 8;
          case ControlMessage.TableRequest t -> 2;
          case ControlMessage.Advertisement a ->
              a.signature() == null ? 2 + bodyLength(a) : 2 + 2 + 1 + bodyLength(a);
          case ControlMessage.PredicateBatch b -> {
            int n = 2 + 2;
            for (ControlMessage.Advertisement a : b.ads()) {
              n += 1 + bodyLength(a);
            }
            yield n;
          }
          case ControlMessage.PredicateRequest r -> 2 + 2;
          case ControlMessage.RouterCert c -> 2 + 2 + 2 + c.chain().length;
          case SessionFrame s -> ClientFrameCodec.encodedLength(s) - Frames.PREFIX_BYTES;
          default -> throw new IllegalArgumentException("not a router-link frame: " + frame);
        };
  }

  /** Bytes a signature adds after the fields it signs: its length byte and itself (none: 0). */
  private static int signatureLength(io.bdrp.routing.OriginSignature s) {
    return s == null ? 0 : 1 + s.length();
  }

  /** Bytes of an advertisement after its sender (and kind, in a batch), signature included. */
  private static int bodyLength(ControlMessage.Advertisement a) {
    return signatureLength(a.signature())
        + switch (a) {
          case ControlMessage.PredicateAd ad -> adLength(ad);
          case ControlMessage.PredicateDelta d -> deltaLength(d);
        };
  }

  /** Bytes of an advertisement after its sender. */
  private static int adLength(ControlMessage.PredicateAd a) {
    return 2 + 8 + 8 + EncodedPredicateCodec.encodedLength(a.predicate());
  }

  /** Bytes of a change after its sender. */
  private static int deltaLength(ControlMessage.PredicateDelta d) {
    return 2
        + 8
        + 8
        + 8
        + EncodedPredicateCodec.encodedLength(d.removed())
        + EncodedPredicateCodec.encodedLength(d.added());
  }

  /** The frame in a new buffer from {@code alloc}, which the caller then owns. */
  public static ByteBuf encode(ByteBufAllocator alloc, Object frame) {
    ByteBuf out = alloc.buffer(encodedLength(frame));
    try {
      encode(frame, out);
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  /**
   * Writes a {@link RouterHello}, a {@link ControlMessage} or a {@link SessionFrame} as a whole
   * frame at the writer index of {@code out}.
   *
   * @throws IllegalArgumentException for another object, or a field that does not fit its width
   */
  public static void encode(Object frame, ByteBuf out) {
    int mark = out.writerIndex();
    try {
      switch (frame) {
        case RouterHello h -> {
          int start = Frames.beginFrame(out, FrameType.ROUTER_HELLO);
          out.writeShort(h.protocol());
          out.writeShort(h.routerNumber());
          out.writeLong(h.epoch());
          out.writeInt(h.maxRouters());
          out.writeShort(h.bloom().bits());
          out.writeByte(h.bloom().hashes());
          if (h.protocol() >= 4) { // earlier revisions had no category scheme
            out.writeByte(h.bloom().categories().wireId());
          }
          out.writeShort(h.udpPort());
          byte[] token = h.authToken();
          out.writeShort(token.length);
          out.writeBytes(token);
          if (h.protocol() >= 5) { // earlier revisions had no datagram protection
            byte[] nonce = h.udpNonce();
            out.writeByte(h.udpProtection().wireId());
            out.writeByte(nonce.length);
            out.writeBytes(nonce);
          }
          writeEndpoints(h.endpoints(), out);
          Frames.endFrame(out, start);
        }
        case ControlMessage m -> {
          int start = Frames.beginFrame(out, typeOf(m));
          encodeControlBody(m, out);
          Frames.endFrame(out, start);
        }
        case SessionFrame s -> ClientFrameCodec.encode(s, out);
        default -> throw new IllegalArgumentException("not a router-link frame: " + frame);
      }
    } catch (IllegalArgumentException e) {
      out.writerIndex(mark);
      throw e;
    }
  }

  /** Bytes the endpoints of a hello take: none for an empty list, which is not written. */
  private static int endpointsLength(List<TransportEndpoint> endpoints) {
    if (endpoints.isEmpty()) {
      return 0;
    }
    int n = 1;
    for (TransportEndpoint e : endpoints) {
      n += 1 + e.transport().length() + 2 + e.endpoint().length;
    }
    return n;
  }

  private static void writeEndpoints(List<TransportEndpoint> endpoints, ByteBuf out) {
    if (endpoints.isEmpty()) {
      return;
    }
    out.writeByte(endpoints.size());
    for (TransportEndpoint e : endpoints) {
      out.writeByte(e.transport().length());
      out.writeCharSequence(e.transport(), java.nio.charset.StandardCharsets.US_ASCII);
      byte[] b = e.endpoint();
      out.writeShort(b.length);
      out.writeBytes(b);
    }
  }

  /**
   * The endpoints at the end of a hello: a count of 1..{@value TransportEndpoint#MAX_ENDPOINTS}
   * (none is written as no count), each a name and at most {@value
   * TransportEndpoint#MAX_ENDPOINT_BYTES} bytes, one per name. Every count and length is checked
   * before it is used.
   */
  private static List<TransportEndpoint> readEndpoints(FrameReader r) {
    int countAt = r.offset();
    int count = r.u8();
    if (count == 0) {
      throw r.malformed(countAt, "an endpoint count of 0 (no endpoints are written as none)");
    }
    r.checkLimit(countAt, "endpoint count", count, TransportEndpoint.MAX_ENDPOINTS);
    // Each endpoint takes at least a name length, one name byte and a u16 length.
    r.requireItems(countAt, count, "endpoints", 4, 0);
    List<TransportEndpoint> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int nameAt = r.offset();
      int nameLen = r.u8();
      if (nameLen == 0 || nameLen > TransportEndpoint.MAX_NAME_BYTES) {
        throw r.malformed(
            nameAt,
            "transport name of "
                + nameLen
                + " bytes, outside 1.."
                + TransportEndpoint.MAX_NAME_BYTES);
      }
      String name = new String(r.bytes(nameLen), java.nio.charset.StandardCharsets.ISO_8859_1);
      String why = TransportEndpoint.nameProblem(name);
      if (why != null) {
        throw r.malformed(nameAt, why);
      }
      byte[] bytes = r.blob("endpoint of transport " + name, TransportEndpoint.MAX_ENDPOINT_BYTES);
      for (TransportEndpoint e : out) {
        if (e.transport().equals(name)) {
          throw r.malformed(nameAt, "a second endpoint for transport " + name);
        }
      }
      out.add(new TransportEndpoint(name, bytes));
    }
    return out;
  }

  private static void encodeControlBody(ControlMessage m, ByteBuf out) {
    out.writeShort(Frames.checkU16("sender", m.sender()));
    switch (m) {
      case ControlMessage.Hello h -> {
        out.writeLong(h.epoch());
        out.writeLong(h.echoEpoch());
      }
      case ControlMessage.RouteUpdate u -> {
        if (u.routes().size() > MAX_ROUTES) {
          throw new IllegalArgumentException(
              "route update has " + u.routes().size() + " routes, more than " + MAX_ROUTES);
        }
        out.writeShort(u.routes().size());
        for (ControlMessage.Route r : u.routes()) {
          out.writeShort(Frames.checkU16("destination", r.destination()));
          out.writeLong(r.epoch());
          out.writeInt(r.seqno());
          out.writeShort(r.metric());
          out.writeByte(
              (r.viaReceiver() ? VIA_RECEIVER : 0) | (r.signature() != null ? SIGNED : 0));
          writeSignature(out, r.signature());
        }
      }
      case ControlMessage.SeqnoRequest s -> {
        out.writeShort(Frames.checkU16("destination", s.destination()));
        out.writeLong(s.epoch());
        out.writeInt(s.seqno());
        out.writeShort(Frames.checkU16("hopCount", s.hopCount()));
      }
      case ControlMessage.RouteDigest g -> {
        if (g.count() < 0 || g.count() > MAX_DIGEST_ROUTES) {
          throw new IllegalArgumentException(
              "route digest count " + g.count() + " outside 0.." + MAX_DIGEST_ROUTES);
        }
        out.writeInt(g.count());
        out.writeLong(g.hash());
      }
      case ControlMessage.TableRequest t -> {}
      case ControlMessage.Advertisement a -> {
        if (a.signature() == null) {
          writeAdvertisement(out, a);
        } else {
          out.writeShort(1); // a batch of one
          writeInBatch(out, a);
        }
      }
      case ControlMessage.PredicateBatch b -> {
        out.writeShort(Frames.checkU16("count", b.ads().size()));
        for (ControlMessage.Advertisement a : b.ads()) {
          writeInBatch(out, a);
        }
      }
      case ControlMessage.PredicateRequest r ->
          out.writeShort(Frames.checkU16("origin", r.origin()));
      case ControlMessage.RouterCert c -> {
        out.writeShort(Frames.checkU16("origin", c.origin()));
        byte[] chain = c.chain();
        out.writeShort(chain.length);
        out.writeBytes(chain);
      }
    }
  }

  private static void writeAdvertisement(ByteBuf out, ControlMessage.Advertisement a) {
    switch (a) {
      case ControlMessage.PredicateAd ad -> writeAd(out, ad);
      case ControlMessage.PredicateDelta d -> writeDelta(out, d);
    }
  }

  /** An advertisement as an entry of a PREDICATE_BATCH: its kind, its fields, its signature. */
  private static void writeInBatch(ByteBuf out, ControlMessage.Advertisement a) {
    boolean signed = a.signature() != null;
    out.writeByte(
        switch (a) {
          case ControlMessage.PredicateAd ad -> signed ? SIGNED_WHOLE : WHOLE;
          case ControlMessage.PredicateDelta d -> signed ? SIGNED_CHANGE : CHANGE;
        });
    writeAdvertisement(out, a);
    writeSignature(out, a.signature());
  }

  private static void writeSignature(ByteBuf out, io.bdrp.routing.OriginSignature s) {
    if (s != null) {
      out.writeByte(s.length());
      out.writeBytes(s.bytes());
    }
  }

  /**
   * The router-link frame type with this number.
   *
   * @throws ProtocolException {@link ErrorCode#UNKNOWN_TYPE} for a number that names no frame,
   *     {@link ErrorCode#PROTOCOL_VIOLATION} for a frame of client sessions only
   */
  public static FrameType routerType(int number) {
    FrameType type = FrameType.fromNumber(number);
    if (type == null) {
      throw new ProtocolException(ErrorCode.UNKNOWN_TYPE, "unknown frame type " + number);
    }
    return switch (type) {
      case ERROR, PING, PONG, BYE -> type;
      default -> {
        if (type.number() < FrameType.ROUTER_HELLO.number()) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, type + " is a client-session frame, not a router one");
        }
        yield type;
      }
    };
  }

  /**
   * Reads one whole frame that fills {@code frame} (reader to writer index) and is not DATA: a
   * {@link RouterHello}, a {@link ControlMessage} or a {@link SessionFrame}.
   *
   * <p><b>Allocation is bounded by the frame.</b> Decoding a frame of L bytes allocates at most
   * {@value #ALLOCATION_PER_BYTE} x L + {@value #ALLOCATION_FIXED} bytes, accepted or refused:
   * every count (routes, advertisements) and length (token, text) is checked against the bytes left
   * before anything is allocated for it, and each item then costs a bounded multiple of its bytes.
   * The costliest frame per byte is a PREDICATE_BATCH of changes with no filters (39 bytes each,
   * two encoded predicates of 6 bytes to decode, about 1.2 KiB allocated per change when nothing is
   * compiled, 1.5 KiB without compressed references: 31 and 38 bytes a frame byte); a ROUTE_UPDATE
   * costs about 3 bytes a byte (a record a route), a PREDICATE_AD what its encoded predicate costs
   * ({@link EncodedPredicateCodec#decode(java.nio.ByteBuffer)}: at most {@value
   * EncodedPredicateCodec#ALLOCATION_PER_BYTE} a byte), a ROUTER_HELLO about 2 (its token). The
   * fixed part covers a refused frame's exception (about 2.5 KiB) and an encoded predicate's fixed
   * part. {@code RouterFrameAllocationTest} and the {@code routerFrameAllocation} fuzz target check
   * the bound.
   *
   * @param maxFrameBytes largest accepted value of the length field
   * @param expected the network's Bloom parameters; a PREDICATE_AD with others is refused with
   *     {@link ErrorCode#INCOMPATIBLE_PEER}. Null accepts any.
   * @throws ProtocolException if it is not a valid router-link control frame
   */
  public static Object decode(ByteBuf frame, int maxFrameBytes, BloomParameters expected) {
    int number = Frames.openFrame(frame, maxFrameBytes);
    FrameType type = routerType(number);
    if (type == FrameType.DATA) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_VIOLATION, "DATA is read with DataHeader, not decoded as a record");
    }
    return decodeBody(type, frame, expected);
  }

  /** As {@link #decode(ByteBuf, int, BloomParameters)} with the default limits. */
  public static Object decode(ByteBuf frame) {
    return decode(frame, Frames.DEFAULT_MAX_FRAME_BYTES, null);
  }

  /** Reads the body of a non-DATA router-link frame of a known type; it must fill {@code body}. */
  public static Object decodeBody(FrameType type, ByteBuf body, BloomParameters expected) {
    FrameReader r = new FrameReader(body, type);
    Object f =
        switch (type) {
          case ROUTER_HELLO -> {
            int protocol = r.u16();
            int router = r.u16();
            long epoch = r.i64();
            int maxAt = r.offset();
            int maxRouters = r.i32();
            if (maxRouters < 1 || maxRouters > RouterHello.MAX_ROUTERS) {
              throw r.malformed(
                  maxAt, "maxRouters " + maxRouters + " outside 1.." + RouterHello.MAX_ROUTERS);
            }
            // Revisions before 4 had no category scheme byte: read their layout, so that the
            // handshake reports the revision mismatch rather than a malformed frame.
            BloomParameters bloom = bloom(r, protocol >= 4);
            int udpPort = r.u16();
            byte[] token = r.blob("auth token", Frames.MAX_TOKEN_BYTES);
            // Revisions before 5 had no datagram protection: read as none, so that the handshake
            // reports the revision mismatch.
            UdpProtection protection = UdpProtection.NONE;
            byte[] nonce = new byte[0];
            if (protocol >= 5) {
              int at = r.offset();
              protection = UdpProtection.ofWire(r.u8());
              if (protection == null) {
                throw r.malformed(at, "unknown UDP protection");
              }
              int nonceAt = r.offset();
              int n = r.u8();
              int wanted = protection == UdpProtection.NONE ? 0 : DatagramAuth.NONCE_BYTES;
              if (n != wanted) {
                throw r.malformed(
                    nonceAt,
                    "UDP nonce of "
                        + n
                        + " bytes; "
                        + protection.configName()
                        + " takes "
                        + wanted);
              }
              nonce = r.bytes(n);
            }
            // Revision 6 may end with endpoints; a hello that ends after the nonce has none.
            List<TransportEndpoint> endpoints =
                protocol >= RouterHello.ENDPOINTS_SINCE && r.remaining() > 0
                    ? readEndpoints(r)
                    : List.of();
            yield new RouterHello(
                protocol,
                router,
                epoch,
                maxRouters,
                bloom,
                udpPort,
                token,
                protection,
                nonce,
                endpoints);
          }
          case DV_HELLO -> new ControlMessage.Hello(r.u16(), r.i64(), r.i64());
          case ROUTE_UPDATE -> {
            int sender = r.u16();
            int countAt = r.offset();
            int count = r.u16();
            r.requireItems(countAt, count, "routes", ROUTE_BYTES, 0);
            List<ControlMessage.Route> routes = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              int destination = r.u16();
              long epoch = r.i64();
              int seqno = r.i32();
              int metric = r.u16();
              int flagsAt = r.offset();
              int flags = r.u8();
              if ((flags & ~(VIA_RECEIVER | SIGNED)) != 0) {
                throw r.malformed(flagsAt, "reserved route flag bits set: " + flags);
              }
              io.bdrp.routing.OriginSignature sig = (flags & SIGNED) != 0 ? readSignature(r) : null;
              routes.add(
                  new ControlMessage.Route(
                      destination, epoch, seqno, metric, (flags & VIA_RECEIVER) != 0, sig));
            }
            yield new ControlMessage.RouteUpdate(sender, routes);
          }
          case SEQNO_REQUEST ->
              new ControlMessage.SeqnoRequest(r.u16(), r.u16(), r.i64(), r.i32(), r.u16());
          case ROUTE_DIGEST -> {
            int sender = r.u16();
            int countAt = r.offset();
            long count = r.u32();
            if (count > MAX_DIGEST_ROUTES) {
              throw r.malformed(
                  countAt, "route digest count " + count + " outside 0.." + MAX_DIGEST_ROUTES);
            }
            yield new ControlMessage.RouteDigest(sender, (int) count, r.i64());
          }
          case TABLE_REQUEST -> new ControlMessage.TableRequest(r.u16());
          case PREDICATE_AD -> readAd(r, r.u16(), expected);
          case PREDICATE_DELTA -> readDelta(r, r.u16(), expected);
          case PREDICATE_BATCH -> {
            int sender = r.u16();
            int countAt = r.offset();
            int count = r.u16();
            // kind, origin, epoch, seq and at least the 6 bytes of an empty encoded predicate each
            r.requireItems(countAt, count, "advertisements", 1 + 2 + 8 + 8 + 6, 0);
            List<ControlMessage.Advertisement> ads = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              int kindAt = r.offset();
              int kind = r.u8();
              ads.add(
                  switch (kind) {
                    case WHOLE -> readAd(r, sender, expected);
                    case CHANGE -> readDelta(r, sender, expected);
                    case SIGNED_WHOLE -> {
                      ControlMessage.PredicateAd a = readAd(r, sender, expected);
                      yield new ControlMessage.PredicateAd(
                          sender, a.origin(), a.epoch(), a.seq(), a.predicate(), readSignature(r));
                    }
                    case SIGNED_CHANGE -> {
                      ControlMessage.PredicateDelta d = readDelta(r, sender, expected);
                      yield new ControlMessage.PredicateDelta(
                          sender,
                          d.origin(),
                          d.epoch(),
                          d.baseSeq(),
                          d.seq(),
                          d.removed(),
                          d.added(),
                          readSignature(r));
                    }
                    default -> throw r.malformed(kindAt, "unknown advertisement kind " + kind);
                  });
            }
            yield new ControlMessage.PredicateBatch(sender, ads);
          }
          case PREDICATE_REQUEST -> new ControlMessage.PredicateRequest(r.u16(), r.u16());
          case ROUTER_CERT -> {
            int sender = r.u16();
            int origin = r.u16();
            int lenAt = r.offset();
            int n = r.u16();
            if (n == 0) {
              throw r.malformed(lenAt, "empty certificate chain");
            }
            r.checkLimit(
                lenAt, "certificate chain length", n, ControlMessage.RouterCert.MAX_CHAIN_BYTES);
            yield new ControlMessage.RouterCert(sender, origin, r.bytes(n));
          }
          default -> ClientFrameCodec.decodeSession(type, r);
        };
    r.requireEnd();
    return f;
  }

  /** sigLen u8 (1..255), then the signature. */
  private static io.bdrp.routing.OriginSignature readSignature(FrameReader r) {
    int at = r.offset();
    int n = r.u8();
    if (n == 0) {
      throw r.malformed(at, "empty signature");
    }
    return new io.bdrp.routing.OriginSignature(r.bytes(n));
  }

  private static void writeAd(ByteBuf out, ControlMessage.PredicateAd a) {
    out.writeShort(Frames.checkU16("origin", a.origin()));
    out.writeLong(a.epoch());
    out.writeLong(a.seq());
    Frames.writeVia(
        out,
        a.predicate(),
        EncodedPredicateCodec.encodedLength(a.predicate()),
        EncodedPredicateCodec::encode);
  }

  private static void writeDelta(ByteBuf out, ControlMessage.PredicateDelta d) {
    out.writeShort(Frames.checkU16("origin", d.origin()));
    out.writeLong(d.epoch());
    out.writeLong(d.seq());
    out.writeLong(d.baseSeq());
    for (EncodedPredicate p : List.of(d.removed(), d.added())) {
      Frames.writeVia(
          out, p, EncodedPredicateCodec.encodedLength(p), EncodedPredicateCodec::encode);
    }
  }

  /** origin, epoch, seq, baseSeq, then the removed and the added filters. */
  private static ControlMessage.PredicateDelta readDelta(
      FrameReader r, int sender, BloomParameters expected) {
    int origin = r.u16();
    long epoch = r.i64();
    long seq = r.i64();
    int baseAt = r.offset();
    long baseSeq = r.i64();
    if (baseSeq >= seq) {
      throw r.malformed(
          baseAt, "change from version " + baseSeq + " to " + seq + " does not go forward");
    }
    EncodedPredicate removed = filters(r, origin, expected, "removed filters");
    EncodedPredicate added = filters(r, origin, expected, "added filters");
    return new ControlMessage.PredicateDelta(sender, origin, epoch, baseSeq, seq, removed, added);
  }

  /** origin, epoch, seq and an encoded predicate of the network's parameters (if given). */
  private static ControlMessage.PredicateAd readAd(
      FrameReader r, int sender, BloomParameters expected) {
    int origin = r.u16();
    long epoch = r.i64();
    long seq = r.i64();
    EncodedPredicate p = filters(r, origin, expected, "encoded predicate");
    return new ControlMessage.PredicateAd(sender, origin, epoch, seq, p);
  }

  /** An encoded predicate of the network's parameters (if given). */
  private static EncodedPredicate filters(
      FrameReader r, int origin, BloomParameters expected, String what) {
    EncodedPredicate p = r.part(EncodedPredicateCodec::decode, ErrorCode.MALFORMED_FRAME, what, 0);
    if (expected != null && !p.parameters().equals(expected)) {
      throw new ProtocolException(
          ErrorCode.INCOMPATIBLE_PEER,
          "advertisement of router "
              + origin
              + " uses "
              + p.parameters()
              + ", this network uses "
              + expected);
    }
    return p;
  }

  private static BloomParameters bloom(FrameReader r, boolean withScheme) {
    int bitsAt = r.offset();
    int bits = r.u16();
    String why = BloomParameters.bitsProblem(bits);
    if (why != null) {
      throw r.malformed(bitsAt, why);
    }
    int kAt = r.offset();
    int k = r.u8();
    why = BloomParameters.hashesProblem(k);
    if (why != null) {
      throw r.malformed(kAt, why);
    }
    if (!withScheme) {
      return new BloomParameters(bits, k, CategoryScheme.PAPER);
    }
    int schemeAt = r.offset();
    int id = r.u8();
    CategoryScheme scheme = CategoryScheme.ofWireId(id);
    if (scheme == null) {
      throw r.malformed(schemeAt, "unknown category scheme " + id);
    }
    return new BloomParameters(bits, k, scheme);
  }
}
