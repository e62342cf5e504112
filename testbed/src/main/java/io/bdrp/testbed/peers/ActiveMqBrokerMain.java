package io.bdrp.testbed.peers;

import java.util.concurrent.CountDownLatch;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.network.NetworkConnector;

/**
 * Runs one ActiveMQ broker in its own JVM, the way the benchmarks deploy the peer:
 *
 * <pre>
 * ActiveMqBrokerMain NAME [HOST:]PORT NETWORK_TTL [[HOST:]NEIGHBOUR_PORT ...]
 * </pre>
 *
 * <p>Addresses without a host are on 127.0.0.1. Settings, chosen as the fastest the broker offers
 * for this use (the paper's set-up): no persistence store and no JMX; an OpenWire transport on
 * HOST:PORT; for every neighbour a duplex static network connector (one per edge, dialled by one
 * end), which forwards a message to the neighbour only while a consumer there wants it (demand
 * forwarding, learnt from advisory messages, which therefore stay on). The network TTL (how many
 * brokers a message and a subscription's demand may cross) is set to the network's diameter or
 * more: at the default of 1, a consumer two brokers away would never see a message. Everything else
 * is the broker's default.
 */
public final class ActiveMqBrokerMain {
  private ActiveMqBrokerMain() {}

  /** HOST:PORT from [HOST:]PORT. */
  static String address(String a) {
    int colon = a.lastIndexOf(':');
    String host = colon < 0 ? "127.0.0.1" : a.substring(0, colon);
    int port = Integer.parseInt(colon < 0 ? a : a.substring(colon + 1));
    return host + ":" + port;
  }

  public static void main(String[] args) throws Exception {
    // The bdrp command that starts this process has checked the BDRP_LOG_* settings.
    io.bdrp.router.Logging.configure(System.getenv());
    if (args.length < 3) {
      System.err.println(
          "usage: ActiveMqBrokerMain NAME [HOST:]PORT NETWORK_TTL [[HOST:]NEIGHBOUR_PORT ...]");
      System.exit(2);
    }
    BrokerService b = new BrokerService();
    b.setBrokerName(args[0]);
    b.setPersistent(false);
    b.setUseJmx(false);
    b.setSchedulerSupport(false);
    b.setAdvisorySupport(true);
    // Where the network has cycles a message can reach a broker by two routes; the topic
    // subscriptions' message audit drops the second copy (on by default; made explicit here, with
    // room for every producer of a run).
    org.apache.activemq.broker.region.policy.PolicyEntry topics =
        new org.apache.activemq.broker.region.policy.PolicyEntry();
    topics.setTopic(">");
    topics.setEnableAudit(true);
    topics.setMaxProducersToAudit(4096);
    topics.setMaxAuditDepth(32_768);
    org.apache.activemq.broker.region.policy.PolicyMap policies =
        new org.apache.activemq.broker.region.policy.PolicyMap();
    policies.setDefaultEntry(topics);
    b.setDestinationPolicy(policies);
    b.addConnector("tcp://" + address(args[1]));
    int ttl = Integer.parseInt(args[2]);
    for (int i = 3; i < args.length; i++) {
      NetworkConnector nc = b.addNetworkConnector("static:(tcp://" + address(args[i]) + ")");
      nc.setName(args[0] + "-to-" + args[i]);
      nc.setDuplex(true);
      nc.setNetworkTTL(ttl);
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    b.stop();
                    b.waitUntilStopped();
                  } catch (Exception e) {
                    System.err.println("stopping the broker: " + e);
                  }
                  stopped.countDown();
                }));
    b.start();
    b.waitUntilStarted();
    System.out.println("broker " + args[0] + " started on port " + args[1]);
    stopped.await();
  }
}
