package io.bdrp.transport;

import static io.bdrp.transport.RouterFrameGoldenTest.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The transport endpoints at the end of a ROUTER_HELLO (revision 6): they survive encode and
 * decode, a hello without them is a hello with none, and a neighbour's hello that breaks a bound
 * (count, name, length, duplicate) is refused with MALFORMED_FRAME and a reason naming the field.
 */
class RouterHelloEndpointsTest {
  /** Revision 6, router 7, epoch 5, no UDP, no token, no protection: the part before endpoints. */
  private static final String HEAD =
      "01 20 | 0006 | 0007 | 0000000000000005 | 00000400 | 2000 | 01 | 01 | 0000 | 0000 | 00 | 00";

  private static RouterHello plain() {
    return new RouterHello(
        7, 5, 1024, BloomParameters.DEFAULT, 0, new byte[0], UdpProtection.NONE, new byte[0]);
  }

  private static Object roundTrip(RouterHello h) {
    ByteBuf out = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, h);
    try {
      assertEquals(out.readableBytes(), RouterFrameCodec.encodedLength(h));
      return RouterFrameCodec.decode(out);
    } finally {
      out.release();
    }
  }

  /** A hello's bytes: the length field, then {@code body} (version and type first). */
  private static String frame(String body) {
    return String.format("%08x", bytes(body).length) + " " + body;
  }

  private static ProtocolException refused(String body) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes(frame(body)));
    try {
      ProtocolException e =
          assertThrows(ProtocolException.class, () -> RouterFrameCodec.decode(in));
      assertEquals(ErrorCode.MALFORMED_FRAME, e.code(), e.getMessage());
      return e;
    } finally {
      in.release();
    }
  }

  @Test
  void endpointsAtTheirBoundsSurviveEncodeAndDecode() {
    List<TransportEndpoint> eps = new ArrayList<>();
    for (int i = 0; i < TransportEndpoint.MAX_ENDPOINTS; i++) {
      byte[] b = new byte[i == 0 ? TransportEndpoint.MAX_ENDPOINT_BYTES : i];
      for (int j = 0; j < b.length; j++) {
        b[j] = (byte) (i * 31 + j);
      }
      String name = i == 0 ? "r" + "-".repeat(TransportEndpoint.MAX_NAME_BYTES - 1) : "t" + i;
      eps.add(new TransportEndpoint(name, b));
    }
    RouterHello h = plain().withEndpoints(eps);
    RouterHello back = (RouterHello) roundTrip(h);
    assertEquals(h, back);
    assertEquals(eps, back.endpoints());
    assertArrayEquals(eps.get(3).endpoint(), back.endpoint("t3"));
    assertNull(back.endpoint("rdma"));
  }

  @Test
  void aHelloThatEndsAfterTheNonceHasNoEndpoints() {
    ByteBuf in = Unpooled.wrappedBuffer(bytes(frame(HEAD)));
    RouterHello h = (RouterHello) RouterFrameCodec.decode(in);
    in.release();
    assertEquals(List.of(), h.endpoints());
    assertEquals(plain(), h);
    // and one without endpoints is written that way: nothing after the nonce
    ByteBuf out = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, plain());
    try {
      assertArrayEquals(bytes(frame(HEAD)), ByteBufUtil.getBytes(out));
    } finally {
      out.release();
    }
  }

  @Test
  void aRevision5HelloCannotCarryEndpointsNorIsItsTailReadAsThem() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new RouterHello(
                    5,
                    7,
                    5,
                    1024,
                    BloomParameters.DEFAULT,
                    0,
                    new byte[0],
                    UdpProtection.NONE,
                    new byte[0],
                    List.of(new TransportEndpoint("rdma", new byte[1]))));
    assertTrue(e.getMessage().contains("revision 6"), e.getMessage());
    ProtocolException p = refused(HEAD.replace("0006", "0005") + " | 01 | 01 61 | 0000");
    assertTrue(p.getMessage().contains("unexpected bytes after the end"), p.getMessage());
  }

  @Test
  void malformedEndpointsAreRefusedNamingTheField() {
    String[][] cases = {
      {" | 00", "endpoint count of 0"},
      {" | 09", "endpoint count 9 exceeds the limit of 8"},
      {" | 02 | 01 61 | 0000", "truncated"},
      {" | 01 | 00 | 0000 | 00", "transport name of 0 bytes"},
      {" | 01 | 21 " + "61".repeat(33) + " | 0000", "transport name of 33 bytes"},
      {" | 01 | 02 4100 | 0000", "other than [a-z0-9-]"},
      {" | 01 | 02 3161 | 0000", "does not start with a letter"},
      {" | 01 | 04 72646d61 | 0101 " + "00".repeat(257), "exceeds the limit of 256"},
      {" | 01 | 04 72646d61 | 0003 0102", "truncated"},
      {" | 02 | 01 61 | 0000 | 01 61 | 0001 ff", "a second endpoint for transport a"},
      {" | 01 | 01 61 | 0000 | 00", "unexpected bytes after the end"},
    };
    for (String[] c : cases) {
      ProtocolException e = refused(HEAD + c[0]);
      assertTrue(
          e.getMessage().contains(c[1]), () -> c[0] + ": \"" + e.getMessage() + "\" lacks " + c[1]);
    }
  }

  @Test
  void anEndpointBeyondItsBoundsCannotBeMade() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new TransportEndpoint("rdma", new byte[TransportEndpoint.MAX_ENDPOINT_BYTES + 1]));
    assertThrows(IllegalArgumentException.class, () -> new TransportEndpoint("RDMA", new byte[0]));
    assertThrows(IllegalArgumentException.class, () -> new TransportEndpoint("", new byte[0]));
    List<TransportEndpoint> nine = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      nine.add(new TransportEndpoint("t" + i, new byte[0]));
    }
    assertThrows(IllegalArgumentException.class, () -> plain().withEndpoints(nine));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            plain()
                .withEndpoints(
                    List.of(
                        new TransportEndpoint("shm", new byte[0]),
                        new TransportEndpoint("shm", new byte[1]))));
  }
}
