package io.bdrp.router.mqtt.conformance;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * MQTT 3.1.1 and 5 packets as bytes, written by hand so that a test can send what no client library
 * would (reserved bits set, QoS 3, wildcards in a topic name, a SUBSCRIBE without filters), and the
 * router's packets read back field by field. Only what the conformance tests need.
 *
 * <pre>
 *  +----------------------+-----------------------------+---------------------------------+
 *  | type u4 | flags u4   | remaining length, 1-4 bytes | variable header, then payload   |
 *  +----------------------+-----------------------------+---------------------------------+
 * </pre>
 *
 * <p>Stateless.
 */
final class Wire {
  private Wire() {}

  /** The protocol a session speaks. */
  enum Version {
    V311(4),
    V5(5);

    final int level;

    Version(int level) {
      this.level = level;
    }

    boolean v5() {
      return this == V5;
    }
  }

  static final int CONNECT = 1;
  static final int CONNACK = 2;
  static final int PUBLISH = 3;
  static final int PUBACK = 4;
  static final int PUBREC = 5;
  static final int PUBREL = 6;
  static final int PUBCOMP = 7;
  static final int SUBSCRIBE = 8;
  static final int SUBACK = 9;
  static final int UNSUBSCRIBE = 10;
  static final int UNSUBACK = 11;
  static final int PINGREQ = 12;
  static final int PINGRESP = 13;
  static final int DISCONNECT = 14;

  /** A packet: the first byte of its fixed header and the rest. */
  static byte[] packet(int firstByte, byte[] rest) {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(firstByte);
    varint(p, rest.length);
    p.writeBytes(rest);
    return p.toByteArray();
  }

  static void varint(ByteArrayOutputStream o, int n) {
    do {
      int b = n & 0x7F;
      n >>>= 7;
      o.write(n > 0 ? b | 0x80 : b);
    } while (n > 0);
  }

  static void u16(ByteArrayOutputStream o, int n) {
    o.write(n >> 8);
    o.write(n);
  }

  static void string(ByteArrayOutputStream o, String s) {
    bytes(o, s.getBytes(StandardCharsets.UTF_8));
  }

  /** Two bytes of length, then {@code b}: a UTF-8 string's or binary data's encoding. */
  static void bytes(ByteArrayOutputStream o, byte[] b) {
    u16(o, b.length);
    o.writeBytes(b);
  }

  /** MQTT 5 properties: their length, then {@code p} (already encoded). */
  static void properties(ByteArrayOutputStream o, byte[] p) {
    varint(o, p.length);
    o.writeBytes(p);
  }

  /** Concatenates encoded properties. */
  static byte[] props(byte[]... each) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : each) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  /** A property of a one-byte value. */
  static byte[] byteProperty(int id, int value) {
    return new byte[] {(byte) id, (byte) value};
  }

  /** A property of a two-byte integer value (Topic Alias, Receive Maximum, ...). */
  static byte[] u16Property(int id, int value) {
    return new byte[] {(byte) id, (byte) (value >> 8), (byte) value};
  }

  /** A property of a four-byte integer value (Message Expiry Interval, Maximum Packet Size ...). */
  static byte[] u32Property(int id, long value) {
    return new byte[] {
      (byte) id, (byte) (value >> 24), (byte) (value >> 16), (byte) (value >> 8), (byte) value
    };
  }

  /** A property of a Variable Byte Integer value (Subscription Identifier). */
  static byte[] varintProperty(int id, int value) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    o.write(id);
    varint(o, value);
    return o.toByteArray();
  }

  /** A CONNECT, its fields as the test chooses them. */
  static final class Connect {
    Version version = Version.V5;
    String protocolName = "MQTT";
    int level = -1; // -1: the version's
    int flags = 0x02; // clean start
    int keepAlive = 60;
    byte[] properties = new byte[0];
    String clientId;
    byte[] willProperties = new byte[0];
    String willTopic;
    byte[] willPayload;
    String user;
    byte[] password;

    Connect(Version version, String clientId) {
      this.version = version;
      this.clientId = clientId;
    }

    /** Adds a will (its flag, QoS and payload) with the flags it implies. */
    Connect will(String topic, int qos, String payload) {
      this.willTopic = topic;
      this.willPayload = payload.getBytes(StandardCharsets.UTF_8);
      this.flags |= 0x04 | (qos << 3);
      return this;
    }

    Connect flags(int f) {
      this.flags = f;
      return this;
    }

    Connect keepAlive(int seconds) {
      this.keepAlive = seconds;
      return this;
    }

    Connect properties(byte[] p) {
      this.properties = p;
      return this;
    }

    /**
     * The packet. The payload's fields are those set: a will topic and payload when {@link
     * #willTopic} is set, whatever the flags say, a user name and password likewise.
     */
    byte[] bytes() {
      ByteArrayOutputStream v = new ByteArrayOutputStream();
      string(v, protocolName);
      v.write(level >= 0 ? level : version.level);
      v.write(flags);
      u16(v, keepAlive);
      if (version.v5()) {
        Wire.properties(v, properties);
      }
      string(v, clientId);
      if (willTopic != null) {
        if (version.v5()) {
          Wire.properties(v, willProperties);
        }
        string(v, willTopic);
        Wire.bytes(v, willPayload);
      }
      if (user != null) {
        string(v, user);
      }
      if (password != null) {
        Wire.bytes(v, password);
      }
      return packet(0x10, v.toByteArray());
    }
  }

  /** A PUBLISH: {@code flags} are the fixed header's low four bits (DUP, QoS, RETAIN). */
  static byte[] publish(
      Version version, int flags, byte[] topic, int packetId, byte[] properties, byte[] payload) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    bytes(v, topic);
    if ((flags & 0x06) != 0) {
      u16(v, packetId);
    }
    if (version.v5()) {
      properties(v, properties);
    }
    v.writeBytes(payload);
    return packet(0x30 | flags, v.toByteArray());
  }

  static byte[] publish(Version version, int qos, String topic, int packetId, String payload) {
    return publish(
        version,
        qos << 1,
        topic.getBytes(StandardCharsets.UTF_8),
        packetId,
        new byte[0],
        payload.getBytes(StandardCharsets.UTF_8));
  }

  /** A SUBSCRIBE of {@code filters}, each with its options byte in {@code options}. */
  static byte[] subscribe(
      Version version, int packetId, byte[] properties, List<String> filters, int... options) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    u16(v, packetId);
    if (version.v5()) {
      properties(v, properties);
    }
    for (int i = 0; i < filters.size(); i++) {
      string(v, filters.get(i));
      v.write(options[i]);
    }
    return packet(0x82, v.toByteArray());
  }

  static byte[] subscribe(Version version, int packetId, String filter, int qos) {
    return subscribe(version, packetId, new byte[0], List.of(filter), qos);
  }

  static byte[] unsubscribe(Version version, int packetId, List<String> filters) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    u16(v, packetId);
    if (version.v5()) {
      properties(v, new byte[0]);
    }
    for (String f : filters) {
      string(v, f);
    }
    return packet(0xA2, v.toByteArray());
  }

  /** PUBACK, PUBREC, PUBREL or PUBCOMP for {@code packetId}, without a reason code. */
  static byte[] ack(int type, int packetId) {
    return packet(
        (type << 4) | (type == PUBREL ? 0x02 : 0),
        new byte[] {(byte) (packetId >> 8), (byte) packetId});
  }

  static byte[] pingreq() {
    return new byte[] {(byte) 0xC0, 0};
  }

  /** A DISCONNECT: MQTT 5 with {@code reason}, 3.1.1 without (as it has none). */
  static byte[] disconnect(Version version, int reason) {
    return version.v5() ? packet(0xE0, new byte[] {(byte) reason, 0}) : new byte[] {(byte) 0xE0, 0};
  }

  /** A packet as read: its fixed header's first byte and the rest. */
  record Packet(int first, byte[] rest) {
    int type() {
      return first >> 4;
    }

    int flags() {
      return first & 0x0F;
    }

    int u16(int at) {
      return ((rest[at] & 0xFF) << 8) | (rest[at + 1] & 0xFF);
    }
  }

  /** An MQTT 5 property as read: its identifier and value (Long, String, byte[] or String[2]). */
  record Property(int id, Object value) {}

  /** Reads MQTT 5 properties at {@code pos[0]}; leaves {@code pos[0]} after them. */
  static List<Property> readProperties(byte[] b, int[] pos) {
    int length = readVarint(b, pos);
    int end = pos[0] + length;
    List<Property> out = new ArrayList<>();
    while (pos[0] < end) {
      int id = b[pos[0]++] & 0xFF;
      Object value =
          switch (id) {
            case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A -> (long) (b[pos[0]++] & 0xFF);
            case 0x13, 0x21, 0x22, 0x23 -> {
              long x = ((b[pos[0]] & 0xFF) << 8) | (b[pos[0] + 1] & 0xFF);
              pos[0] += 2;
              yield x;
            }
            case 0x02, 0x11, 0x18, 0x27 -> {
              long x = 0;
              for (int k = 0; k < 4; k++) {
                x = (x << 8) | (b[pos[0]++] & 0xFF);
              }
              yield x;
            }
            case 0x0B -> (long) readVarint(b, pos);
            case 0x03, 0x08, 0x12, 0x15, 0x1A, 0x1C, 0x1F -> readString(b, pos);
            case 0x09, 0x16 -> readBinary(b, pos);
            case 0x26 -> new String[] {readString(b, pos), readString(b, pos)};
            default -> throw new AssertionError("unknown property identifier " + id);
          };
      out.add(new Property(id, value));
    }
    if (pos[0] != end) {
      throw new AssertionError("properties overrun their length");
    }
    return out;
  }

  static int readVarint(byte[] b, int[] pos) {
    int n = 0;
    for (int shift = 0; ; shift += 7) {
      int x = b[pos[0]++] & 0xFF;
      n |= (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        return n;
      }
    }
  }

  static String readString(byte[] b, int[] pos) {
    return new String(readBinary(b, pos), StandardCharsets.UTF_8);
  }

  static byte[] readBinary(byte[] b, int[] pos) {
    int n = ((b[pos[0]] & 0xFF) << 8) | (b[pos[0] + 1] & 0xFF);
    byte[] out = java.util.Arrays.copyOfRange(b, pos[0] + 2, pos[0] + 2 + n);
    pos[0] += 2 + n;
    return out;
  }

  /** A PUBLISH the router sent, read field by field. */
  record Publish(int flags, String topic, int packetId, List<Property> properties, String payload) {
    int qos() {
      return (flags >> 1) & 3;
    }

    boolean dup() {
      return (flags & 0x08) != 0;
    }

    /** The values of property {@code id}, in order. */
    List<Object> property(int id) {
      List<Object> out = new ArrayList<>();
      for (Property p : properties) {
        if (p.id() == id) {
          out.add(p.value());
        }
      }
      return out;
    }
  }

  static Publish readPublish(Packet p, Version version) {
    if (p.type() != PUBLISH) {
      throw new AssertionError("expected a PUBLISH, got packet type " + p.type());
    }
    byte[] b = p.rest();
    int[] pos = {0};
    String topic = readString(b, pos);
    int id = 0;
    if ((p.flags() & 0x06) != 0) {
      id = p.u16(pos[0]);
      pos[0] += 2;
    }
    List<Property> props = version.v5() ? readProperties(b, pos) : List.of();
    return new Publish(
        p.flags(),
        topic,
        id,
        props,
        new String(b, pos[0], b.length - pos[0], StandardCharsets.UTF_8));
  }
}
