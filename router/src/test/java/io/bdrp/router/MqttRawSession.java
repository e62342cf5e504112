package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An MQTT 5 session on a plain socket, for tests that need packets a library client will not write:
 * its CONNACK's properties read, PUBLISHes with raw properties, the router's replies.
 */
final class MqttRawSession implements AutoCloseable {
  final Socket socket;
  final DataInputStream in;

  /** The CONNACK's integer properties by identifier (MQTT 5 §3.2.2.3). */
  final Map<Integer, Long> connack = new HashMap<>();

  MqttRawSession(InetSocketAddress at, String id) throws IOException {
    socket = new Socket("127.0.0.1", at.getPort());
    socket.setSoTimeout(20_000);
    in = new DataInputStream(socket.getInputStream());
    socket.getOutputStream().write(MqttBadInputTest.connect5(id, 60));
    MqttBadInputTest.Packet ack = MqttBadInputTest.read(in);
    assertEquals(0x20, ack.first(), "CONNACK");
    assertEquals(0, ack.rest()[1], "accepted");
    readProperties(ack.rest(), 2);
  }

  private void readProperties(byte[] b, int at) {
    int[] pos = {at};
    int end = varint(b, pos);
    end += pos[0];
    int i = pos[0];
    while (i < end) {
      int id = b[i++] & 0xFF;
      switch (id) {
        case 0x24, 0x25, 0x28, 0x29, 0x2A -> connack.put(id, (long) (b[i++] & 0xFF));
        case 0x13, 0x21, 0x22 -> {
          connack.put(id, (long) (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF)));
          i += 2;
        }
        case 0x11, 0x27 -> {
          long v = 0;
          for (int k = 0; k < 4; k++) {
            v = (v << 8) | (b[i++] & 0xFF);
          }
          connack.put(id, v);
        }
        case 0x12, 0x1A, 0x1C, 0x1F -> i += 2 + (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF));
        case 0x26 -> {
          i += 2 + (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF));
          i += 2 + (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF));
        }
        default -> throw new AssertionError("CONNACK property " + id + " not known to the test");
      }
    }
  }

  private static int varint(byte[] b, int[] pos) {
    int n = 0;
    for (int shift = 0; ; shift += 7) {
      int x = b[pos[0]++] & 0xFF;
      n |= (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        return n;
      }
    }
  }

  private static void writeVarint(ByteArrayOutputStream o, int n) {
    do {
      int b = n & 0x7F;
      n >>>= 7;
      o.write(n > 0 ? b | 0x80 : b);
    } while (n > 0);
  }

  /**
   * A PUBLISH of {@code payload} to {@code topic} at QoS 1 with packet {@code id} and {@code
   * properties} (MQTT 5 encoding, without their length).
   */
  void publish(String topic, int id, byte[] properties, String payload) throws IOException {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    byte[] t = topic.getBytes(StandardCharsets.UTF_8);
    v.write(t.length >> 8);
    v.write(t.length);
    v.writeBytes(t);
    v.write(id >> 8);
    v.write(id);
    writeVarint(v, properties.length);
    v.writeBytes(properties);
    v.writeBytes(payload.getBytes(StandardCharsets.UTF_8));
    socket.getOutputStream().write(MqttBadInputTest.packet(0x32, v.toByteArray()));
  }

  /**
   * A SUBSCRIBE with packet {@code id} of {@code filter} at QoS 1 with {@code properties} (MQTT 5
   * encoding, without their length).
   */
  void subscribe(String filter, int id, byte[] properties) throws IOException {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.write(id >> 8);
    v.write(id);
    writeVarint(v, properties.length);
    v.writeBytes(properties);
    byte[] f = filter.getBytes(StandardCharsets.UTF_8);
    v.write(f.length >> 8);
    v.write(f.length);
    v.writeBytes(f);
    v.write(1); // QoS 1
    socket.getOutputStream().write(MqttBadInputTest.packet(0x82, v.toByteArray()));
  }

  /** A Subscription Identifier property (0x0B) of {@code value}. */
  static byte[] subscriptionId(int value) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    o.write(0x0B);
    writeVarint(o, value);
    return o.toByteArray();
  }

  /** A Topic Alias property (0x23). */
  static byte[] alias(int alias) {
    return new byte[] {0x23, (byte) (alias >> 8), (byte) alias};
  }

  /** A PUBLISH the router sent: topic, subscription identifiers in their order, payload. */
  record Delivery(String topic, List<Integer> subscriptionIds, String payload) {}

  /** Reads a QoS 0 PUBLISH. */
  Delivery delivery() throws IOException {
    MqttBadInputTest.Packet p = MqttBadInputTest.read(in);
    assertEquals(0x30, p.first(), "PUBLISH at QoS 0");
    byte[] b = p.rest();
    int n = u16(b, 0);
    String topic = new String(b, 2, n, StandardCharsets.UTF_8);
    int[] pos = {2 + n};
    int end = varint(b, pos);
    end += pos[0];
    List<Integer> ids = new ArrayList<>();
    int i = pos[0];
    while (i < end) {
      int id = b[i++] & 0xFF;
      switch (id) {
        case 0x0B -> {
          pos[0] = i;
          ids.add(varint(b, pos));
          i = pos[0];
        }
        case 0x01 -> i++;
        case 0x02 -> i += 4;
        case 0x03, 0x08, 0x09 -> i += 2 + u16(b, i);
        case 0x26 -> {
          i += 2 + u16(b, i);
          i += 2 + u16(b, i);
        }
        default -> throw new AssertionError("PUBLISH property " + id + " not known to the test");
      }
    }
    return new Delivery(topic, ids, new String(b, end, b.length - end, StandardCharsets.UTF_8));
  }

  /** Reads a SUBACK for packet {@code id}; returns its first reason code. */
  int suback(int id) throws IOException {
    MqttBadInputTest.Packet p = MqttBadInputTest.read(in);
    assertEquals(0x90, p.first(), "SUBACK");
    assertEquals(id, u16(p.rest(), 0), "packet id");
    int[] pos = {2};
    int n = varint(p.rest(), pos);
    return p.rest()[pos[0] + n] & 0xFF;
  }

  private static int u16(byte[] b, int at) {
    return ((b[at] & 0xFF) << 8) | (b[at + 1] & 0xFF);
  }

  /** Reads a PUBACK for packet {@code id}; returns its reason code. */
  int puback(int id) throws IOException {
    MqttBadInputTest.Packet p = MqttBadInputTest.read(in);
    assertEquals(0x40, p.first(), "PUBACK");
    assertEquals(id, ((p.rest()[0] & 0xFF) << 8) | (p.rest()[1] & 0xFF), "packet id");
    return p.rest().length > 2 ? p.rest()[2] & 0xFF : 0;
  }

  /** Reads the router's DISCONNECT and the end of the stream; returns the reason code. */
  int disconnectReason() throws IOException {
    MqttBadInputTest.Packet p = MqttBadInputTest.read(in);
    assertEquals(0xE0, p.first(), "DISCONNECT");
    try {
      in.readUnsignedByte();
      throw new AssertionError("the router must close the connection after its DISCONNECT");
    } catch (EOFException expected) {
      return p.rest()[0] & 0xFF;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
