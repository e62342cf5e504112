package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** Random router-link frames survive encode then decode, alone and through a pipeline. */
class RouterFrameRoundTripTest {
  static final BloomParameters PARAMS = new BloomParameters(128, 3);

  static Object randomFrame(Random r) {
    int router = r.nextInt(65536);
    return switch (r.nextInt(7)) {
      case 0 -> {
        byte[] token = new byte[r.nextInt(64)];
        r.nextBytes(token);
        int protocol = r.nextInt(65536);
        // Revisions before 5 carry no datagram protection.
        UdpProtection protection =
            protocol < 5
                ? UdpProtection.NONE
                : UdpProtection.values()[r.nextInt(UdpProtection.values().length)];
        byte[] nonce = new byte[protection == UdpProtection.NONE ? 0 : DatagramAuth.NONCE_BYTES];
        r.nextBytes(nonce);
        // Revisions from 6 may carry transport endpoints, up to the limits.
        List<TransportEndpoint> endpoints = new ArrayList<>();
        int count =
            protocol < RouterHello.ENDPOINTS_SINCE
                ? 0
                : r.nextInt(TransportEndpoint.MAX_ENDPOINTS + 1);
        for (int i = 0; i < count; i++) {
          byte[] ep = new byte[r.nextInt(4) == 0 ? TransportEndpoint.MAX_ENDPOINT_BYTES : 40];
          r.nextBytes(ep);
          endpoints.add(new TransportEndpoint("t" + i + "-x".repeat(r.nextInt(15)), ep));
        }
        yield new RouterHello(
            protocol,
            router,
            r.nextLong(),
            1 + r.nextInt(RouterHello.MAX_ROUTERS),
            PARAMS,
            r.nextInt(65536),
            token,
            protection,
            nonce,
            endpoints);
      }
      case 1 -> new ControlMessage.Hello(router, r.nextLong(), r.nextLong());
      case 2 -> {
        List<ControlMessage.Route> routes = new ArrayList<>();
        int n = r.nextInt(4) == 0 ? r.nextInt(3000) : r.nextInt(10);
        for (int i = 0; i < n; i++) {
          io.bdrp.routing.OriginSignature sig = null;
          if (r.nextInt(3) == 0) { // signed routes, of any signature length
            byte[] b = new byte[1 + r.nextInt(255)];
            r.nextBytes(b);
            sig = new io.bdrp.routing.OriginSignature(b);
          }
          routes.add(
              new ControlMessage.Route(
                  r.nextInt(65536),
                  r.nextLong(),
                  r.nextInt(),
                  r.nextInt(65536),
                  r.nextBoolean(),
                  sig));
        }
        yield new ControlMessage.RouteUpdate(router, routes);
      }
      case 3 ->
          new ControlMessage.SeqnoRequest(
              router, r.nextInt(65536), r.nextLong(), r.nextInt(), r.nextInt(65536));
      case 4 -> {
        List<long[]> filters = new ArrayList<>();
        int n = r.nextInt(20);
        for (int i = 0; i < n; i++) {
          filters.add(new long[] {r.nextLong() & r.nextLong(), r.nextLong() & r.nextLong()});
        }
        yield new ControlMessage.PredicateAd(
            router,
            r.nextInt(65536),
            r.nextLong(),
            r.nextLong(),
            EncodedPredicate.ofFilters(PARAMS, filters));
      }
      case 5 -> {
        int kind = r.nextInt(4);
        if (kind == 1) {
          yield new ControlMessage.RouteDigest(router, r.nextInt(65537), r.nextLong());
        }
        if (kind == 2) {
          yield new ControlMessage.TableRequest(router);
        }
        if (kind == 3) {
          yield new ControlMessage.PredicateRequest(router, r.nextInt(65536));
        }
        byte[] chain = new byte[1 + r.nextInt(ControlMessage.RouterCert.MAX_CHAIN_BYTES)];
        r.nextBytes(chain);
        yield new ControlMessage.RouterCert(router, r.nextInt(65536), chain);
      }
      default -> new ClientFrame.Ping(r.nextLong());
    };
  }

  @Property(tries = 300, seed = "11")
  void roundTrip(@ForAll long seed) {
    Object f = randomFrame(new Random(seed));
    ByteBuf out = RouterFrameCodec.encode(PooledByteBufAllocator.DEFAULT, f);
    try {
      assertEquals(RouterFrameCodec.encodedLength(f), out.readableBytes());
      assertEquals(f, RouterFrameCodec.decode(out));
    } finally {
      out.release();
    }
  }

  @Property(tries = 20, seed = "12")
  void streamedThroughAPipeline(@ForAll long seed) {
    Random r = new Random(seed);
    Object[] frames = new Object[15];
    ByteBuf stream = Unpooled.buffer();
    for (int i = 0; i < frames.length; i++) {
      frames[i] = randomFrame(r);
      RouterFrameCodec.encode(frames[i], stream);
    }
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new FrameDecoder(),
            new RouterFrameDecoder(1 << 20, PARAMS),
            new RouterFrameEncoder(),
            new ProtocolErrorHandler(new ProtocolErrorCounters()));
    while (stream.isReadable()) {
      ch.writeInbound(
          stream.readRetainedSlice(Math.min(stream.readableBytes(), 1 + r.nextInt(500))));
    }
    stream.release();
    for (Object f : frames) {
      assertEquals(f, ch.readInbound());
    }
    ch.checkException();
    assertNull(ch.readOutbound());
    ch.finishAndReleaseAll();
  }
}
