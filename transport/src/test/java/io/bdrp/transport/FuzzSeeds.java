package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Writes the seed corpus of {@code TransportJazzerTest} from the real encoders into {@code
 * src/test/resources/io/bdrp/transport/TransportJazzerTestInputs/}. Not a test of the build (its
 * name does not match surefire's patterns); run it by name after a format change, and commit what
 * changed:
 *
 * <pre>mvn -pl transport -am test -Dtest=FuzzSeeds -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * ({@code -Dtest=FuzzSeeds#writeAllocationSeeds} for the allocation target's seeds alone).
 */
class FuzzSeeds {
  static final Path INPUTS =
      Path.of("src/test/resources/io/bdrp/transport/TransportJazzerTestInputs");

  private static final UnpooledByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;

  @Test
  void write() throws IOException {
    Predicate p =
        Predicate.parse(
            "stock = \"XYZ\" && price > 20 || keywords contains \"Italy\" || exists(a)");
    Message m =
        Message.builder()
            .put("stock", "XYZ")
            .put("price", 20.5)
            .put("n", 7L)
            .put("urgent", true)
            .body("hello".getBytes(StandardCharsets.UTF_8))
            .build();
    // A client session: every client frame, in the order a session sends them.
    List<ClientFrame> session =
        List.of(
            new ClientFrame.Hello(1, "fuzz-client", new byte[] {1, 2, 3}),
            new ClientFrame.HelloOk(1, 7, "router-7"),
            new ClientFrame.SetPredicate(1, p),
            new ClientFrame.Ok(1),
            new ClientFrame.Send(2, m),
            new ClientFrame.Deliver(m),
            new ClientFrame.Error(3, ErrorCode.BAD_PREDICATE.number(), "bad predicate", 4),
            new ClientFrame.SendReliable(6, 0x5eed, 1, m),
            new ClientFrame.Confirm(0x5eed, 1),
            new ClientFrame.Unreached(0x5eed, 2, new int[] {3, 4}),
            new ClientFrame.ConfirmRange(0x5eed, 5, 9),
            new ClientFrame.Trace(7, 2000, m),
            new ClientFrame.TraceResult(
                7,
                0x7ace,
                1,
                new int[] {2, 3},
                new int[] {3},
                List.of(
                    new TraceReport(
                        1,
                        -1,
                        32,
                        TraceReport.INGRESS | TraceReport.LOCAL | TraceReport.NAMED,
                        List.of(new TraceReport.Copy(2, true, false, new int[] {2, 3})),
                        1,
                        List.of(new TraceReport.Host(4, "h")),
                        List.of(new TraceReport.Dropped("no_route", 1, new int[] {5}))))),
            new ClientFrame.Ping(5),
            new ClientFrame.Pong(5),
            new ClientFrame.Bye());
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (ClientFrame f : session) {
      byte[] b = client(f);
      write("clientFrames", f.type().name().toLowerCase(java.util.Locale.ROOT), b);
      all.writeBytes(b);
    }
    write("clientFrames", "session", all.toByteArray());
    Random r = new Random(7);
    for (int i = 0; i < 4; i++) {
      ByteArrayOutputStream s = new ByteArrayOutputStream();
      for (int j = 0; j < 3; j++) {
        s.writeBytes(client(Wire.randomClientFrame(r)));
      }
      write("clientFrames", "random-" + i, s.toByteArray());
    }

    // A router link: the hello, every control message, session frames and DATA.
    BloomParameters bloom = BloomParameters.DEFAULT;
    Encoder encoder = new Encoder(bloom);
    List<Object> link =
        List.of(
            new RouterHello(3, 1790000000000L, 4096, bloom, 7501, "change-me".getBytes())
                .withEndpoints(
                    List.of(
                        new TransportEndpoint("rdma", new byte[93]),
                        new TransportEndpoint(
                            "shm", "\u0001/dev/shm/bdrp-xring-0123456789abcdef".getBytes()))),
            new ControlMessage.Hello(3, 1790000000000L, 1790000000001L),
            new ControlMessage.RouteUpdate(
                3,
                List.of(
                    new ControlMessage.Route(1, 17L, 5, 2, false),
                    new ControlMessage.Route(4, 18L, 6, 65535, true))),
            new ControlMessage.SeqnoRequest(3, 4, 18L, 7, 64),
            new ControlMessage.RouteDigest(3, 2, 0x5eed_0000_0000_0001L),
            new ControlMessage.TableRequest(3),
            new ControlMessage.PredicateAd(3, 3, 1790000000000L, 2, encoder.encode(p)),
            new ControlMessage.PredicateRequest(3, 4),
            new ClientFrame.Error(0, ErrorCode.MALFORMED_FRAME.number(), "bad", 0),
            new ClientFrame.Ping(9),
            new ClientFrame.Bye());
    ByteArrayOutputStream linkBytes = new ByteArrayOutputStream();
    for (Object f : link) {
      byte[] b = router(f);
      String name =
          f instanceof ControlMessage c
              ? RouterFrameCodec.typeOf(c).name()
              : f instanceof RouterHello ? "router_hello" : ((ClientFrame) f).type().name();
      write("routerFrames", name.toLowerCase(java.util.Locale.ROOT), b);
      linkBytes.writeBytes(b);
    }
    byte[] broadcast = data(64, true, 3, 1L, null, m);
    byte[] oneWord = data(63, false, 3, 2L, new long[] {0b1010}, m);
    byte[] threeWords =
        data(1, false, 65535, -1L, new long[] {1, 0, 1L << 63}, Message.builder().build());
    linkBytes.writeBytes(oneWord);
    write("routerFrames", "data", oneWord);
    write("routerFrames", "link", linkBytes.toByteArray());
    write("dataHeader", "broadcast", broadcast);
    write("dataHeader", "one-word", oneWord);
    write("dataHeader", "three-words-empty-message", threeWords);
  }

  /**
   * Seeds of the allocation target: the frames that cost a decoder most per byte, of every
   * router-link type, with their counts divided by 256 (frames of up to 12 KB).
   */
  @Test
  void writeAllocationSeeds() throws IOException {
    for (var e : RouterFrameAllocationTest.adversarialFrames(256).entrySet()) {
      write("routerFrameAllocation", e.getKey(), e.getValue());
    }
  }

  private static byte[] client(ClientFrame f) {
    return bytes(ClientFrameCodec.encode(ALLOC, f));
  }

  private static byte[] router(Object f) {
    return bytes(RouterFrameCodec.encode(ALLOC, f));
  }

  private static byte[] data(
      int hopLimit, boolean broadcast, int source, long id, long[] d, Message m) {
    return bytes(DataHeader.encode(ALLOC, hopLimit, broadcast, source, id, d, m));
  }

  private static byte[] bytes(ByteBuf b) {
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static void write(String target, String name, byte[] bytes) throws IOException {
    Path dir = INPUTS.resolve(target);
    Files.createDirectories(dir);
    Files.write(dir.resolve(name), bytes);
  }
}
