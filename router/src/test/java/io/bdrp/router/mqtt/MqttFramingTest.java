package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** {@link MqttFraming} on an {@link EmbeddedChannel}, with the bytes of real packets. */
class MqttFramingTest {
  private static ByteBuf bytes(int... b) {
    byte[] a = new byte[b.length];
    for (int i = 0; i < b.length; i++) {
      a[i] = (byte) b[i];
    }
    return Unpooled.wrappedBuffer(a);
  }

  private static byte[] next(EmbeddedChannel ch) {
    ByteBuf b = ch.readInbound();
    if (b == null) {
      return null;
    }
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** The framing, and its count of decoded messages in place of the decoder. */
  private static EmbeddedChannel framing(int maxPacketBytes, io.bdrp.transport.InboundBudget b) {
    MqttFraming f = new MqttFraming(maxPacketBytes, b);
    return new EmbeddedChannel(f, f.decodedCount);
  }

  @Test
  void aPacketWhoseFieldsRunPastItsEndIsMalformed() {
    MqttFraming f = new MqttFraming(1024, null);
    EmbeddedChannel ch =
        new EmbeddedChannel(f, new io.netty.handler.codec.mqtt.MqttDecoder(), f.decodedCount);
    // A PUBACK of one byte (its packet identifier takes two), then a PINGREQ: the decoder would
    // read the PINGREQ's first byte as the PUBACK's.
    MqttFault f1 =
        assertThrows(MqttFault.class, () -> ch.writeInbound(bytes(0x40, 0x01, 0x00, 0xC0, 0x00)));
    assertEquals(MqttFault.MALFORMED, f1.reasonCode);
    assertNull(next(ch), "nothing passed on");
    ch.finishAndReleaseAll();
    // The same PUBACK alone in its read: malformed when the read ends.
    MqttFraming g = new MqttFraming(1024, null);
    EmbeddedChannel alone =
        new EmbeddedChannel(g, new io.netty.handler.codec.mqtt.MqttDecoder(), g.decodedCount);
    MqttFault f2 = assertThrows(MqttFault.class, () -> alone.writeInbound(bytes(0x40, 0x01, 0x00)));
    assertEquals(MqttFault.MALFORMED, f2.reasonCode);
    alone.finishAndReleaseAll();
  }

  @Test
  void reservedSubscriptionOptionBitsAreMalformedByTheConnectsProtocol() {
    // CONNECT of level 5 (name "MQTT"), then SUBSCRIBE id 1, no properties, filter "a", options.
    int[] connect5 = {0x10, 11, 0, 4, 'M', 'Q', 'T', 'T', 5, 2, 0, 60, 0};
    EmbeddedChannel v5 = framing(1024, null);
    v5.writeInbound(bytes(connect5));
    next(v5);
    v5.writeInbound(bytes(0x82, 7, 0, 1, 0, 0, 1, 'a', 0x2D)); // bits 0-5: No Local and so on
    assertArrayEquals(new byte[] {(byte) 0x82, 7, 0, 1, 0, 0, 1, 'a', 0x2D}, next(v5));
    MqttFault f =
        assertThrows(
            MqttFault.class,
            () -> v5.writeInbound(bytes(0x82, 7, 0, 2, 0, 0, 1, 'a', 0x41))); // bit 6
    assertEquals(MqttFault.MALFORMED, f.reasonCode);
    v5.finishAndReleaseAll();
    // In 3.1.1 (level 4, no properties) bits 2-7 are reserved: No Local's bit 2 is one.
    int[] connect4 = {0x10, 12, 0, 4, 'M', 'Q', 'T', 'T', 4, 2, 0, 60, 0, 0};
    EmbeddedChannel v4 = framing(1024, null);
    v4.writeInbound(bytes(connect4));
    next(v4);
    v4.writeInbound(bytes(0x82, 6, 0, 1, 0, 1, 'a', 0x01, 0xC0, 0x00));
    assertArrayEquals(new byte[] {(byte) 0x82, 6, 0, 1, 0, 1, 'a', 1}, next(v4));
    assertArrayEquals(new byte[] {(byte) 0xC0, 0}, next(v4));
    assertThrows(MqttFault.class, () -> v4.writeInbound(bytes(0x82, 6, 0, 1, 0, 1, 'a', 0x05)));
    v4.finishAndReleaseAll();
  }

  @Test
  void packetsArePassedOnWholeWhateverTheReadsCutThem() {
    EmbeddedChannel ch = framing(1024, null);
    // PINGREQ, then a PUBLISH of topic "a" and payload "hi" cut after its first length byte.
    ch.writeInbound(bytes(0xC0, 0x00, 0x30));
    assertArrayEquals(new byte[] {(byte) 0xC0, 0}, next(ch));
    assertNull(next(ch), "the PUBLISH's length has not arrived");
    ch.writeInbound(bytes(0x05, 0x00, 0x01, 'a'));
    assertNull(next(ch), "its body has not all arrived");
    ch.writeInbound(bytes('h', 'i'));
    assertArrayEquals(new byte[] {0x30, 5, 0, 1, 'a', 'h', 'i'}, next(ch));
    assertFalse(ch.finish());
  }

  @Test
  void aPacketAboveTheBoundIsRefusedFromItsFixedHeader() {
    EmbeddedChannel ch = framing(128, null);
    // 2 bytes of fixed header and 127 of body: 129 in all, one above the bound.
    MqttFault f = assertThrows(MqttFault.class, () -> ch.writeInbound(bytes(0x30, 0x7F)));
    assertEquals(MqttFault.PACKET_TOO_LARGE, f.reasonCode);
    assertEquals("too_large", f.counted);
    ch.writeInbound(bytes(0xC0, 0x00));
    assertNull(next(ch), "nothing after a fault");
    ch.finish();
  }

  @Test
  void aRemainingLengthOfMoreThanFourBytesIsMalformed() {
    EmbeddedChannel ch = framing(1 << 30, null);
    MqttFault f =
        assertThrows(
            MqttFault.class, () -> ch.writeInbound(bytes(0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01)));
    assertEquals(MqttFault.MALFORMED, f.reasonCode);
    ch.finish();
  }

  @Test
  void aRemainingLengthInMoreBytesThanItNeedsIsMalformed() {
    EmbeddedChannel ch = framing(1 << 30, null);
    ch.writeInbound(bytes(0xC0, 0x00, 0x30, 0xFF, 0x7F)); // 0 and 16,383: each in its fewest
    assertArrayEquals(new byte[] {(byte) 0xC0, 0}, next(ch));
    EmbeddedChannel nonMinimal = framing(1 << 30, null);
    MqttFault f =
        assertThrows(MqttFault.class, () -> nonMinimal.writeInbound(bytes(0xC0, 0x80, 0x00)));
    assertEquals(MqttFault.MALFORMED, f.reasonCode, "0 in two bytes");
    ch.finishAndReleaseAll();
    nonMinimal.finishAndReleaseAll();
  }

  @Test
  void partialPacketsOfAPortHoldAtMostItsBudgetTogether() {
    io.bdrp.transport.InboundBudget budget = new io.bdrp.transport.InboundBudget(100);
    EmbeddedChannel a = framing(1024, budget);
    EmbeddedChannel b = framing(1024, budget);
    a.writeInbound(bytes(0x30, 80 - 2)); // a PUBLISH of 80 bytes begun: 80 reserved
    assertEquals(80, budget.reservedBytes());
    MqttFault f = assertThrows(MqttFault.class, () -> b.writeInbound(bytes(0x30, 50 - 2)));
    assertEquals(MqttFault.QUOTA_EXCEEDED, f.reasonCode, "50 more do not fit");
    a.close(); // its reservation goes with the connection
    assertEquals(0, budget.reservedBytes());
    b.finish();
  }
}
