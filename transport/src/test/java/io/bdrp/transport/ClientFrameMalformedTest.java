package io.bdrp.transport;

import static io.bdrp.transport.Wire.bytes;
import static io.bdrp.transport.Wire.clientPipeline;
import static io.bdrp.transport.Wire.expectFatal;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input on a client session: each fault gives its error code, and the session's error handler
 * answers with exactly one ERROR frame (and closes, unless the fault is about one request's
 * content).
 */
class ClientFrameMalformedTest {
  static Stream<Arguments> vectors() {
    return ClientFrameGoldenTest.vectors();
  }

  /** A stream cut anywhere inside a frame yields nothing yet, and no error. */
  @ParameterizedTest
  @MethodSource("vectors")
  void streamCutAtEveryOffsetWaits(ClientFrame f, String hex) {
    byte[] frame = bytes(hex);
    for (int k = 0; k < frame.length; k++) {
      ProtocolErrorCounters counters = new ProtocolErrorCounters();
      EmbeddedChannel ch = clientPipeline(1024, counters);
      ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(frame, k)));
      assertNull(ch.readInbound());
      assertNull(ch.readOutbound());
      assertEquals(0, counters.total());
      ch.writeInbound(Unpooled.wrappedBuffer(frame, k, frame.length - k));
      assertEquals(f, ch.readInbound(), "cut at " + k);
      ch.finishAndReleaseAll();
    }
  }

  /**
   * A body cut at every offset, with a length field that agrees: MALFORMED_FRAME, or the content
   * code when the cut falls inside a predicate or message.
   */
  @ParameterizedTest
  @MethodSource("vectors")
  void bodyTruncatedAtEveryOffset(ClientFrame f, String hex) {
    byte[] frame = bytes(hex);
    int body = frame.length - Frames.PREFIX_BYTES;
    for (int k = 0; k < body; k++) {
      final int cut = k;
      ErrorCode expected =
          switch (f) {
            case ClientFrame.SetPredicate s when cut >= 8 -> ErrorCode.BAD_PREDICATE;
            case ClientFrame.Send s when cut >= 8 -> ErrorCode.BAD_MESSAGE;
            case ClientFrame.SendReliable s when cut >= 24 -> ErrorCode.BAD_MESSAGE;
            case ClientFrame.Trace t when cut >= 12 -> ErrorCode.BAD_MESSAGE;
            case ClientFrame.Deliver d -> ErrorCode.BAD_MESSAGE;
            default -> ErrorCode.MALFORMED_FRAME;
          };
      ByteBuf in = Unpooled.wrappedBuffer(Wire.cutBody(frame, k));
      ProtocolException e =
          assertThrows(ProtocolException.class, () -> ClientFrameCodec.decode(in));
      in.release();
      assertEquals(expected, e.code(), "cut at body offset " + k + ": " + e.getMessage());
    }
  }

  @Test
  void oversizeLengthIsRefusedFromTheHeaderAlone() {
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = clientPipeline(100, counters);
    // Only the four bytes of the length field: the body never arrives.
    ClientFrame.Error e = expectFatal(ch, bytes("00000065"), ErrorCode.FRAME_TOO_LARGE);
    assertTrue(e.message().contains("101"), e.message());
    assertEquals(1, counters.count(ErrorCode.FRAME_TOO_LARGE));
  }

  @Test
  void hugeLengthIsRefused() {
    expectFatal(
        clientPipeline(Frames.DEFAULT_MAX_FRAME_BYTES, new ProtocolErrorCounters()),
        bytes("ffffffff 01 06"),
        ErrorCode.FRAME_TOO_LARGE);
  }

  @Test
  void lengthUnderTwoIsMalformed() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000001 01"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void unknownVersionIsRefusedBeforeTheBody() {
    // Length 10 announced, only the version byte sent.
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("0000000a 02"),
        ErrorCode.UNSUPPORTED_VERSION);
  }

  @Test
  void unknownType() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000002 01 7f"),
        ErrorCode.UNKNOWN_TYPE);
  }

  @Test
  void routerFrameOnAClientSession() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000006 01 25 0001 0002"),
        ErrorCode.PROTOCOL_VIOLATION);
  }

  @Test
  void nameLengthBeyondTheBody() {
    // HELLO: client name length 200, 3 bytes follow.
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000007 01 01 | 01 | c8 636c69"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void errorTextLengthOverItsLimit() {
    // ERROR: text length 0x0401 = 1025 > 1024, checked before the bytes are looked for.
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                ClientFrameCodec.decode(
                    Wire.buf("0000000e 01 05 | 0000000000000000 | 0001 | 0401")));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("exceeds the limit of 1024"), e.reason());
  }

  @Test
  void tokenLengthOverItsLimit() {
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () -> ClientFrameCodec.decode(Wire.buf("00000008 01 01 | 01 | 01 61 | 0401 00")));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
  }

  @Test
  void predicateCountBeyondTheBodyIsBadPredicateWithItsId() {
    // SET_PREDICATE id 9: 1000 conjunctions announced, none there. Not fatal: answered, session on.
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = clientPipeline(100, counters);
    ch.writeInbound(Wire.buf("0000000c 01 03 | 0000000000000009 | 03e8"));
    ClientFrame.Error e = Wire.onlyError(ch);
    assertEquals(ErrorCode.BAD_PREDICATE.number(), e.code());
    assertEquals(9, e.correlationId());
    assertEquals(1, e.position()); // the count, first byte of the predicate
    assertTrue(ch.isOpen());
    // The session goes on: the next frame decodes.
    ch.writeInbound(Wire.buf("0000000a 01 08 | 0000000000000001"));
    assertEquals(new ClientFrame.Ping(1), ch.readInbound());
    assertEquals(1, counters.count(ErrorCode.BAD_PREDICATE));
    ch.finishAndReleaseAll();
  }

  @Test
  void badMessageInSendIsAnsweredWithItsIdAndPosition() {
    // SEND id 5: one attribute of unknown type tag 9 at message offset 2.
    EmbeddedChannel ch = clientPipeline(100, new ProtocolErrorCounters());
    ch.writeInbound(Wire.buf("00000014 01 06 | 0000000000000005 | 0001 09 01 62 01 00000000"));
    ClientFrame.Error e = Wire.onlyError(ch);
    assertEquals(ErrorCode.BAD_MESSAGE.number(), e.code());
    assertEquals(5, e.correlationId());
    assertEquals(3, e.position());
    assertTrue(e.message().contains("unknown type tag 9"), e.message());
    assertTrue(ch.isOpen());
    ch.finishAndReleaseAll();
  }

  @Test
  void badMessageInSendReliableIsAnsweredWithItsIdAndPosition() {
    // SEND_RELIABLE id 5, publisher 9, number 1: an attribute of unknown type tag 9.
    EmbeddedChannel ch = clientPipeline(100, new ProtocolErrorCounters());
    ch.writeInbound(
        Wire.buf(
            "00000024 01 0b | 0000000000000005 | 0000000000000009 | 0000000000000001"
                + " | 0001 09 01 62 01 00000000"));
    ClientFrame.Error e = Wire.onlyError(ch);
    assertEquals(ErrorCode.BAD_MESSAGE.number(), e.code());
    assertEquals(5, e.correlationId());
    assertEquals(3, e.position());
    assertTrue(ch.isOpen());
    ch.finishAndReleaseAll();
  }

  @Test
  void publisherZeroIsMalformed() {
    ClientFrame.Error e =
        expectFatal(
            clientPipeline(100, new ProtocolErrorCounters()),
            bytes(
                "00000024 01 0b | 0000000000000005 | 0000000000000000 | 0000000000000001"
                    + " | 0001 04 01 62 01 00000000"),
            ErrorCode.MALFORMED_FRAME);
    assertTrue(e.message().contains("offset 8: publisher 0"), e.message());
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000012 01 0c | 0000000000000000 | 0000000000000001"),
        ErrorCode.MALFORMED_FRAME);
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000014 01 0d | 0000000000000000 | 0000000000000001 | 0000"),
        ErrorCode.MALFORMED_FRAME);
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("0000001a 01 0e | 0000000000000000 | 0000000000000001 | 0000000000000002"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void aConfirmRangeThatEndsBeforeItStartsIsMalformed() {
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    ClientFrame.Error e =
        expectFatal(
            clientPipeline(100, counters),
            bytes("0000001a 01 0e | 0000000000000009 | 0000000000000005 | 0000000000000004"),
            ErrorCode.MALFORMED_FRAME);
    assertTrue(e.message().contains("offset 16: lastSeq 4 below firstSeq 5"), e.message());
    assertEquals(1, counters.count(ErrorCode.MALFORMED_FRAME));
    ClientFrame.Error first =
        expectFatal(
            clientPipeline(100, new ProtocolErrorCounters()),
            bytes("0000001a 01 0e | 0000000000000009 | 0000000000000000 | 0000000000000004"),
            ErrorCode.MALFORMED_FRAME);
    assertTrue(first.message().contains("offset 8: publisherSeq 0 below 1"), first.message());
    // A range whose end does not fit an i64 of at least 1: lastSeq -1 is below any firstSeq.
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("0000001a 01 0e | 0000000000000009 | 0000000000000001 | ffffffffffffffff"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void aConfirmRangeCutShortOrWithTrailingBytesIsMalformed() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000012 01 0e | 0000000000000009 | 0000000000000001"),
        ErrorCode.MALFORMED_FRAME);
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("0000001b 01 0e | 0000000000000009 | 0000000000000001 | 0000000000000002 | ff"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void publisherSeqBelowOneIsMalformed() {
    ClientFrame.Error e =
        expectFatal(
            clientPipeline(100, new ProtocolErrorCounters()),
            bytes(
                "00000024 01 0b | 0000000000000005 | 0000000000000009 | 0000000000000000"
                    + " | 0001 04 01 62 01 00000000"),
            ErrorCode.MALFORMED_FRAME);
    assertTrue(e.message().contains("offset 16: publisherSeq 0"), e.message());
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000012 01 0c | 0000000000000009 | ffffffffffffffff"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void unreachedRouterCountBeyondTheBodyIsRefusedBeforeAllocating() {
    // 65,535 routers announced, one there.
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                ClientFrameCodec.decode(
                    Wire.buf(
                        "00000016 01 0d | 0000000000000009 | 0000000000000001 | ffff | 0001")));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("offset 16: truncated: 65535 routers"), e.reason());
  }

  @Test
  void trailingBytesAfterUnreached() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000017 01 0d | 0000000000000009 | 0000000000000001 | 0001 | 0002 | ff"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void badUtf8InAName() {
    // HELLO: client name c0 80, an overlong NUL.
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("00000008 01 01 | 01 | 02 c080 | 0000"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void encodedSurrogateInErrorText() {
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                ClientFrameCodec.decode(
                    Wire.buf("00000015 01 05 | 0000000000000000 | 0001 | 0003 eda080 | 00000000")));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.reason().contains("UTF-8"), e.reason());
  }

  @Test
  void trailingBytesAfterAFixedBody() {
    expectFatal(
        clientPipeline(100, new ProtocolErrorCounters()),
        bytes("0000000b 01 08 | 0000000000000001 | ff"),
        ErrorCode.MALFORMED_FRAME);
  }

  @Test
  void trailingBytesAfterAPredicate() {
    byte[] ok = bytes("00000019 01 03 | 000000000000002a | 0001 01 01 01 78 02 0000000000000001");
    byte[] frame = Arrays.copyOf(ok, ok.length + 1);
    frame[3]++;
    ClientFrame.Error e =
        expectFatal(
            clientPipeline(100, new ProtocolErrorCounters()), frame, ErrorCode.MALFORMED_FRAME);
    assertTrue(e.message().contains("unexpected bytes"), e.message());
  }

  @Test
  void errorCodeZeroIsMalformed() {
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                ClientFrameCodec.decode(
                    Wire.buf("00000012 01 05 | 0000000000000000 | 0000 | 0000 | 00000000")));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
  }

  @Test
  void afterAFatalErrorTheRestOfTheStreamIsIgnored() {
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = clientPipeline(100, counters);
    // An unknown type, then a valid PING in the same read: one ERROR, no PING.
    expectFatal(
        ch, bytes("00000002 01 7f | 0000000a 01 08 0000000000000001"), ErrorCode.UNKNOWN_TYPE);
    assertEquals(1, counters.total());
  }

  @Test
  void unknownErrorCodesPassThrough() {
    ClientFrame.Error e = new ClientFrame.Error(0, 999, "later", 0);
    assertTrue(e.knownCode().isEmpty());
    ByteBuf b = ClientFrameCodec.encode(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, e);
    try {
      assertEquals(e, ClientFrameCodec.decode(b));
    } finally {
      b.release();
    }
  }

  @Test
  void longErrorTextIsCutOnACodePointBoundary() {
    String text = "é".repeat(600); // 1200 bytes
    ClientFrame.Error e = new ClientFrame.Error(0, ErrorCode.INTERNAL, text, 0);
    assertEquals(512, e.message().length());
  }

  @Test
  void internalFailuresAreReportedWithoutDetail() {
    ProtocolErrorCounters counters = new ProtocolErrorCounters();
    EmbeddedChannel ch = clientPipeline(100, counters);
    ch.pipeline().fireExceptionCaught(new IllegalStateException("secret"));
    ClientFrame.Error e = Wire.onlyError(ch);
    assertEquals(ErrorCode.INTERNAL.number(), e.code());
    assertEquals("internal error", e.message());
    assertTrue(!ch.isOpen());
    assertEquals(1, counters.count(ErrorCode.INTERNAL));
    ch.finishAndReleaseAll();
  }

  @Test
  void recordsRefuseWhatTheWireCannotCarry() {
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.HelloOk(1, 65536, "r"));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ClientFrame.Hello(1, "n".repeat(256), new byte[0]));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ClientFrame.Hello(1, "n", new byte[Frames.MAX_TOKEN_BYTES + 1]));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.Error(0, 0, "x", 0));
    assertThrows(
        NullPointerException.class, () -> new ClientFrame.SetPredicate(1, (Predicate) null));
    Message m = ClientFrameGoldenTest.SMALL;
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.SendReliable(1, 0, 1, m));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.SendReliable(1, 9, 0, m));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.Confirm(9, -1));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.ConfirmRange(0, 1, 2));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.ConfirmRange(9, 0, 2));
    assertThrows(IllegalArgumentException.class, () -> new ClientFrame.ConfirmRange(9, 3, 2));
    assertThrows(
        IllegalArgumentException.class, () -> new ClientFrame.Unreached(9, 1, new int[] {65536}));
    assertThrows(
        IllegalArgumentException.class, () -> new ClientFrame.Unreached(9, 1, new int[65536]));
  }

  @Test
  void unreachedKeepsItsOwnCopyOfTheRouters() {
    int[] routers = {1, 2};
    ClientFrame.Unreached u = new ClientFrame.Unreached(9, 1, routers);
    routers[0] = 7;
    u.routers()[1] = 7;
    assertEquals(new ClientFrame.Unreached(9, 1, new int[] {1, 2}), u);
  }
}
