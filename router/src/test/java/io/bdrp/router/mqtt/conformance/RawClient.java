package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.Router;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;

/**
 * An MQTT client on a plain socket that writes the packets a test gives it and reads the router's
 * packets one by one, in either protocol. Reads time out after 20 s (a test that waits for a packet
 * that never comes fails rather than hangs).
 */
final class RawClient implements AutoCloseable {
  final Socket socket;
  final DataInputStream in;
  final Wire.Version version;

  /** The CONNACK's MQTT 5 properties, once connected. */
  List<Wire.Property> connack = List.of();

  private RawClient(Router router, Wire.Version version) throws IOException {
    this.version = version;
    socket = new Socket("127.0.0.1", router.mqttAddress().getPort());
    socket.setSoTimeout(20_000);
    socket.setTcpNoDelay(true);
    in = new DataInputStream(socket.getInputStream());
  }

  /** A connection without its CONNECT. */
  static RawClient open(Router router, Wire.Version version) throws IOException {
    return new RawClient(router, version);
  }

  /** A session: connected with {@code connect}, its CONNACK read and checked to accept it. */
  static RawClient connected(Router router, Wire.Connect connect) throws IOException {
    RawClient c = new RawClient(router, connect.version);
    c.send(connect.bytes());
    Wire.Packet ack = c.read();
    assertEquals(Wire.CONNACK, ack.type(), "CONNACK");
    assertEquals(0, ack.rest()[1], "the CONNECT accepted");
    if (connect.version.v5()) {
      c.connack = Wire.readProperties(ack.rest(), new int[] {2});
    }
    return c;
  }

  /** A session of {@code version} with client identifier {@code id}, a clean start. */
  static RawClient connected(Router router, Wire.Version version, String id) throws IOException {
    return connected(router, new Wire.Connect(version, id));
  }

  void send(byte[] bytes) throws IOException {
    socket.getOutputStream().write(bytes);
    socket.getOutputStream().flush();
  }

  /** The next packet the router sent. */
  Wire.Packet read() throws IOException {
    return readAfter(in.readUnsignedByte());
  }

  /** The rest of the packet whose first byte, {@code first}, was read already. */
  Wire.Packet readAfter(int first) throws IOException {
    int n = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readUnsignedByte();
      n |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    byte[] rest = new byte[n];
    in.readFully(rest);
    return new Wire.Packet(first, rest);
  }

  /** The next packet, which must be of {@code type}. */
  Wire.Packet expect(int type) throws IOException {
    Wire.Packet p = read();
    assertEquals(type, p.type(), "packet type");
    return p;
  }

  /** The next PUBLISH. */
  Wire.Publish delivery() throws IOException {
    return Wire.readPublish(read(), version);
  }

  /** Whether the router closed the connection (EOF or a reset) before sending anything more. */
  boolean closedWithoutAPacket() throws IOException {
    try {
      return in.read() == -1;
    } catch (SocketException reset) {
      return true;
    }
  }

  /**
   * The end of a session the router ends: in MQTT 5 its DISCONNECT, whose reason code is returned,
   * then the end of the stream; in 3.1.1, which has no server DISCONNECT, the end of the stream
   * straight away (-1 is returned).
   */
  int ended() throws IOException {
    if (version.v5()) {
      Wire.Packet p = read();
      assertEquals(Wire.DISCONNECT, p.type(), "the router's DISCONNECT");
      assertTrue(closedWithoutAPacket(), "the connection closed after the DISCONNECT");
      return p.rest()[0] & 0xFF;
    }
    assertTrue(closedWithoutAPacket(), "the connection closed, without a packet (3.1.1)");
    return -1;
  }

  /** Sends a PINGREQ and reads its PINGRESP: the router has handled everything sent before it. */
  void ping() throws IOException {
    send(Wire.pingreq());
    Wire.Packet p = read();
    assertEquals(Wire.PINGRESP, p.type(), "PINGRESP");
    assertEquals(0, p.rest().length);
  }

  /** Reads a SUBACK for {@code packetId}; returns its codes, in order. */
  int[] suback(int packetId) throws IOException {
    Wire.Packet p = expect(Wire.SUBACK);
    assertEquals(0, p.flags(), "SUBACK flags");
    assertEquals(packetId, p.u16(0), "the SUBACK's packet identifier is the SUBSCRIBE's");
    int[] pos = {2};
    if (version.v5()) {
      Wire.readProperties(p.rest(), pos);
    }
    int[] codes = new int[p.rest().length - pos[0]];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = p.rest()[pos[0] + i] & 0xFF;
    }
    return codes;
  }

  /** Subscribes to {@code filter} at {@code qos}; returns the SUBACK's code. */
  int subscribe(int packetId, String filter, int qos) throws IOException {
    send(Wire.subscribe(version, packetId, filter, qos));
    return suback(packetId)[0];
  }

  /**
   * Reads a PUBACK, PUBREC or PUBCOMP ({@code type}) for {@code packetId}; returns its reason code
   * (0 when it has none).
   */
  int ack(int type, int packetId) throws IOException {
    Wire.Packet p = expect(type);
    assertEquals(type == Wire.PUBREL ? 2 : 0, p.flags(), "flags");
    assertEquals(packetId, p.u16(0), "the packet identifier of the packet acknowledged");
    return p.rest().length > 2 ? p.rest()[2] & 0xFF : 0;
  }

  /** The CONNACK properties of {@code id}. */
  List<Object> connackProperty(int id) {
    List<Object> out = new ArrayList<>();
    for (Wire.Property p : connack) {
      if (p.id() == id) {
        out.add(p.value());
      }
    }
    return out;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
