package io.bdrp.transport;

import static io.bdrp.transport.RouterFrameGoldenTest.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The admin endpoint of a ROUTER_HELLO ({@link AdminEndpoint}): it survives encode and decode
 * beside data transports' endpoints, a hello without it has none, and malformed values (a port of
 * 0, reserved flags, a wrong length) leave the hello itself valid (a router of this revision that
 * does not read admin endpoints must accept it) while {@link AdminEndpoint#of} names what is wrong.
 */
class AdminEndpointTest {
  /** Revision 6, router 7, epoch 5, no UDP, no token, no protection: the part before endpoints. */
  private static final String HEAD =
      "01 20 | 0006 | 0007 | 0000000000000005 | 00000400 | 2000 | 01 | 01 | 0000 | 0000 | 00 | 00";

  private static RouterHello plain() {
    return new RouterHello(
        7, 5, 1024, BloomParameters.DEFAULT, 0, new byte[0], UdpProtection.NONE, new byte[0]);
  }

  private static RouterHello roundTrip(RouterHello h) {
    ByteBuf out = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, h);
    try {
      assertEquals(out.readableBytes(), RouterFrameCodec.encodedLength(h));
      return (RouterHello) RouterFrameCodec.decode(out);
    } finally {
      out.release();
    }
  }

  /** Decodes a hello made of {@code HEAD} and {@code tail}, which must be accepted. */
  private static RouterHello decode(String tail) {
    byte[] body = bytes(HEAD + tail);
    ByteBuf in = Unpooled.wrappedBuffer(bytes(String.format("%08x", body.length)), body);
    try {
      return (RouterHello) RouterFrameCodec.decode(in);
    } finally {
      in.release();
    }
  }

  @Test
  void anAdminEndpointSurvivesEncodeAndDecodeBesideTransportEndpoints() {
    for (AdminEndpoint a :
        List.of(
            new AdminEndpoint(1, false),
            new AdminEndpoint(9400, true),
            new AdminEndpoint(65535, false))) {
      RouterHello h =
          plain()
              .withEndpoints(
                  List.of(new TransportEndpoint("rdma", new byte[] {1, 2, 3}), a.toEndpoint()));
      RouterHello back = roundTrip(h);
      assertEquals(h, back);
      assertEquals(a, AdminEndpoint.of(back));
      assertArrayEquals(new byte[] {1, 2, 3}, back.endpoint("rdma"));
    }
    assertEquals(
        new AdminEndpoint(9400, true),
        AdminEndpoint.of(decode(" | 01 | 05 61646d696e | 0003 24b8 01")));
  }

  @Test
  void aHelloWithoutOneHasNone() {
    assertNull(AdminEndpoint.of(roundTrip(plain())));
    assertNull(AdminEndpoint.of(decode("")));
    RouterHello shmOnly =
        roundTrip(plain().withEndpoints(List.of(new TransportEndpoint("shm", new byte[0]))));
    assertNull(AdminEndpoint.of(shmOnly));
  }

  @Test
  void malformedValuesLeaveTheHelloValidAndAreNamed() {
    String[][] cases = {
      {" | 01 | 05 61646d696e | 0003 0000 00", "admin port 0 outside 1..65535"},
      {" | 01 | 05 61646d696e | 0003 24b8 02", "flags 0x02 set reserved bits"},
      {" | 01 | 05 61646d696e | 0003 24b8 ff", "flags 0xff set reserved bits"},
      {" | 01 | 05 61646d696e | 0002 24b8", "admin endpoint of 2 bytes; it takes 3"},
      {" | 01 | 05 61646d696e | 0004 24b8 0100", "admin endpoint of 4 bytes; it takes 3"},
      {" | 01 | 05 61646d696e | 0000", "admin endpoint of 0 bytes; it takes 3"},
    };
    for (String[] c : cases) {
      RouterHello h = decode(c[0]); // the hello itself is fine
      assertEquals(1, h.endpoints().size());
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> AdminEndpoint.of(h), c[0]);
      assertTrue(
          e.getMessage().contains(c[1]), () -> c[0] + ": \"" + e.getMessage() + "\" lacks " + c[1]);
    }
  }

  @Test
  void onlyAPortInRangeCanBeMade() {
    assertThrows(IllegalArgumentException.class, () -> new AdminEndpoint(0, false));
    assertThrows(IllegalArgumentException.class, () -> new AdminEndpoint(65536, false));
    assertThrows(IllegalArgumentException.class, () -> new AdminEndpoint(-1, true));
  }

  @Test
  void theUrlIsTheSessionsAddressWithTheToldPortAndScheme() throws Exception {
    assertEquals(
        "http://10.0.0.8:9400",
        new AdminEndpoint(9400, false).url(InetAddress.getByName("10.0.0.8")));
    assertEquals(
        "https://127.0.0.1:1", new AdminEndpoint(1, true).url(InetAddress.getByName("127.0.0.1")));
    assertEquals(
        "http://[2001:db8:0:0:0:0:0:1]:9400",
        new AdminEndpoint(9400, false).url(InetAddress.getByName("2001:db8::1")));
    assertEquals(
        "https://[fe80:0:0:0:0:0:0:1%251]:9400",
        new AdminEndpoint(9400, true).url(InetAddress.getByName("fe80::1%1")));
  }
}
