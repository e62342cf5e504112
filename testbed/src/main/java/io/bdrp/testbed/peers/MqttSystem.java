package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.LinkMeter;
import io.bdrp.testbed.PubSubSystem;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.net.SocketFactory;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * A system under test reached through MQTT only: its servers (a bdrp router, a broker) are started
 * by the subclass, and every client is the same MQTT 3.1.1 client, Eclipse Paho's {@code mqttv3}
 * {@link MqttAsyncClient}, one connection per client, so that the systems differ in the server
 * only. MQTT 3.1.1 because nats-server speaks no MQTT 5.
 *
 * <p>A message of bucket N is published to topic {@code bench/N/m} at the system's QoS (0 or 1),
 * its body unchanged as the payload. Taking everything is the filter {@code bench/#}; a bucket
 * subscription is what the subclass finds the fairest form for it ({@link #filter}): a broker's
 * topic filter {@code bench/N/m}, bdrp's content filter on the topic's second level. Subscriptions
 * are made at the system's QoS, so that QoS 1 runs deliver at QoS 1.
 *
 * <p>Client settings, the same for every system: clean session, in-memory persistence, TCP_NODELAY
 * (the servers' sockets have it too), at most {@link #IN_FLIGHT} QoS 1 publishes awaiting their
 * PUBACK (the publisher waits for a PUBACK beyond that, as the client refuses more).
 *
 * <p>Threads: Paho runs a receiving, a sending and a callback thread per client; messages are
 * handed to the {@link Receiver} on the subscriber's callback thread.
 */
public abstract class MqttSystem implements PubSubSystem {
  /** QoS 1 publishes a publisher may have awaiting their PUBACK. */
  public static final int IN_FLIGHT = 1000;

  /** The topic prefix of every message. */
  public static final String PREFIX = "bench/";

  private final int qos;
  protected final List<ChildProcess> servers = new ArrayList<>();
  protected final List<LinkMeter> links = new ArrayList<>();
  private final List<MqttAsyncClient> clients = new ArrayList<>();
  private final LongAdder refused = new LongAdder();
  private final LongAdder disconnects = new LongAdder();
  protected int[] mqttPorts = new int[0];

  protected MqttSystem(int qos) {
    if (qos != 0 && qos != 1) {
      throw new IllegalArgumentException("--qos: 0 or 1, got " + qos);
    }
    this.qos = qos;
  }

  /** The QoS of every publish and subscription. */
  public int qos() {
    return qos;
  }

  /** The topic of a message of {@code bucket}. */
  public static String topic(int bucket) {
    return PREFIX + bucket + "/m";
  }

  /** The subscription of a client that takes {@code bucket} ({@link #ALL}: every message). */
  public String filter(int bucket) {
    return bucket == ALL ? PREFIX + "#" : topic(bucket);
  }

  /**
   * Why this system cannot run on this machine (its server is not installed), or null if it can.
   */
  public String missing() {
    return null;
  }

  /**
   * Starts {@code count} servers in a line, server i linked to server i+1 (if the system links
   * servers) through a {@link LinkMeter}, and sets {@link #mqttPorts}.
   */
  protected abstract void startServers(int count, Path dir) throws Exception;

  @Override
  public final void start(int count, Path dir) throws Exception {
    String why = missing();
    if (why != null) {
      throw new IllegalStateException(name() + ": " + why);
    }
    Files.createDirectories(dir);
    startServers(count, dir);
  }

  /** The meters on the links between servers, in line order (none with one server). */
  public List<LinkMeter> links() {
    return List.copyOf(links);
  }

  /** Bytes carried so far on every inter-server link, both ways. */
  public long linkBytes() {
    return links.stream().mapToLong(LinkMeter::bytes).sum();
  }

  /** Client connections that ended without the harness closing them, since the start. */
  public long disconnects() {
    return disconnects.sum();
  }

  @Override
  public long refused() {
    return refused.sum();
  }

  /**
   * Sockets with TCP_NODELAY, made before they connect, read through a buffer: Paho reads each
   * packet's fixed header byte by byte and then its body from the socket's stream, which unbuffered
   * is three or four system calls per packet, and a client that takes 100,000 packets a second then
   * spends more on them than the server that sends them. The same for every system.
   */
  private static final class NoDelaySockets extends SocketFactory {
    @Override
    public Socket createSocket() throws IOException {
      Socket s = new BufferedReads();
      s.setTcpNoDelay(true);
      return s;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      Socket s = createSocket();
      s.connect(new java.net.InetSocketAddress(host, port));
      return s;
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress local, int localPort)
        throws IOException {
      Socket s = createSocket();
      s.bind(new java.net.InetSocketAddress(local, localPort));
      s.connect(new java.net.InetSocketAddress(host, port));
      return s;
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      Socket s = createSocket();
      s.connect(new java.net.InetSocketAddress(host, port));
      return s;
    }

    @Override
    public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
        throws IOException {
      Socket s = createSocket();
      s.bind(new java.net.InetSocketAddress(local, localPort));
      s.connect(new java.net.InetSocketAddress(host, port));
      return s;
    }
  }

  /** A socket whose input stream is buffered (Paho asks for it once, after connecting). */
  private static final class BufferedReads extends Socket {
    private InputStream in;

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (in == null) {
        in = new BufferedInputStream(super.getInputStream(), 64 * 1024);
      }
      return in;
    }
  }

  private MqttAsyncClient connect(int server, String name, MqttCallback callback) throws Exception {
    MqttAsyncClient c =
        new MqttAsyncClient("tcp://127.0.0.1:" + mqttPorts[server], name, new MemoryPersistence());
    c.setCallback(callback);
    MqttConnectOptions o = new MqttConnectOptions();
    o.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
    o.setCleanSession(true);
    o.setAutomaticReconnect(false);
    o.setKeepAliveInterval(60);
    o.setConnectionTimeout(10);
    o.setMaxInflight(IN_FLIGHT);
    o.setSocketFactory(new NoDelaySockets());
    try {
      c.connect(o).waitForCompletion(10_000);
    } catch (MqttException e) {
      c.close(true);
      throw new IOException(
          name
              + " could not connect to server "
              + server
              + " at 127.0.0.1:"
              + mqttPorts[server]
              + ": "
              + e.getMessage()
              + (e.getCause() != null ? " (" + e.getCause() + ")" : "")
              + serverState(server),
          e);
    }
    synchronized (clients) {
      clients.add(c);
    }
    return c;
  }

  /** Whether server {@code i}'s process runs, and the end of its log: why a connection failed. */
  private String serverState(int i) {
    return i < servers.size() ? servers.get(i).describeWithLogTail(30) : "";
  }

  /** Counts a connection that ended under the harness, and delivers to {@code receiver}. */
  private MqttCallback callback(Receiver receiver, Semaphore inFlight) {
    return new MqttCallback() {
      @Override
      public void connectionLost(Throwable cause) {
        disconnects.increment();
      }

      @Override
      public void messageArrived(String topic, MqttMessage message) {
        if (receiver != null) {
          receiver.received(message.getPayload());
        }
      }

      @Override
      public void deliveryComplete(IMqttDeliveryToken token) {
        if (inFlight != null) {
          inFlight.release();
        }
      }
    };
  }

  @Override
  public AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver)
      throws Exception {
    MqttAsyncClient c = connect(server, name, callback(receiver, null));
    IMqttToken t = c.subscribe(filter(bucket), qos);
    t.waitForCompletion(10_000);
    int[] granted = t.getGrantedQos();
    if (granted.length != 1 || granted[0] != qos) {
      refused.increment();
      throw new IllegalStateException(
          name()
              + ": subscription "
              + filter(bucket)
              + " at QoS "
              + qos
              + " granted "
              + (granted.length == 1 ? "0x" + Integer.toHexString(granted[0]) : "nothing"));
    }
    return () -> closeQuietly(c);
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    Semaphore inFlight = new Semaphore(IN_FLIGHT);
    MqttAsyncClient c = connect(server, name, callback(null, inFlight));
    String[] topics = new String[1024];
    for (int i = 0; i < topics.length; i++) {
      topics[i] = topic(i);
    }
    return new Publisher() {
      IMqttDeliveryToken last;

      @Override
      public void publish(int bucket, byte[] body) throws Exception {
        if (qos > 0 && !inFlight.tryAcquire(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException(
              MqttSystem.this.name() + ": no PUBACK for 30 s with " + IN_FLIGHT + " in flight");
        }
        // The harness writes the next message into the same array: the client keeps the array
        // it is given until it has sent it.
        last =
            c.publish(
                bucket < topics.length ? topics[bucket] : topic(bucket), body.clone(), qos, false);
      }

      @Override
      public void flush() throws Exception {
        if (last != null) {
          last.waitForCompletion(10_000);
        }
      }

      @Override
      public void close() {
        closeQuietly(c);
      }
    };
  }

  private static void closeQuietly(MqttAsyncClient c) {
    try {
      if (c.isConnected()) {
        c.disconnect(0).waitForCompletion(2_000);
      }
    } catch (Exception e) {
      // closing anyway
    }
    try {
      c.close(true);
    } catch (Exception e) {
      // nothing more to do
    }
  }

  @Override
  public List<ChildProcess> processes() {
    return List.copyOf(servers);
  }

  @Override
  public void close() {
    List<MqttAsyncClient> cs;
    synchronized (clients) {
      cs = new ArrayList<>(clients);
      clients.clear();
    }
    cs.forEach(MqttSystem::closeQuietly);
    servers.forEach(ChildProcess::close);
    servers.clear();
    links.forEach(LinkMeter::close);
    links.clear();
  }

  /** The first executable {@code name} in {@code env}, /usr/sbin or on PATH, or null. */
  static Path binary(String env, String name) {
    String e = System.getenv(env);
    if (e != null && !e.isBlank()) {
      return Files.isExecutable(Path.of(e)) ? Path.of(e) : null;
    }
    List<String> dirs = new ArrayList<>(List.of("/usr/sbin", "/usr/local/sbin"));
    dirs.addAll(List.of(System.getenv().getOrDefault("PATH", "/usr/bin").split(":")));
    for (String d : dirs) {
      Path p = Path.of(d, name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }
}
