package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A message's bytes read out of the buffers a router holds them in, whatever their kind: an array,
 * direct memory, a slice, several components; and written again from where they were read.
 */
class MessageBytesTest {
  private final List<ByteBuf> held = new ArrayList<>();

  @AfterEach
  void release() {
    held.forEach(ByteBuf::release);
  }

  private <B extends ByteBuf> B held(B b) {
    held.add(b);
    return b;
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** The buffers of each kind holding {@code bytes} at offset 5, between other bytes. */
  private List<ByteBuf> kinds(byte[] bytes) {
    byte[] around = new byte[bytes.length + 12];
    System.arraycopy(bytes, 0, around, 5, bytes.length);
    ByteBuf heap = held(Unpooled.wrappedBuffer(around.clone()));
    ByteBuf direct = held(ByteBufAllocator.DEFAULT.directBuffer(around.length).writeBytes(around));
    ByteBuf sliced =
        held(ByteBufAllocator.DEFAULT
                .directBuffer(around.length + 3)
                .writeZero(3)
                .writeBytes(around))
            .slice(3, around.length);
    CompositeByteBuf composite = held(Unpooled.compositeBuffer());
    int half = around.length / 2;
    composite.addComponent(true, Unpooled.directBuffer().writeBytes(around, 0, half));
    composite.addComponent(
        true, Unpooled.directBuffer().writeBytes(around, half, around.length - half));
    return List.of(heap, direct, sliced, composite);
  }

  @Test
  void copiesAMessageOutOfEveryKindOfBufferAndWritesItFromThere() {
    for (int n : new int[] {0, 1, 7, 8, 9, 200, 4_099}) {
      byte[] message = random(n, n);
      for (ByteBuf b : kinds(message)) {
        MessageBytes m = new MessageBytes().set(b, 5, n);
        byte[] to = new byte[n + 3];
        m.copyTo(to);
        assertArrayEquals(message, java.util.Arrays.copyOf(to, n), n + " bytes from " + b);
        ByteBuf out = held(Unpooled.buffer());
        m.writeTo(out);
        m.writeTo(out);
        byte[] twice = new byte[2 * n];
        System.arraycopy(message, 0, twice, 0, n);
        System.arraycopy(message, 0, twice, n, n);
        assertArrayEquals(twice, ByteBufUtil.getBytes(out), "written twice from " + b);
      }
    }
  }

  @Test
  void aMessageSetAfterAnotherIsWrittenFromItsOwnBytes() {
    byte[] first = random(300, 1);
    byte[] second = random(300, 2);
    ByteBuf a = held(ByteBufAllocator.DEFAULT.directBuffer(300).writeBytes(first));
    ByteBuf b = held(ByteBufAllocator.DEFAULT.directBuffer(300).writeBytes(second));
    MessageBytes m = new MessageBytes().set(a, 0, 300);
    byte[] view = new byte[512];
    m.copyTo(view); // read to be matched: later copies of this message come from view
    ByteBuf out = held(Unpooled.buffer());
    m.writeTo(out);
    assertArrayEquals(first, ByteBufUtil.getBytes(out));

    m.set(b, 0, 300); // the next message, not read into an array
    out.clear();
    m.writeTo(out);
    assertArrayEquals(second, ByteBufUtil.getBytes(out), "not the earlier message's copy");
    out.clear();
    m.writeTo(out);
    assertArrayEquals(second, ByteBufUtil.getBytes(out));
  }
}
