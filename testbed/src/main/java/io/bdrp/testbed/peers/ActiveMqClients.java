package io.bdrp.testbed.peers;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import java.util.List;
import org.apache.activemq.ActiveMQConnectionFactory;

/** How the testbed's JMS clients connect to ActiveMQ, the same in every benchmark. */
public final class ActiveMqClients {
  private ActiveMqClients() {}

  /**
   * A started connection to the broker at {@code host}:{@code port}, with the client settings the
   * broker documents for throughput with non-persistent messages: asynchronous sends and optimised
   * acknowledgement (and no advisory watching, which these clients do not use).
   */
  public static Connection connect(String host, int port, String clientId) throws JMSException {
    ActiveMQConnectionFactory f = new ActiveMQConnectionFactory("tcp://" + host + ":" + port);
    f.setUseAsyncSend(true);
    f.setOptimizeAcknowledge(true);
    f.setWatchTopicAdvisories(false);
    f.setCloseTimeout(2_000); // a closing client does not wait long for a busy broker
    Connection c = f.createConnection();
    c.setClientID(clientId);
    c.start();
    return c;
  }

  /** Closes every connection, whether or not its broker is still there, and empties the list. */
  public static void closeAll(List<Connection> connections) {
    synchronized (connections) {
      for (Connection c : connections) {
        try {
          c.close();
        } catch (JMSException e) {
          // the broker may already be gone
        }
      }
      connections.clear();
    }
  }
}
