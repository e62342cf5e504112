package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bdrp.router.config.RouterLimits;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzz targets (Jazzer) for an MQTT connection: the bytes a client sends go through
 * the port's real pipeline ({@link MqttFraming}, Netty's {@code MqttDecoder}, {@link MqttSession})
 * on an {@link EmbeddedChannel}, with a real router core behind it ({@link EmbeddedMqtt}). Without
 * {@code JAZZER_FUZZ} each runs as a plain JUnit test over its committed corpus in {@code
 * src/test/resources/io/bdrp/router/mqtt/MqttSessionJazzerTestInputs/<target>/} (seeds written by
 * {@code MqttFuzzSeeds}); {@code scripts/fuzz} runs them in fuzzing mode (docs/fuzzing.md).
 *
 * <ul>
 *   <li>{@link #mqttStream}: the input is the connection's byte stream from its first byte (the
 *       CONNECT included), cut into three reads;
 *   <li>{@link #mqttPackets}: structure-aware. The input's first byte chooses a valid CONNECT
 *       (protocol 3.1.1 or 5, with or without a will), which the harness writes; the rest is a
 *       sequence of packets, each a first byte, a length byte L and L bytes of body, which the
 *       harness frames with a correct remaining length, so that mutations reach past the framing
 *       into the decoder and the session.
 * </ul>
 *
 * <p>For every input: no exception escapes the pipeline and no session logs a failure other than
 * bad input; the port's partial packets never hold more than {@code limits.inboundBufferBytes}, nor
 * the router's unflushed output to the connection more than its high water mark and a packet, and
 * everything held is given back when the connection closes; the connection ends either still open
 * and answering a PINGREQ (once its last partial packet, if any, is completed) or closed by the
 * client's DISCONNECT or with a counted reason (malformed input, a refused CONNECT, a closed
 * connection's counter); and two other sessions of the router are still served.
 */
class MqttSessionJazzerTest {

  @FuzzTest(maxDuration = "")
  void mqttStream(byte[] input) {
    run(input);
  }

  @FuzzTest(maxDuration = "")
  void mqttPackets(byte[] input) {
    run(packets(input));
  }

  /** The byte stream of {@link #mqttPackets}'s input: the chosen CONNECT, then its packets. */
  static byte[] packets(byte[] input) {
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    int options = input.length > 0 ? input[0] & 0xFF : 0;
    int level = (options & 1) == 0 ? 5 : 4;
    s.writeBytes(connect(level, (options & 2) != 0));
    int at = 1;
    while (at < input.length) {
      int first = input[at++] & 0xFF;
      int length = at < input.length ? input[at++] & 0xFF : 0;
      length = Math.min(length, input.length - at);
      s.writeBytes(EmbeddedMqtt.packet(first, Arrays.copyOfRange(input, at, at + length)));
      at += length;
    }
    return s.toByteArray();
  }

  /** A CONNECT, clean start, keep-alive 60 s, client "fuzzed", maybe with a will to "will/w". */
  static byte[] connect(int level, boolean will) {
    if (!will) {
      return EmbeddedMqtt.connect(level, "fuzzed");
    }
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', (byte) level, 0x02 | 0x04 | 0x08, 0, 60});
    if (level == 5) {
      v.write(0);
    }
    v.writeBytes(new byte[] {0, 6, 'f', 'u', 'z', 'z', 'e', 'd'});
    if (level == 5) {
      v.writeBytes(new byte[] {5, 0x18, 0, 0, 0, 0}); // will properties: Will Delay Interval 0
    }
    v.writeBytes(new byte[] {0, 6, 'w', 'i', 'l', 'l', '/', 'w', 0, 1, 'x'});
    return EmbeddedMqtt.packet(0x10, v.toByteArray());
  }

  static void run(byte[] stream) {
    try (EmbeddedMqtt r = new EmbeddedMqtt()) {
      RouterLimits limits = r.config.limits();
      long closuresBefore = r.closures();
      EmbeddedChannel c = r.connection();
      EmbeddedMqtt.Spy spy = r.spy(c);
      int at = 0;
      for (int cut : new int[] {stream.length / 3, 2 * stream.length / 3, stream.length}) {
        r.write(c, Arrays.copyOfRange(stream, at, cut));
        at = cut;
        bounded(r, c, limits);
      }
      r.packets(c);
      if (c.isOpen()) {
        ByteArrayOutputStream end = new ByteArrayOutputStream();
        end.writeBytes(completion(stream));
        end.writeBytes(new byte[] {(byte) 0xC0, 0}); // PINGREQ
        r.write(c, end.toByteArray());
        bounded(r, c, limits);
        List<byte[]> out = r.packets(c);
        if (c.isOpen()) {
          // A PINGRESP, in whatever place among the answers to the packets before it (a SUBACK
          // waits for its predicate change, a PINGRESP does not).
          assertTrue(
              out.stream().anyMatch(p -> Arrays.equals(new byte[] {(byte) 0xD0, 0}, p)),
              "an open session answers the PINGREQ");
        }
      }
      if (!c.isOpen()) {
        assertTrue(
            spy.disconnect || r.closures() > closuresBefore,
            "closed by the client's DISCONNECT or with a counted reason");
      }
      assertEquals(List.of(), r.warnings(), "no session failed other than for bad input");
      r.bystandersServed(stream);
      c.finishAndReleaseAll();
      r.settle();
      assertEquals(0, r.partialBytes(), "a closed connection holds nothing on the port's budget");
    }
  }

  /** What the router may hold for the connection now is bounded. */
  private static void bounded(EmbeddedMqtt r, EmbeddedChannel c, RouterLimits limits) {
    long partial = r.partialBytes();
    assertTrue(partial <= limits.inboundBufferBytes(), "partial packets: " + partial);
    assertTrue(partial <= limits.maxFrameBytes(), "one partial packet: " + partial);
    long pending = EmbeddedMqtt.pendingOutput(c);
    assertTrue(
        pending <= (long) limits.hostHighWaterBytes() + limits.maxFrameBytes(),
        "output held: " + pending);
  }

  /**
   * The bytes that complete the last packet of {@code stream} if it ends within one, as the port's
   * framing cuts it (zeros: a fixed header's unfinished length field is closed with a 0 byte, then
   * the body is filled); none if it ends between packets.
   */
  static byte[] completion(byte[] stream) {
    ByteArrayOutputStream extra = new ByteArrayOutputStream();
    byte[] s = stream;
    for (byte[] more = step(s); more.length > 0; more = step(s)) {
      extra.writeBytes(more);
      s = java.nio.ByteBuffer.allocate(s.length + more.length).put(s).put(more).array();
    }
    return extra.toByteArray();
  }

  private static byte[] step(byte[] stream) {
    int at = 0;
    while (at < stream.length) {
      int end = EmbeddedMqtt.end(stream, at);
      if (end < 0) {
        return new byte[] {0}; // (a length field of more than four bytes ended the session)
      }
      if (end > stream.length) {
        return new byte[end - stream.length];
      }
      at = end;
    }
    return new byte[0];
  }
}
