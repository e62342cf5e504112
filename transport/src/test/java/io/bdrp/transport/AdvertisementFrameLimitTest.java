package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.ControlMessage.AdvertisementFrames;
import io.bdrp.routing.Face;
import io.bdrp.routing.PredicateTable;
import io.bdrp.routing.RoutingConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * The routing layer's sizes of advertisement frames are the codec's, and what a {@link
 * PredicateTable} sends a neighbour decodes under the neighbour's frame limit.
 */
class AdvertisementFrameLimitTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 3);

  private static EncodedPredicate filters(Random r, int n) {
    List<long[]> f = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      f.add(new long[] {r.nextLong() & r.nextLong(), r.nextLong() & r.nextLong() & r.nextLong()});
    }
    return EncodedPredicate.ofFilters(PARAMS, f);
  }

  private static ControlMessage.Advertisement advertisement(Random r, int sender) {
    int origin = r.nextInt(65536);
    long epoch = r.nextLong();
    long seq = 1 + r.nextInt(1000);
    // A third are signed, with signatures of any length (a signed one alone goes as a batch).
    io.bdrp.routing.OriginSignature sig = null;
    if (r.nextInt(3) == 0) {
      byte[] s = new byte[1 + r.nextInt(255)];
      r.nextBytes(s);
      sig = new io.bdrp.routing.OriginSignature(s);
    }
    return r.nextBoolean()
        ? new ControlMessage.PredicateAd(sender, origin, epoch, seq, filters(r, r.nextInt(30)), sig)
        : new ControlMessage.PredicateDelta(
            sender, origin, epoch, seq - 1, seq, filters(r, r.nextInt(10)), filters(r, 5), sig);
  }

  /**
   * {@link AdvertisementFrames} gives each advertisement frame's length field exactly as the codec
   * writes it: batches are cut by these numbers, so a disagreement would let a frame exceed the
   * limit.
   */
  @Property(tries = 200, seed = "21")
  void theRoutingLayersFrameSizesAreTheCodecs(@ForAll long seed) {
    Random r = new Random(seed);
    int sender = r.nextInt(65536);
    ControlMessage m;
    if (r.nextInt(3) == 0) {
      List<ControlMessage.Advertisement> ads = new ArrayList<>();
      for (int i = r.nextInt(10); i >= 0; i--) {
        ads.add(advertisement(r, sender));
      }
      m = new ControlMessage.PredicateBatch(sender, ads);
    } else {
      m = advertisement(r, sender);
    }
    ByteBuf out = Unpooled.buffer();
    try {
      RouterFrameCodec.encode(m, out);
      assertEquals(out.getUnsignedInt(0), AdvertisementFrames.lengthField(m), m::toString);
      assertEquals(
          RouterFrameCodec.encodedLength(m) - Frames.LENGTH_BYTES,
          AdvertisementFrames.lengthField(m));
    } finally {
      out.release();
    }
  }

  /**
   * Everything a table sends a neighbour, a cold start's burst included, encodes and decodes under
   * the frame limit the table was given, and an aggregate beyond it is refused rather than sent.
   * Guards against batches of 64 advertisements whatever their size, which a neighbour refused as
   * {@code frame_too_large}, taking the link down.
   */
  @Test
  void whatATableSendsDecodesUnderTheNeighboursFrameLimit() {
    int limit = 2048;
    RoutingConfig config =
        RoutingConfig.builder()
            .maxRouters(512)
            .updatePacingMs(100)
            .maxControlFrameBytes(limit)
            .build();
    long[] now = {0};
    List<Object> decoded = new ArrayList<>();
    Face neighbour =
        new Face() {
          @Override
          public int neighbour() {
            return 1;
          }

          @Override
          public void send(ControlMessage m) {
            ByteBuf out = Unpooled.buffer();
            try {
              RouterFrameCodec.encode(m, out);
              // Throws ProtocolException(FRAME_TOO_LARGE) beyond the limit, as the peer's decoder.
              decoded.add(RouterFrameCodec.decode(out, limit, PARAMS));
            } finally {
              out.release();
            }
          }
        };
    PredicateTable table = new PredicateTable(0, 5, PARAMS, config, () -> now[0], () -> {});
    table.adjacencyUp(neighbour);
    Random r = new Random(3);
    now[0] = 1_000;
    for (int origin = 2; origin < 300; origin++) {
      table.receive(new ControlMessage.PredicateAd(2, origin, 9, 1, filters(r, 1 + r.nextInt(40))));
    }
    now[0] += config.updatePacingMs();
    table.tick();
    int ads = 0;
    for (Object f : decoded) {
      ads +=
          switch (f) {
            case ControlMessage.PredicateBatch b -> b.ads().size();
            case ControlMessage.Advertisement a -> 1;
            default -> 0;
          };
    }
    assertEquals(1 + 298, ads, "this router's own and every other origin's, in " + decoded.size());
    int frames = decoded.size();
    PredicateTable.Refusal refused = table.setOwn(filters(r, 400));
    assertNotNull(refused, "400 filters do not fit " + limit + " bytes");
    assertEquals(PredicateTable.Refusal.Reason.FRAME_TOO_LARGE, refused.reason());
    assertEquals(frames, decoded.size(), "nothing sent");
    assertTrue(table.setOwn(filters(r, 20)) == null, "a fitting aggregate still goes");
    now[0] += config.updatePacingMs();
    table.tick();
    assertEquals(frames + 1, decoded.size());
  }
}
