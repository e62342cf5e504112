package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.bdrp.router.EmbeddedCore;
import io.bdrp.router.Federation;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.ClientSessions;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.MessageIds;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * A router's MQTT port on {@link EmbeddedChannel}s, without sockets: each connection gets the
 * pipeline of {@link MqttListener#initializer()} (framing, Netty's decoder and encoder, the
 * session), behind it the router's real data plane, routing state and predicate changes, the
 * control thread run in place. {@link #settle} runs every channel's pending tasks, as the router's
 * one loop would. Two bystander sessions, an MQTT 5 subscriber and a 3.1.1 publisher, are connected
 * from the start, so that a test can check that what it did to its own session disturbed no one
 * else ({@link #bystandersServed}). Log events of the MQTT sessions at WARN and above are kept: a
 * session that fails with an exception other than bad input logs one.
 *
 * <p>Used on the test's thread only.
 */
final class EmbeddedMqtt implements AutoCloseable {
  /** The bystanders' client identifiers: a test input that names them may take them over. */
  static final String SUBSCRIBER_ID = "bystander-sub-5f1c";

  static final String PUBLISHER_ID = "bystander-pub-9a2e";

  final RouterConfig config = Federation.loneRouter();
  private final EmbeddedChannel loop = new EmbeddedChannel();
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  final RouterCore core;
  final MqttListener listener;
  private final ListAppender<ILoggingEvent> warnings = new ListAppender<>();
  private final Logger sessionLog = (Logger) LoggerFactory.getLogger(MqttSession.class);
  final EmbeddedChannel subscriber;
  final EmbeddedChannel publisher;
  private int markers;

  EmbeddedMqtt() {
    channels.add(loop);
    core = EmbeddedCore.of(config, loop);
    Hosts hosts = new Hosts();
    OutputBatches batches = new OutputBatches(loop.eventLoop());
    LinkOutput output = new LinkOutput(new Link[8], hosts, batches, core.metrics().matchSeconds);
    DataPlane<MessageBytes> dataPlane =
        new DataPlane<>(core.node(), output, System::nanoTime, MessageIds.secure(0, 64));
    // One reliable service per router, as in Router: both front ends hand messages to it.
    io.bdrp.routing.Reliable<MessageBytes> reliable =
        new io.bdrp.routing.Reliable<>(
            dataPlane,
            core.node(),
            1,
            System::currentTimeMillis,
            io.bdrp.routing.Reliable.Config.DEFAULT,
            output);
    ClientSessions clients =
        new ClientSessions(core, hosts, batches, dataPlane, reliable, () -> {}, () -> null, false);
    listener =
        new MqttListener(
            core, hosts, clients.predicates(), dataPlane, reliable, () -> {}, batches, () -> null);
    warnings.start();
    sessionLog.addAppender(warnings);
    subscriber = connection();
    write(subscriber, connect(5, SUBSCRIBER_ID));
    write(subscriber, subscribe(5, 1, "by/#", 1));
    publisher = connection();
    write(publisher, connect(4, PUBLISHER_ID));
    settle();
    List<byte[]> first = packets(subscriber);
    assertEquals(2, first.size(), "CONNACK and SUBACK");
    assertEquals(0x90, first.get(1)[0] & 0xFF, "SUBACK");
    assertEquals(1, packets(publisher).size(), "CONNACK");
  }

  /** A new connection to the port, active (its session waits for the CONNECT). */
  EmbeddedChannel connection() {
    EmbeddedChannel c = new EmbeddedChannel(listener.initializer());
    channels.add(c);
    return c;
  }

  /** Writes {@code bytes} to {@code c} as one read, if it is open, and settles. */
  void write(EmbeddedChannel c, byte[] bytes) {
    if (c.isOpen()) {
      c.writeInbound(Unpooled.wrappedBuffer(bytes));
    }
    settle();
  }

  /** Runs every channel's pending tasks until none is left: the loop's turns, in place. */
  void settle() {
    for (int round = 0; round < 8; round++) {
      for (EmbeddedChannel c : channels) {
        c.runPendingTasks();
      }
    }
  }

  /** The packets the router has written to {@code c} since the last call, each whole. */
  List<byte[]> packets(EmbeddedChannel c) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (Object o; (o = c.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      try {
        all.writeBytes(ByteBufUtil.getBytes(b));
      } finally {
        b.release();
      }
    }
    return split(all.toByteArray());
  }

  /** Cuts a stream of whole packets into packets. */
  static List<byte[]> split(byte[] s) {
    List<byte[]> out = new ArrayList<>();
    int at = 0;
    while (at < s.length) {
      int end = end(s, at);
      assertTrue(end > 0 && end <= s.length, "the router wrote a whole packet");
      out.add(java.util.Arrays.copyOfRange(s, at, end));
      at = end;
    }
    return out;
  }

  /**
   * Where the packet starting at {@code at} ends, from its fixed header; -1 if its fixed header is
   * not all there or its length field is longer than four bytes.
   */
  static int end(byte[] s, int at) {
    long length = 0;
    for (int i = 1; i <= 4; i++) {
      if (at + i >= s.length) {
        return -1;
      }
      int b = s[at + i] & 0xFF;
      length |= (long) (b & 0x7F) << (7 * (i - 1));
      if ((b & 0x80) == 0) {
        long end = at + i + 1 + length;
        return end > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) end;
      }
    }
    return -1;
  }

  /** The bytes the router holds for {@code c}, written and not yet flushed to it. */
  static long pendingOutput(EmbeddedChannel c) {
    ChannelOutboundBuffer b = c.unsafe().outboundBuffer();
    return b == null ? 0 : b.totalPendingWriteBytes();
  }

  /**
   * The sum of the port's counters that a session closed by the router, or refused, goes to:
   * malformed input, refused CONNECTs, and the port's closed connections (keep-alive, hello
   * timeout, handshakes, slow consumers).
   */
  long closures() {
    long n = 0;
    for (MetricSnapshot s : core.metrics().registry().scrape()) {
      String name = s.getMetadata().getName();
      if (s instanceof CounterSnapshot c) {
        for (CounterSnapshot.CounterDataPointSnapshot p : c.getDataPoints()) {
          boolean counts =
              name.equals("bdrp_mqtt_malformed")
                  || (name.equals("bdrp_mqtt_connections")
                      && !"accepted".equals(p.getLabels().get("result")))
                  || (name.equals("bdrp_connections_closed")
                      && "mqtt".equals(p.getLabels().get("port")));
          if (counts) {
            n += (long) p.getValue();
          }
        }
      }
    }
    return n;
  }

  /** The value of counter {@code name} (without {@code _total}) whose labels include {@code kv}. */
  long counter(String name, String... kv) {
    long n = 0;
    for (MetricSnapshot s : core.metrics().registry().scrape()) {
      if (s instanceof CounterSnapshot c && s.getMetadata().getName().equals(name)) {
        point:
        for (CounterSnapshot.CounterDataPointSnapshot p : c.getDataPoints()) {
          for (int i = 0; i < kv.length; i += 2) {
            if (!kv[i + 1].equals(p.getLabels().get(kv[i]))) {
              continue point;
            }
          }
          n += (long) p.getValue();
        }
      }
    }
    return n;
  }

  /** The port's partial packets' bytes held on its budget now. */
  long partialBytes() {
    for (MetricSnapshot s : core.metrics().registry().scrape()) {
      if (s instanceof GaugeSnapshot g
          && s.getMetadata().getName().equals("bdrp_inbound_partial_bytes")) {
        for (GaugeSnapshot.GaugeDataPointSnapshot p : g.getDataPoints()) {
          if ("mqtt".equals(p.getLabels().get("port"))) {
            return (long) p.getValue();
          }
        }
      }
    }
    throw new AssertionError("no bdrp_inbound_partial_bytes{port=\"mqtt\"}");
  }

  /** The MQTT sessions' log events at WARN or above so far. */
  List<ILoggingEvent> warnings() {
    List<ILoggingEvent> out = new ArrayList<>();
    for (ILoggingEvent e : warnings.list) {
      if (e.getLevel().isGreaterOrEqual(Level.WARN)) {
        out.add(e);
      }
    }
    return out;
  }

  /**
   * Whether the bystanders are served: the publisher's QoS 1 PUBLISH to by/marker-N is acknowledged
   * and the subscriber gets it, and both answer a PINGREQ. A bystander that {@code input} took over
   * (it names the bystander's identifier) is not asked.
   */
  void bystandersServed(byte[] input) {
    boolean subTaken = contains(input, SUBSCRIBER_ID);
    boolean pubTaken = contains(input, PUBLISHER_ID);
    packets(subscriber);
    packets(publisher);
    if (!subTaken) {
      assertTrue(subscriber.isOpen(), "the bystander subscriber is still connected");
    }
    if (!pubTaken) {
      assertTrue(publisher.isOpen(), "the bystander publisher is still connected");
    }
    if (subTaken || pubTaken) {
      return;
    }
    String marker = "marker-" + (++markers);
    write(publisher, publish(4, 1, "by/" + marker, 7, marker));
    write(publisher, new byte[] {(byte) 0xC0, 0});
    List<byte[]> p = packets(publisher);
    assertTrue(
        p.size() >= 2 && (p.get(0)[0] & 0xFF) == 0x40 && (p.get(p.size() - 1)[0] & 0xFF) == 0xD0,
        "the publisher's PUBACK and PINGRESP");
    write(subscriber, new byte[] {(byte) 0xC0, 0});
    List<byte[]> s = packets(subscriber);
    boolean got = false;
    for (byte[] packet : s) {
      got |= (packet[0] & 0xF0) == 0x30 && endsWith(packet, marker);
      if ((packet[0] & 0xF6) == 0x32) { // a QoS 1 PUBLISH: acknowledge it, freeing the window
        int topic = ((packet[2] & 0xFF) << 8) | (packet[3] & 0xFF); // remaining length < 128 here
        if (packet[1] >= 0) {
          write(subscriber, new byte[] {0x40, 2, packet[4 + topic], packet[5 + topic]});
        }
      }
    }
    assertTrue(got, "the bystander subscriber got the marker");
    assertEquals(0xD0, s.get(s.size() - 1)[0] & 0xFF, "the subscriber's PINGRESP");
  }

  private static boolean endsWith(byte[] packet, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    if (packet.length < b.length) {
      return false;
    }
    for (int i = 0; i < b.length; i++) {
      if (packet[packet.length - b.length + i] != b[i]) {
        return false;
      }
    }
    return true;
  }

  static boolean contains(byte[] input, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    outer:
    for (int i = 0; i + b.length <= input.length; i++) {
      for (int j = 0; j < b.length; j++) {
        if (input[i + j] != b[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  /** A handler, put before the session, that notes each packet the session is handed. */
  static final class Spy extends ChannelInboundHandlerAdapter {
    /** Whether a DISCONNECT that decoded was handed to the session. */
    boolean disconnect;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof MqttMessage m
          && m.decoderResult().isSuccess()
          && m.fixedHeader().messageType() == MqttMessageType.DISCONNECT) {
        disconnect = true;
      }
      ctx.fireChannelRead(msg);
    }
  }

  Spy spy(EmbeddedChannel c) {
    Spy s = new Spy();
    c.pipeline().addBefore("session", "spy", s);
    return s;
  }

  @Override
  public void close() {
    sessionLog.detachAppender(warnings);
    for (EmbeddedChannel c : channels) {
      c.finishAndReleaseAll();
    }
    settle();
  }

  // Packets, as bytes.

  static byte[] packet(int first, byte[] rest) {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(first);
    int n = rest.length;
    do {
      int b = n & 0x7F;
      n >>>= 7;
      p.write(n > 0 ? b | 0x80 : b);
    } while (n > 0);
    p.writeBytes(rest);
    return p.toByteArray();
  }

  private static void string(ByteArrayOutputStream o, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    o.write(b.length >> 8);
    o.write(b.length);
    o.writeBytes(b);
  }

  /** A CONNECT of protocol level {@code level} (4: 3.1.1, 5), clean start, keep-alive 60 s. */
  static byte[] connect(int level, String id) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    string(v, "MQTT");
    v.write(level);
    v.write(0x02);
    v.write(0);
    v.write(60);
    if (level == 5) {
      v.write(0);
    }
    string(v, id);
    return packet(0x10, v.toByteArray());
  }

  static byte[] subscribe(int level, int id, String filter, int qos) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.write(id >> 8);
    v.write(id);
    if (level == 5) {
      v.write(0);
    }
    string(v, filter);
    v.write(qos);
    return packet(0x82, v.toByteArray());
  }

  static byte[] publish(int level, int qos, String topic, int id, String payload) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    string(v, topic);
    if (qos > 0) {
      v.write(id >> 8);
      v.write(id);
    }
    if (level == 5) {
      v.write(0);
    }
    v.writeBytes(payload.getBytes(StandardCharsets.UTF_8));
    return packet(0x30 | (qos << 1), v.toByteArray());
  }
}
