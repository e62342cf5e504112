package io.bdrp.testbed.wan;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.peers.ActiveMqBrokerMain;
import io.bdrp.testbed.peers.ActiveMqClients;
import io.bdrp.testbed.peers.JmsSelectors;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The paper's peer on the emulated network: an ActiveMQ broker in every router's namespace ({@link
 * ActiveMqBrokerMain}), duplex network connectors along the network's links (the lower-numbered end
 * dials) with the network TTL at the topology's diameter, and JMS clients here. Each client's
 * predicate becomes a JMS selector ({@link JmsSelectors}), each message a non-persistent {@code
 * BytesMessage} on topic {@code bdrp} with the attributes as properties. A client publishes from a
 * thread of its own on a session of its own, so a broker that holds a producer back (flow control)
 * slows that client, not the schedule of the others.
 */
public final class ActiveMqWan implements WanSystem {
  /** The broker's OpenWire port in every namespace. */
  public static final int PORT = 61616;

  private final List<String> jvmOptions;
  private final List<ChildProcess> brokers = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();
  private final List<ExecutorService> senders = new ArrayList<>();
  private Emulator.Network net;

  /** Brokers run with {@code jvmOptions}. */
  public ActiveMqWan(List<String> jvmOptions) {
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  @Override
  public String name() {
    return "activemq";
  }

  @Override
  public void start(Emulator.Network n, Path dir, int diameter) throws Exception {
    this.net = n;
    for (Emulator.RouterNet r : n.routers()) {
      List<String> args =
          new ArrayList<>(
              List.of(
                  "broker" + r.router(),
                  "0.0.0.0:" + PORT,
                  Integer.toString(Math.max(1, diameter))));
      for (Emulator.LinkNet l : n.links()) {
        if (l.a() == r.router()) {
          args.add(l.addressB() + ":" + PORT);
        }
      }
      List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", r.namespace()));
      cmd.addAll(
          ChildProcess.java(
              jvmOptions, ActiveMqBrokerMain.class.getName(), args.toArray(String[]::new)));
      brokers.add(
          ChildProcess.start(
              "activemq broker " + r.router(),
              cmd,
              dir.resolve("activemq-broker-" + r.router() + ".log")));
    }
    for (Emulator.RouterNet r : n.routers()) {
      brokers.get(r.router()).awaitPort(r.address(), PORT, Duration.ofSeconds(90));
    }
  }

  @Override
  public Client client(int server, String name, Predicate p, Consumer<Message> receiver)
      throws Exception {
    Connection c = ActiveMqClients.connect(net.routers().get(server).address(), PORT, name);
    synchronized (connections) {
      connections.add(c);
    }
    Session in = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    var consumer = in.createConsumer(in.createTopic("bdrp"), JmsSelectors.selector(p));
    consumer.setMessageListener(
        m -> {
          try {
            receiver.accept(
                Message.builder()
                    .put(WanRun.ID, m.getLongProperty(JmsSelectors.propertyName(WanRun.ID)))
                    .build());
          } catch (jakarta.jms.JMSException e) {
            throw new IllegalStateException(e);
          }
        });
    Session out = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    MessageProducer producer = out.createProducer(out.createTopic("bdrp"));
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
    producer.setDisableMessageTimestamp(true);
    ExecutorService sender = Executors.newSingleThreadExecutor();
    synchronized (senders) {
      senders.add(sender);
    }
    return new Client() {
      @Override
      public void send(Message m) {
        sender.execute(
            () -> {
              try {
                BytesMessage b = out.createBytesMessage();
                JmsSelectors.setProperties(b, m);
                b.writeBytes(m.body());
                producer.send(b);
              } catch (jakarta.jms.JMSException e) {
                // the run's accounting shows the message as undelivered
              }
            });
      }

      @Override
      public void close() {
        sender.shutdownNow();
      }
    };
  }

  @Override
  public List<ChildProcess> processes() {
    return List.copyOf(brokers);
  }

  @Override
  public void close() {
    synchronized (senders) {
      senders.forEach(ExecutorService::shutdownNow);
      senders.clear();
    }
    // Brokers first: a connection's close waits for its broker's answer, which a broker with a
    // backlog gives late; with the broker gone it returns at once.
    brokers.forEach(ChildProcess::close);
    brokers.clear();
    ActiveMqClients.closeAll(connections);
  }
}
