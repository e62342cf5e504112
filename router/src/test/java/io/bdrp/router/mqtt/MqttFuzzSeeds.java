package io.bdrp.router.mqtt;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Writes the seed corpus of {@link MqttSessionJazzerTest} into {@code
 * src/test/resources/io/bdrp/router/mqtt/MqttSessionJazzerTestInputs/}: valid sessions of both
 * protocols that use every packet a client sends (and the MQTT 5 properties the router reads), and
 * a few that end in bad input. Not a test of the build (its name does not match surefire's
 * patterns); run it by name after changing it, and commit what changed:
 *
 * <pre>mvn -pl router -am test -Dtest=MqttFuzzSeeds -Dsurefire.failIfNoSpecifiedTests=false</pre>
 */
class MqttFuzzSeeds {
  static final Path INPUTS =
      Path.of("src/test/resources/io/bdrp/router/mqtt/MqttSessionJazzerTestInputs");

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void string(ByteArrayOutputStream o, String s) {
    byte[] b = utf8(s);
    o.write(b.length >> 8);
    o.write(b.length);
    o.writeBytes(b);
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  /** A PUBLISH of MQTT 5 with {@code props} (encoded, without their length; under 128 bytes). */
  static byte[] publish5(int flags, String topic, int id, byte[] props, String payload) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    string(v, topic);
    if ((flags & 0x06) != 0) {
      v.write(id >> 8);
      v.write(id);
    }
    v.write(props.length);
    v.writeBytes(props);
    v.writeBytes(utf8(payload));
    return EmbeddedMqtt.packet(0x30 | flags, v.toByteArray());
  }

  /** A SUBSCRIBE of MQTT 5 with a Subscription Identifier {@code subId} (0: none). */
  static byte[] subscribe5(int id, int subId, List<String> filters, int options) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.write(id >> 8);
    v.write(id);
    if (subId > 0) {
      v.writeBytes(new byte[] {2, 0x0B, (byte) subId});
    } else {
      v.write(0);
    }
    for (String f : filters) {
      string(v, f);
      v.write(options);
    }
    return EmbeddedMqtt.packet(0x82, v.toByteArray());
  }

  static byte[] unsubscribe(int level, int id, String filter) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.write(id >> 8);
    v.write(id);
    if (level == 5) {
      v.write(0);
    }
    string(v, filter);
    return EmbeddedMqtt.packet(0xA2, v.toByteArray());
  }

  static byte[] ack(int first, int id) {
    return new byte[] {(byte) first, 2, (byte) (id >> 8), (byte) id};
  }

  static final byte[] PINGREQ = {(byte) 0xC0, 0};

  /** The packets of a session after its CONNECT, MQTT 5: every kind the router reads. */
  static byte[] session5() {
    byte[] userProps = concat(new byte[] {0x26, 0, 1, 'v', 0, 2, '4', '2'});
    byte[] props =
        concat(
            new byte[] {0x02, 0, 0, 0x0E, 0x10}, // Message Expiry Interval 3600
            new byte[] {0x03, 0, 4, 't', 'e', 'x', 't'}, // Content Type
            new byte[] {0x08, 0, 3, 'r', '/', '1'}, // Response Topic
            new byte[] {0x09, 0, 2, 1, 2}, // Correlation Data
            userProps);
    return concat(
        subscribe5(1, 7, List.of("t/#", "s/+/x?mqtt.user.v > 3"), 0x01),
        publish5(0, "t/a", 0, new byte[0], "zero"),
        publish5(0x02, "t/b", 1, props, "one"),
        publish5(0x04, "s/k/x", 2, userProps, "two"),
        ack(0x62, 2), // PUBREL
        ack(0x40, 1), // PUBACK of the router's delivery 1
        publish5(0, "t/alias", 0, new byte[] {0x23, 0, 1}, "set"),
        publish5(0, "", 0, new byte[] {0x23, 0, 1}, "use"),
        subscribe5(3, 0, List.of("t/n"), 0x04 | 0x01), // No Local
        unsubscribe(5, 4, "t/#"),
        PINGREQ,
        new byte[] {(byte) 0xE0, 2, 0x04, 0}); // DISCONNECT with Will Message
  }

  /** The packets of a session after its CONNECT, MQTT 3.1.1. */
  static byte[] session311() {
    return concat(
        EmbeddedMqtt.subscribe(4, 1, "t/+", 2),
        EmbeddedMqtt.publish(4, 0, "t/a", 0, "zero"),
        EmbeddedMqtt.publish(4, 1, "t/b", 1, "one"),
        EmbeddedMqtt.publish(4, 2, "t/c", 2, "two"),
        ack(0x62, 2),
        ack(0x40, 1),
        unsubscribe(4, 3, "t/+"),
        PINGREQ,
        new byte[] {(byte) 0xE0, 0});
  }

  /**
   * {@code packets} as {@link MqttSessionJazzerTest#mqttPackets} reads them, after {@code options}.
   */
  static byte[] records(int options, byte[] packets) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    o.write(options);
    int at = 0;
    while (at < packets.length) {
      int end = EmbeddedMqtt.end(packets, at);
      int header = packets[at + 1] < 0 ? 3 : 2; // the seeds' packets are under 16 KiB
      int length = end - at - header;
      if (length > 255) {
        throw new IllegalArgumentException("a seed packet above 255 bytes of body");
      }
      o.write(packets[at]);
      o.write(length);
      o.write(packets, at + header, length);
      at = end;
    }
    return o.toByteArray();
  }

  @Test
  void write() throws IOException {
    byte[] connect5 = MqttSessionJazzerTest.connect(5, false);
    byte[] connect311 = MqttSessionJazzerTest.connect(4, false);
    byte[] will5 = MqttSessionJazzerTest.connect(5, true);
    byte[] will311 = MqttSessionJazzerTest.connect(4, true);
    write("mqttStream", "session-5", concat(connect5, session5()));
    write("mqttStream", "session-311", concat(connect311, session311()));
    write("mqttStream", "will-5-ends-without-disconnect", concat(will5, session5()));
    write("mqttStream", "will-311", concat(will311, session311()));
    byte[] half = EmbeddedMqtt.publish(5, 1, "t/partial", 9, "a payload cut in two");
    write(
        "mqttStream",
        "partial-publish",
        concat(connect5, java.util.Arrays.copyOf(half, half.length / 2)));
    write("mqttStream", "second-connect", concat(connect311, connect311));
    write("mqttStream", "qos-3", concat(connect5, new byte[] {0x36, 5, 0, 1, 'a', 0, 1}));
    write(
        "mqttStream",
        "length-of-five-bytes",
        concat(connect5, new byte[] {0x30, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 1}));
    write("mqttStream", "ping-before-connect", PINGREQ);
    // A PUBACK of one byte, then a PINGREQ: the decoder must not read on into the PINGREQ.
    write(
        "mqttStream",
        "puback-cut-short",
        concat(
            connect311, new byte[] {0x40, 1, 0}, PINGREQ, EmbeddedMqtt.publish(4, 0, "t", 0, "x")));
    write("mqttPackets", "session-5", records(0, session5()));
    write("mqttPackets", "session-311", records(1, session311()));
    write("mqttPackets", "will-5", records(2, session5()));
    write("mqttPackets", "will-311", records(3, session311()));
  }

  private static void write(String target, String name, byte[] bytes) throws IOException {
    Path dir = INPUTS.resolve(target);
    Files.createDirectories(dir);
    Files.write(dir.resolve(name), bytes);
  }
}
