package io.bdrp.transport;

import static io.bdrp.transport.RouterFrameGoldenTest.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Collections;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input on a router link: each fault gives its code; the link answers once and closes. */
class RouterFrameMalformedTest {
  static Stream<Arguments> vectors() {
    return RouterFrameGoldenTest.vectors();
  }

  static EmbeddedChannel link(ProtocolErrorCounters counters) {
    return new EmbeddedChannel(
        new FrameDecoder(4096),
        new RouterFrameDecoder(4096, BloomParameters.DEFAULT),
        new RouterFrameEncoder(),
        new ProtocolErrorHandler(counters));
  }

  static ProtocolException decodeFails(String hex) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes(hex));
    try {
      return assertThrows(ProtocolException.class, () -> RouterFrameCodec.decode(in));
    } finally {
      in.release();
    }
  }

  /** Feeds bytes; expects one ERROR frame with {@code code} and a closed link. */
  static void expectFatal(String hex, ErrorCode code) {
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = link(counters);
    ch.writeInbound(Unpooled.wrappedBuffer(bytes(hex)));
    ByteBuf out = ch.readOutbound();
    assertNotNull(out, "no ERROR frame");
    ClientFrame.Error e = (ClientFrame.Error) ClientFrameCodec.decode(out);
    out.release();
    assertEquals(code.number(), e.code(), e.message());
    assertNull(ch.readOutbound());
    assertNull(ch.readInbound());
    assertFalse(ch.isOpen());
    assertEquals(1, counters.count(code));
    ch.finishAndReleaseAll();
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void bodyTruncatedAtEveryOffset(Object f, String hex) {
    byte[] frame = bytes(hex);
    int body = frame.length - Frames.PREFIX_BYTES;
    // A hello cut where its endpoints begin is a whole hello without them (they are optional).
    int endpointsAt =
        f instanceof RouterHello h && !h.endpoints().isEmpty()
            ? RouterFrameCodec.encodedLength(h.withEndpoints(java.util.List.of()))
                - Frames.PREFIX_BYTES
            : -1;
    for (int k = 0; k < body; k++) {
      if (k == endpointsAt) {
        continue;
      }
      byte[] cut = java.util.Arrays.copyOf(frame, Frames.PREFIX_BYTES + k);
      int length = 2 + k;
      cut[2] = (byte) (length >>> 8);
      cut[3] = (byte) length;
      ByteBuf in = Unpooled.wrappedBuffer(cut);
      ProtocolException e =
          assertThrows(ProtocolException.class, () -> RouterFrameCodec.decode(in), "cut at " + k);
      in.release();
      assertEquals(ErrorCode.MALFORMED_FRAME, e.code(), "cut at " + k + ": " + e.getMessage());
    }
  }

  @Test
  void routeCountBeyondTheBody() {
    // 65535 routes announced, one route's bytes there: refused before any list is sized.
    ProtocolException e =
        decodeFails("00000017 01 22 | 0001 | ffff | 0002 0000000000000005 00000007 0003 00");
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("65535 routes need 1114095 bytes"), e.reason());
    expectFatal(
        "00000017 01 22 | 0001 | ffff | 0002 0000000000000005 00000007 0003 00",
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void digestOfMoreRoutesThanRouterNumbers() {
    ProtocolException e = decodeFails("00000010 01 2e | 0001 | 00010001 | 0102030405060708");
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("route digest count 65537 outside 0..65536"), e.reason());
    expectFatal("00000010 01 2e | 0001 | ffffffff | 0102030405060708", ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void reservedRouteFlagBits() {
    ProtocolException e =
        decodeFails("00000017 01 22 | 0001 | 0001 | 0002 0000000000000005 00000007 0003 04");
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("reserved route flag bits"), e.reason());
  }

  @Test
  void signaturesThatAreEmptyOrRunPastTheFrame() {
    // A signed route whose signature is empty, then one whose length runs past the frame.
    ProtocolException empty =
        decodeFails("00000018 01 22 | 0001 | 0001 | 0002 0000000000000005 00000007 0003 02 | 00");
    assertEquals(ErrorCode.MALFORMED_FRAME, empty.code());
    assertTrue(empty.reason().contains("empty signature"), empty.reason());
    expectFatal(
        "0000001a 01 22 | 0001 | 0001 | 0002 0000000000000005 00000007 0003 02 | 05 aabb",
        ErrorCode.MALFORMED_FRAME);
    // A signed whole advertisement in a batch, its signature cut short.
    ProtocolException cut =
        decodeFails(
            "00000025 01 27 | 0001 | 0001"
                + " | 02 | 0002 | 0000000000000005 | 0000000000000009 | 0040 01 01 0001 04 0030"
                + " | 03 aabb");
    assertEquals(ErrorCode.MALFORMED_FRAME, cut.code());
  }

  @Test
  void certificateChainsEmptyOrBeyondTheBound() {
    ProtocolException empty = decodeFails("00000008 01 29 | 0001 | 0002 | 0000");
    assertEquals(ErrorCode.MALFORMED_FRAME, empty.code());
    // 16,385 bytes announced: refused by the bound before the bytes are looked for.
    ProtocolException big = decodeFails("00000009 01 29 | 0001 | 0002 | 4001 | 30");
    assertEquals(ErrorCode.MALFORMED_FRAME, big.code());
    assertTrue(big.reason().contains("certificate chain length"), big.reason());
  }

  @Test
  void filterCountBeyondTheBody() {
    ProtocolException e =
        decodeFails(
            "0000001b 01 24 | 0001 | 0002 | 0000000000000005 | 0000000000000009 | 0040 01 0400");
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertEquals(4, e.position()); // the filter count, 1-based within the encoded predicate
  }

  @Test
  void advertisementWithOtherBloomParameters() {
    // The golden PREDICATE_AD uses M=64 k=1; this link expects the defaults.
    expectFatal(
        "0000001f 01 24 | 0001 | 0002 | 0000000000000005 | 0000000000000009"
            + " | 0040 01 01 0001 04 0030",
        ErrorCode.INCOMPATIBLE_PEER);
    // The defaults' M and k with the paper's categories (00): other filters all the same.
    expectFatal(
        "00000021 01 24 | 0001 | 0002 | 0000000000000005 | 0000000000000009"
            + " | 2000 01 00 0001 04 000000c0",
        ErrorCode.INCOMPATIBLE_PEER);
  }

  @Test
  void unknownAdvertisementKindInABatch() {
    expectFatal(
        "0000001f 01 27 | 0001 | 0001 | 04 | 000000000000000000000000000000000000000000000000",
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void aChangeThatDoesNotGoForward() {
    expectFatal(
        "0000002d 01 28 | 0001 | 0002 | 0000000000000005 | 0000000000000009"
            + " | 0000000000000009 | 0040 01 01 0000 | 0040 01 01 0001 04 0030",
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void unknownCategorySchemeInHello() {
    assertEquals(
        ErrorCode.MALFORMED_FRAME,
        decodeFails(
                "0000001a 01 20 | 0004 | 0007 | 0000000000000005 | 00000400 | 0800 | 02 | 09"
                    + " | 1ce9 | 0000")
            .code());
  }

  @Test
  void bloomParametersOutOfRangeInHello() {
    assertEquals(
        ErrorCode.MALFORMED_FRAME,
        decodeFails("00000011 01 20 | 0007 | 0000000000000005 | 0010 | 02 | 0000").code());
    assertEquals(
        ErrorCode.MALFORMED_FRAME,
        decodeFails("00000011 01 20 | 0007 | 0000000000000005 | 0800 | 00 | 0000").code());
  }

  @Test
  void trailingBytes() {
    expectFatal("00000007 01 25 | 0001 | 0002 | 00", ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void clientFrameOnARouterLink() {
    expectFatal("00000002 01 01", ErrorCode.PROTOCOL_VIOLATION);
  }

  @Test
  void unknownTypeAndVersionAndSize() {
    expectFatal("00000002 01 30", ErrorCode.UNKNOWN_TYPE);
    expectFatal("00000002 00 21", ErrorCode.UNSUPPORTED_VERSION);
    expectFatal("00001001", ErrorCode.FRAME_TOO_LARGE);
  }

  @Test
  void malformedDataHeaderPassesTheDecoderAndIsRefusedByTheFlyweight() {
    // Broadcast flag and a D word. The framing is intact, so the session is not ended: the
    // decoder passes the frame on and the session's flyweight refuses it (counted, dropped).
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = link(counters);
    ch.writeInbound(
        Unpooled.wrappedBuffer(
            bytes(
                "0000001e 01 26 | 10 | 01 | 0003 | 0000000000000001 | 0001 | 0000000000000001"
                    + " | 0000 00000000")));
    ByteBuf in = ch.readInbound();
    try {
      ProtocolException e = assertThrows(ProtocolException.class, () -> new DataHeader().wrap(in));
      assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    } finally {
      in.release();
    }
    assertEquals(0, counters.total());
    assertTrue(ch.isOpen());
    assertFalse(ch.finishAndReleaseAll());
  }

  @Test
  void dataPassesThroughAsABufferAndOutAgainUntouched() {
    Message m = Message.builder().put("a", 1L).build();
    ByteBuf frame =
        DataHeader.encode(UnpooledByteBufAllocator.DEFAULT, 5, false, 1, 77, new long[] {4}, m);
    byte[] sent = io.netty.buffer.ByteBufUtil.getBytes(frame);
    EmbeddedChannel ch = link(new ProtocolErrorCounters());
    ch.writeInbound(frame);
    ByteBuf in = ch.readInbound();
    DataHeader h = new DataHeader().wrap(in);
    assertEquals(77, h.messageId());
    assertEquals(m, Wire.dataMessage(h, in));
    // A buffer written to a link (DATA bytes, as a router's output batch) goes out as it is.
    ch.writeOutbound(in);
    ByteBuf out = ch.readOutbound();
    assertEquals(Unpooled.wrappedBuffer(sent), out);
    out.release();
    assertFalse(ch.finishAndReleaseAll());
  }

  @Test
  void encoderRefusesFieldsWiderThanTheWire() {
    ByteBuf out = Unpooled.buffer();
    assertThrows(
        IllegalArgumentException.class,
        () -> RouterFrameCodec.encode(new ControlMessage.PredicateRequest(65536, 1), out));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RouterFrameCodec.encode(
                new ControlMessage.RouteUpdate(
                    1, Collections.nCopies(65536, new ControlMessage.Route(1, 1, 1, 1, false))),
                out));
    assertThrows(
        IllegalArgumentException.class,
        () -> RouterFrameCodec.encode(new ControlMessage.RouteDigest(1, 65537, 0), out));
    assertEquals(0, out.writerIndex(), "nothing written by a refused encode");
    out.release();
  }
}
