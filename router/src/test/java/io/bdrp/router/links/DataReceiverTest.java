package io.bdrp.router.links;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.bdrp.encoding.Message;
import io.bdrp.router.EmbeddedCore;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.routing.DataPlane;
import io.bdrp.transport.DataHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * Which DATA frames the receiver hands the data plane: a broadcast marked for local delivery only
 * ({@link DataHeader#FLAG_LOCAL}) only from a UDP datagram while the kernel fast path is loaded
 * (whose program drops one from the wire); anywhere else it is malformed.
 */
class DataReceiverTest {
  private final RouterConfig config =
      RouterConfig.parse(
          "router: 0\nneighbours: [{router: 1, address: '127.0.0.1:7401', transport: udp}]\n",
          "test");
  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final RouterCore core = EmbeddedCore.of(config, channel);
  private final DataPlane<MessageBytes> plane =
      new DataPlane<>(
          core.node(),
          new DataPlane.Output<>() {
            @Override
            public boolean send(
                int neighbour,
                int hopLimit,
                int source,
                long messageId,
                long[] d,
                MessageBytes message) {
              return true;
            }

            @Override
            public boolean deliver(int host, long messageId, MessageBytes message) {
              return true;
            }

            @Override
            public Message decode(MessageBytes message) {
              return null;
            }
          },
          System::nanoTime);
  private final Link link =
      new Link(
          config.neighbours().get(0),
          core.metrics(),
          1 << 20,
          config.limits().linkHighWaterBytes(),
          Runnable::run);

  private static ByteBuf localOnlyBroadcast() {
    ByteBuf b =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT,
            5,
            true,
            1,
            42,
            null,
            Message.builder().put("a", 1).build());
    b.setByte(DataHeader.FLAGS_OFFSET, DataHeader.FLAG_BROADCAST | DataHeader.FLAG_LOCAL);
    return b;
  }

  /** Receives the frame over {@code transport}; returns (malformed, received by the plane). */
  private long[] receive(boolean kernel, String transport) {
    DataReceiver r = new DataReceiver(0, core.metrics(), plane, null, () -> kernel);
    long malformed = core.metrics().malformedData(transport).get();
    long received = plane.received();
    ByteBuf frame = localOnlyBroadcast();
    try {
      r.receive(link, frame, transport);
    } finally {
      frame.release();
    }
    return new long[] {
      core.metrics().malformedData(transport).get() - malformed, plane.received() - received
    };
  }

  @Test
  void theLocalDeliveryFlagIsTakenOnlyFromUdpWithTheKernelFastPathLoaded() {
    assertArrayEquals(new long[] {0, 1}, receive(true, "udp"), "from its own kernel: taken");
    assertArrayEquals(
        new long[] {1, 0}, receive(false, "udp"), "no kernel program vouches for it: malformed");
    assertArrayEquals(new long[] {1, 0}, receive(true, "tcp"), "the kernel never sees TCP");
    assertArrayEquals(new long[] {1, 0}, receive(true, "shm"), "nor a ring");
    channel.finishAndReleaseAll();
  }
}
