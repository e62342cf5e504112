package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.Ports;
import io.bdrp.testbed.PubSubSystem;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * ActiveMQ: one broker JVM per server ({@link ActiveMqBrokerMain}, same JVM options as the bdrp
 * routers), brokers linked along the line by duplex network connectors, and JMS clients from the
 * ActiveMQ client library, one connection and session each. Messages are non-persistent {@code
 * BytesMessage}s on topic {@code bench} with an int property {@code bucket}; a bucket subscription
 * is the selector {@code bucket = N}, taking everything is a consumer without a selector (the
 * broker's fastest path). Subscriptions are non-durable.
 *
 * <p>Client settings: asynchronous sends and optimised acknowledgement, the broker's documented
 * options for throughput when messages are non-persistent.
 */
public final class ActiveMqSystem implements PubSubSystem {
  private final List<String> jvmOptions;
  private final List<ChildProcess> brokers = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();
  private int[] ports = new int[0];

  /** A system whose broker JVMs run with {@code jvmOptions}. */
  public ActiveMqSystem(List<String> jvmOptions) {
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  @Override
  public String name() {
    return "activemq";
  }

  @Override
  public void start(int count, Path dir) throws Exception {
    ports = new int[count];
    for (int i = 0; i < count; i++) {
      ports[i] = Ports.free();
    }
    for (int i = 0; i < count; i++) {
      List<String> args =
          new ArrayList<>(
              List.of(
                  "broker" + i, Integer.toString(ports[i]), Integer.toString(Math.max(1, count))));
      if (i + 1 < count) {
        args.add(Integer.toString(ports[i + 1]));
      }
      brokers.add(
          ChildProcess.start(
              "activemq broker " + i,
              ChildProcess.java(
                  jvmOptions, ActiveMqBrokerMain.class.getName(), args.toArray(String[]::new)),
              dir.resolve("activemq-broker-" + i + ".log")));
    }
    for (int i = 0; i < count; i++) {
      brokers.get(i).awaitPort(ports[i], Duration.ofSeconds(60));
    }
  }

  private Session session(int server, String name) throws Exception {
    Connection c = ActiveMqClients.connect("127.0.0.1", ports[server], name);
    synchronized (connections) {
      connections.add(c);
    }
    return c.createSession(false, Session.AUTO_ACKNOWLEDGE);
  }

  @Override
  public AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver)
      throws Exception {
    Session s = session(server, name);
    Topic t = s.createTopic("bench");
    MessageConsumer c =
        bucket == ALL ? s.createConsumer(t) : s.createConsumer(t, "bucket = " + bucket);
    c.setMessageListener(
        m -> {
          try {
            BytesMessage b = (BytesMessage) m;
            receiver.received(b.readLong(), b.readByte());
          } catch (jakarta.jms.JMSException e) {
            throw new IllegalStateException(e);
          }
        });
    return s::close;
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    Session s = session(server, name);
    MessageProducer p = s.createProducer(s.createTopic("bench"));
    p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
    p.setDisableMessageID(true);
    p.setDisableMessageTimestamp(true);
    return new Publisher() {
      @Override
      public void publish(int bucket, byte[] body) throws Exception {
        BytesMessage m = s.createBytesMessage();
        m.setIntProperty("bucket", bucket);
        m.writeBytes(body);
        p.send(m);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {
        try {
          s.close();
        } catch (jakarta.jms.JMSException e) {
          // the broker may already be gone
        }
      }
    };
  }

  @Override
  public List<ChildProcess> processes() {
    return List.copyOf(brokers);
  }

  @Override
  public void close() {
    ActiveMqClients.closeAll(connections);
    brokers.forEach(ChildProcess::close);
    brokers.clear();
  }
}
