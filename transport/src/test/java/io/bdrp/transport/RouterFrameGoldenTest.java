package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginSignature;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden byte vectors of every router-link frame type but DATA (whose vectors are in the transport
 * module's DataHeaderTest), checked both ways. Listed in docs/wire-protocol.md.
 */
class RouterFrameGoldenTest {
  static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex.replaceAll("[\\s|]", ""));
  }

  static final EncodedPredicate FILTER_11 =
      EncodedPredicate.ofFilters(new BloomParameters(64, 1), List.of(new long[] {0x11}));

  static final OriginSignature SIG_2 = new OriginSignature(new byte[] {(byte) 0xaa, (byte) 0xbb});

  static final OriginSignature SIG_3 =
      new OriginSignature(new byte[] {(byte) 0xaa, (byte) 0xbb, (byte) 0xcc});

  static final ControlMessage.PredicateAd SIGNED_AD =
      new ControlMessage.PredicateAd(1, 2, 5, 9, FILTER_11, SIG_2);

  /** A signed advertisement alone goes as a batch of one: it has no frame of its own. */
  @org.junit.jupiter.api.Test
  void aLoneSignedAdvertisementIsABatchOfOne() {
    ByteBuf out = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, SIGNED_AD);
    try {
      assertArrayEquals(
          bytes(
              "00000025 01 27 | 0001 | 0001"
                  + " | 02 | 0002 | 0000000000000005 | 0000000000000009 | 0040 01 01 0001 04 0030"
                  + " | 02 aabb"),
          ByteBufUtil.getBytes(out));
      assertEquals(out.readableBytes(), RouterFrameCodec.encodedLength(SIGNED_AD));
      assertEquals(
          new ControlMessage.PredicateBatch(1, List.of(SIGNED_AD)), RouterFrameCodec.decode(out));
    } finally {
      out.release();
    }
  }

  static Stream<Arguments> vectors() {
    return Stream.of(
        Arguments.of(
            new RouterHello(
                7,
                5,
                1024,
                BloomParameters.DEFAULT,
                7401,
                new byte[0],
                UdpProtection.MAC,
                new byte[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}),
            "0000002c 01 20 | 0006 | 0007 | 0000000000000005 | 00000400 | 2000 | 01 | 01 | 1ce9"
                + " | 0000 | 01 | 10 | 000102030405060708090a0b0c0d0e0f"),
        Arguments.of(
            new RouterHello(
                    7,
                    5,
                    1024,
                    BloomParameters.DEFAULT,
                    0,
                    new byte[0],
                    UdpProtection.NONE,
                    new byte[0])
                .withEndpoints(
                    List.of(
                        new TransportEndpoint("rdma", new byte[] {1, 2, 3}),
                        new TransportEndpoint("shm", new byte[0]))),
            "0000002d 01 20 | 0006 | 0007 | 0000000000000005 | 00000400 | 2000 | 01 | 01 | 0000"
                + " | 0000 | 00 | 00 | 02 | 04 7264 6d61 | 0003 010203 | 03 73686d | 0000"),
        Arguments.of(
            new RouterHello(
                    7,
                    5,
                    1024,
                    BloomParameters.DEFAULT,
                    0,
                    new byte[0],
                    UdpProtection.NONE,
                    new byte[0])
                .withEndpoints(List.of(new AdminEndpoint(9400, true).toEndpoint())),
            "00000028 01 20 | 0006 | 0007 | 0000000000000005 | 00000400 | 2000 | 01 | 01 | 0000"
                + " | 0000 | 00 | 00 | 01 | 05 61646d696e | 0003 24b8 01"),
        Arguments.of(
            new ControlMessage.Hello(1, 5, 6),
            "00000014 01 21 | 0001 | 0000000000000005 | 0000000000000006"),
        Arguments.of(
            new ControlMessage.RouteUpdate(
                1,
                List.of(
                    new ControlMessage.Route(2, 5, 7, 3, false),
                    new ControlMessage.Route(9, 1, -1, ControlMessage.Route.INFINITY, true))),
            "00000028 01 22 | 0001 | 0002"
                + " | 0002 0000000000000005 00000007 0003 00"
                + " | 0009 0000000000000001 ffffffff ffff 01"),
        Arguments.of(
            new ControlMessage.SeqnoRequest(1, 2, 5, 8, 64),
            "00000014 01 23 | 0001 | 0002 | 0000000000000005 | 00000008 | 0040"),
        Arguments.of(
            new ControlMessage.RouteDigest(1, 65536, 0x0102030405060708L),
            "00000010 01 2e | 0001 | 00010000 | 0102030405060708"),
        Arguments.of(new ControlMessage.TableRequest(1), "00000004 01 2f | 0001"),
        Arguments.of(
            new ControlMessage.PredicateAd(1, 2, 5, 9, FILTER_11),
            "0000001f 01 24 | 0001 | 0002 | 0000000000000005 | 0000000000000009"
                + " | 0040 01 01 0001 04 0030"),
        Arguments.of(
            new ControlMessage.PredicateDelta(
                1, 2, 5, 8, 9, EncodedPredicate.empty(new BloomParameters(64, 1)), FILTER_11),
            "0000002d 01 28 | 0001 | 0002 | 0000000000000005 | 0000000000000009"
                + " | 0000000000000008 | 0040 01 01 0000 | 0040 01 01 0001 04 0030"),
        Arguments.of(
            new ControlMessage.PredicateBatch(
                1,
                List.of(
                    new ControlMessage.PredicateAd(1, 2, 5, 9, FILTER_11),
                    new ControlMessage.PredicateDelta(
                        1,
                        3,
                        6,
                        1,
                        2,
                        EncodedPredicate.empty(new BloomParameters(64, 1)),
                        FILTER_11))),
            "0000004c 01 27 | 0001 | 0002"
                + " | 00 | 0002 | 0000000000000005 | 0000000000000009 | 0040 01 01 0001 04 0030"
                + " | 01 | 0003 | 0000000000000006 | 0000000000000002 | 0000000000000001"
                + " | 0040 01 01 0000 | 0040 01 01 0001 04 0030"),
        Arguments.of(new ControlMessage.PredicateRequest(1, 2), "00000006 01 25 | 0001 | 0002"),
        Arguments.of(
            new ControlMessage.RouteUpdate(
                1, List.of(new ControlMessage.Route(2, 5, 7, 3, false, SIG_3))),
            "0000001b 01 22 | 0001 | 0001 | 0002 0000000000000005 00000007 0003 02 | 03 aabbcc"),
        Arguments.of(
            new ControlMessage.PredicateBatch(1, List.of(SIGNED_AD)),
            "00000025 01 27 | 0001 | 0001"
                + " | 02 | 0002 | 0000000000000005 | 0000000000000009 | 0040 01 01 0001 04 0030"
                + " | 02 aabb"),
        Arguments.of(
            new ControlMessage.PredicateBatch(
                1,
                List.of(
                    new ControlMessage.PredicateDelta(
                        1,
                        2,
                        5,
                        8,
                        9,
                        EncodedPredicate.empty(new BloomParameters(64, 1)),
                        FILTER_11,
                        SIG_2))),
            "00000033 01 27 | 0001 | 0001"
                + " | 03 | 0002 | 0000000000000005 | 0000000000000009 | 0000000000000008"
                + " | 0040 01 01 0000 | 0040 01 01 0001 04 0030 | 02 aabb"),
        Arguments.of(
            new ControlMessage.RouterCert(1, 2, new byte[] {0x30, 0x01, 0x02}),
            "0000000b 01 29 | 0001 | 0002 | 0003 | 300102"),
        Arguments.of(
            new ClientFrame.Error(0, ErrorCode.INCOMPATIBLE_PEER, "M", 0),
            "00000013 01 05 | 0000000000000000 | 000b | 0001 4d | 00000000"),
        Arguments.of(new ClientFrame.Ping(1), "0000000a 01 08 | 0000000000000001"),
        Arguments.of(new ClientFrame.Pong(1), "0000000a 01 09 | 0000000000000001"),
        Arguments.of(new ClientFrame.Bye(), "00000002 01 0a"));
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void encodesToTheVector(Object f, String hex) {
    ByteBuf out = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, f);
    try {
      assertArrayEquals(bytes(hex), ByteBufUtil.getBytes(out), ByteBufUtil.hexDump(out));
      assertEquals(out.readableBytes(), RouterFrameCodec.encodedLength(f));
    } finally {
      out.release();
    }
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void decodesFromTheVector(Object f, String hex) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes(hex));
    try {
      assertEquals(f, RouterFrameCodec.decode(in));
    } finally {
      in.release();
    }
  }
}
