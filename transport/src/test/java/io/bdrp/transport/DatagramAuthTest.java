package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Keys, sealing and opening of datagrams, and the replay window. */
class DatagramAuthTest {
  private static final UnpooledByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;

  private static byte[] frame(int n) {
    byte[] f = new byte[n];
    new Random(n).nextBytes(f);
    return f;
  }

  private static byte[] seal(DatagramAuth.Sealer s, byte[] frame) {
    ByteBuf d = s.seal(ALLOC, Unpooled.wrappedBuffer(frame));
    try {
      return ByteBufUtil.getBytes(d);
    } finally {
      d.release();
    }
  }

  /** The frame the opener finds in {@code datagram}, or null. */
  private static byte[] open(DatagramAuth.Opener o, byte[] datagram, UdpProtection p) {
    ByteBuf in = Unpooled.wrappedBuffer(datagram);
    ByteBuf f = o.open(ALLOC, in);
    if (f == null) {
      return null;
    }
    byte[] out = ByteBufUtil.getBytes(f);
    if (p == UdpProtection.ENCRYPT) {
      f.release();
    }
    return out;
  }

  @Test
  void keysDifferByDirectionNoncesAndToken() {
    byte[] a = DatagramAuth.newNonce();
    byte[] b = DatagramAuth.newNonce();
    byte[] t = "secret".getBytes();
    byte[] ab = DatagramAuth.key(t, 1, 2, a, b);
    assertEquals(DatagramAuth.KEY_BYTES, ab.length);
    assertArrayEquals(ab, DatagramAuth.key(t, 1, 2, a, b), "both ends derive the same key");
    assertFalse(Arrays.equals(ab, DatagramAuth.key(t, 2, 1, b, a)), "the other direction");
    assertFalse(Arrays.equals(ab, DatagramAuth.key(new byte[0], 1, 2, a, b)), "another token");
    assertFalse(
        Arrays.equals(ab, DatagramAuth.key(t, 1, 2, a, DatagramAuth.newNonce())), "new session");
  }

  @ParameterizedTest
  @EnumSource(
      value = UdpProtection.class,
      names = {"MAC", "ENCRYPT"})
  void everyAlteredByteIsRefusedAndEachDatagramTakenOnce(UdpProtection p) {
    byte[] key = DatagramAuth.key(new byte[0], 1, 2, new byte[16], new byte[16]);
    DatagramAuth.Sealer sealer = new DatagramAuth.Sealer(p, key);
    DatagramAuth.Opener opener = new DatagramAuth.Opener(p, key);
    byte[] f = frame(61);
    byte[] d = seal(sealer, f);
    assertEquals(f.length + DatagramAuth.overhead(p), d.length);
    for (int i = 0; i < d.length; i++) {
      byte[] altered = d.clone();
      altered[i] ^= 0x40;
      assertNull(open(opener, altered, p), "byte " + i + " altered");
      assertEquals(DatagramAuth.Refusal.MAC, opener.refusal());
    }
    assertArrayEquals(f, open(opener, d, p), "the genuine datagram");
    assertNull(open(opener, d, p), "the same again");
    assertEquals(DatagramAuth.Refusal.REPLAY, opener.refusal());
    DatagramAuth.Opener other =
        new DatagramAuth.Opener(p, DatagramAuth.key(new byte[0], 2, 1, new byte[16], new byte[16]));
    assertNull(open(other, seal(sealer, f), p), "another key");
    assertNull(open(opener, new byte[5], p), "too short");
    assertEquals(DatagramAuth.Refusal.SHORT, opener.refusal());
  }

  @Test
  void macTrailerIsWrittenInPlaceWhenTheBufferHasRoom() {
    byte[] key = new byte[16];
    DatagramAuth.Sealer sealer = new DatagramAuth.Sealer(UdpProtection.MAC, key);
    ByteBuf b = ALLOC.directBuffer(40 + DatagramAuth.MAC_TRAILER_BYTES);
    b.writeBytes(frame(40));
    ByteBuf d = sealer.seal(ALLOC, b);
    try {
      assertTrue(d == b, "the same buffer");
      assertEquals(56, d.readableBytes());
      assertEquals(1, d.getLong(40), "the first sequence number");
      assertEquals(SipHash.hash(0, 0, d, 0, 48), d.getLongLE(48), "the tag");
    } finally {
      d.release();
    }
  }

  @Test
  void replayWindowTakesEachNumberOnceWithin64OfTheNewest() {
    DatagramAuth.ReplayWindow w = new DatagramAuth.ReplayWindow();
    assertFalse(w.accept(0), "0 is never sent");
    assertTrue(w.accept(5));
    assertTrue(w.accept(3), "late but new");
    assertFalse(w.accept(3), "again");
    assertTrue(w.accept(100));
    assertTrue(w.accept(37), "63 behind");
    assertFalse(w.accept(36), "64 behind");
    assertFalse(w.accept(5), "older than the window");
    assertTrue(w.accept(1000));
    assertFalse(w.accept(100), "slid out");
    assertEquals(1000, w.highest());
    assertTrue(w.accept(DatagramAuth.KERNEL_DOMAIN | 1001), "the domain bit is not part of it");
  }

  @Test
  void kernelAndJvmSequenceNumbersHaveWindowsOfTheirOwn() {
    byte[] key = new byte[16];
    DatagramAuth.Opener opener = new DatagramAuth.Opener(UdpProtection.MAC, key);
    byte[] f = frame(30);
    for (long seq :
        new long[] {7, DatagramAuth.KERNEL_DOMAIN | 7, DatagramAuth.KERNEL_DOMAIN | 2}) {
      ByteBuf d = Unpooled.buffer().writeBytes(f).writeLong(seq);
      d.writeLongLE(SipHash.hash(0, 0, d, 0, d.readableBytes()));
      assertNotNull(opener.open(ALLOC, d), "sequence number " + Long.toHexString(seq));
    }
    assertEquals(7, opener.highest(false));
    assertEquals(DatagramAuth.KERNEL_DOMAIN | 7, opener.highest(true));
  }
}
