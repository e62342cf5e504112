package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
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

  /** A Topic Alias property (0x23). */
  static byte[] alias(int alias) {
    return new byte[] {0x23, (byte) (alias >> 8), (byte) alias};
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
