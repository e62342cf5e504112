package io.bdrp.transport;

import static io.bdrp.transport.Wire.buf;
import static io.bdrp.transport.Wire.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden byte vectors of every client-session frame type, checked both ways: the record encodes to
 * exactly these bytes, and these bytes decode to an equal record (directly and through a pipeline).
 * The same vectors are listed in docs/wire-protocol.md.
 */
class ClientFrameGoldenTest {
  static final Message SMALL = Message.builder().put("b", true).build();

  static Stream<Arguments> vectors() {
    return Stream.of(
        Arguments.of(
            new ClientFrame.Hello(1, "cli", new byte[] {(byte) 0xAB, (byte) 0xCD}),
            "0000000b 01 01 | 01 | 03 636c69 | 0002 abcd"),
        Arguments.of(new ClientFrame.HelloOk(1, 7, "r7"), "00000008 01 02 | 01 | 0007 | 02 7237"),
        Arguments.of(
            new ClientFrame.SetPredicate(42, Predicate.parse("x = 1")),
            "00000019 01 03 | 000000000000002a | 0001 01 01 01 78 02 0000000000000001"),
        Arguments.of(new ClientFrame.Ok(42), "0000000a 01 04 | 000000000000002a"),
        Arguments.of(
            new ClientFrame.Error(42, ErrorCode.BAD_PREDICATE, "no", 3),
            "00000014 01 05 | 000000000000002a | 0005 | 0002 6e6f | 00000003"),
        Arguments.of(
            new ClientFrame.Send(0, SMALL),
            "00000014 01 06 | 0000000000000000 | 0001 04 01 62 01 00000000"),
        Arguments.of(new ClientFrame.Deliver(SMALL), "0000000c 01 07 | 0001 04 01 62 01 00000000"),
        Arguments.of(
            new ClientFrame.Ping(0x0102030405060708L), "0000000a 01 08 | 0102030405060708"),
        Arguments.of(
            new ClientFrame.Pong(0x0102030405060708L), "0000000a 01 09 | 0102030405060708"),
        Arguments.of(new ClientFrame.Bye(), "00000002 01 0a"),
        Arguments.of(
            new ClientFrame.SendReliable(7, 0x0102030405060708L, 3, SMALL),
            "00000024 01 0b | 0000000000000007 | 0102030405060708 | 0000000000000003"
                + " | 0001 04 01 62 01 00000000"),
        Arguments.of(
            new ClientFrame.Confirm(0x0102030405060708L, 3),
            "00000012 01 0c | 0102030405060708 | 0000000000000003"),
        Arguments.of(
            new ClientFrame.Unreached(-2, 3, new int[] {2, 513}),
            "00000018 01 0d | fffffffffffffffe | 0000000000000003 | 0002 | 0002 0201"),
        Arguments.of(
            new ClientFrame.ConfirmRange(0x0102030405060708L, 3, 258),
            "0000001a 01 0e | 0102030405060708 | 0000000000000003 | 0000000000000102"),
        Arguments.of(
            new ClientFrame.Trace(7, 2000, SMALL),
            "00000018 01 0f | 0000000000000007 | 000007d0 | 0001 04 01 62 01 00000000"),
        Arguments.of(
            new ClientFrame.TraceResult(
                42,
                0x0102030405060708L,
                3,
                new int[] {5},
                new int[0],
                List.of(
                    new TraceReport(
                        3,
                        -1,
                        32,
                        TraceReport.INGRESS | TraceReport.LOCAL | TraceReport.NAMED,
                        List.of(new TraceReport.Copy(5, true, false, new int[] {5})),
                        1,
                        List.of(new TraceReport.Host(1, "h")),
                        List.of()))),
            "00000038 01 10 | 000000000000002a | 0102030405060708 | 0003 | 0001 0005 | 0000"
                + " | 0001 | 0003 ffff 20 0d | 0001 0005 00 00 0001 0005 | 00000001"
                + " | 01 00000001 01 68 | 00"));
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void encodesToTheVector(ClientFrame f, String hex) {
    ByteBuf out = ClientFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, f);
    try {
      assertArrayEquals(bytes(hex), ByteBufUtil.getBytes(out), ByteBufUtil.hexDump(out));
      assertEquals(out.readableBytes(), ClientFrameCodec.encodedLength(f));
    } finally {
      out.release();
    }
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void decodesFromTheVector(ClientFrame f, String hex) {
    ByteBuf in = buf(hex);
    try {
      assertEquals(f, ClientFrameCodec.decode(in));
    } finally {
      in.release();
    }
  }

  @ParameterizedTest
  @MethodSource("vectors")
  void pipelineDecodesAndEncodes(ClientFrame f, String hex) {
    EmbeddedChannel ch = Wire.clientPipeline(1024, new ProtocolErrorCounters());
    ch.writeInbound(buf(hex));
    assertEquals(f, ch.readInbound());
    ch.writeOutbound(f);
    ByteBuf out = ch.readOutbound();
    try {
      assertArrayEquals(bytes(hex), ByteBufUtil.getBytes(out));
    } finally {
      out.release();
    }
    ch.checkException();
    assertEquals(List.of(), List.copyOf(ch.inboundMessages()));
    ch.finishAndReleaseAll();
  }
}
