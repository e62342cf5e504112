package io.bdrp.router;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.paho.mqttv5.client.IMqttToken;
import org.eclipse.paho.mqttv5.client.MqttAsyncClient;
import org.eclipse.paho.mqttv5.client.MqttCallback;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.eclipse.paho.mqttv5.client.MqttDisconnectResponse;
import org.eclipse.paho.mqttv5.client.persist.MemoryPersistence;
import org.eclipse.paho.mqttv5.common.MqttException;
import org.eclipse.paho.mqttv5.common.MqttMessage;
import org.eclipse.paho.mqttv5.common.MqttSubscription;
import org.eclipse.paho.mqttv5.common.packet.MqttProperties;
import org.eclipse.paho.mqttv5.common.packet.UserProperty;

/**
 * MQTT 5 clients for tests (Eclipse Paho): connected to a router's MQTT port, with what they
 * receive in a queue.
 */
final class MqttClients {
  private MqttClients() {}

  /** What a client received: the topic and the message (payload, QoS, properties). */
  record Received(String topic, MqttMessage message) {
    String payload() {
      return new String(message.getPayload(), StandardCharsets.UTF_8);
    }
  }

  /** A Paho MQTT 5 client and the messages it received. */
  static final class Client implements AutoCloseable {
    final MqttAsyncClient paho;
    final LinkedBlockingQueue<Received> received = new LinkedBlockingQueue<>();

    /** Why the router disconnected it (its DISCONNECT's reason code), or null. */
    volatile MqttDisconnectResponse disconnected;

    Client(InetSocketAddress at, String id) throws MqttException {
      paho = new MqttAsyncClient("tcp://127.0.0.1:" + at.getPort(), id, new MemoryPersistence());
      paho.setCallback(
          new MqttCallback() {
            @Override
            public void disconnected(MqttDisconnectResponse r) {
              disconnected = r;
            }

            @Override
            public void mqttErrorOccurred(MqttException e) {}

            @Override
            public void messageArrived(String topic, MqttMessage m) {
              received.add(new Received(topic, m));
            }

            @Override
            public void deliveryComplete(org.eclipse.paho.mqttv5.client.IMqttToken t) {}

            @Override
            public void connectComplete(boolean reconnect, String uri) {}

            @Override
            public void authPacketArrived(int reason, MqttProperties p) {}
          });
    }

    /** Connects with a clean start, as {@code user} with {@code password} (both may be null). */
    Client connect(String user, String password) throws MqttException {
      MqttConnectionOptions o = new MqttConnectionOptions();
      o.setCleanStart(true);
      o.setAutomaticReconnect(false);
      if (user != null) {
        o.setUserName(user);
      }
      if (password != null) {
        o.setPassword(password.getBytes(StandardCharsets.UTF_8));
      }
      paho.connect(o).waitForCompletion(10_000);
      return this;
    }

    /** Subscribes; returns the SUBACK's reason codes. */
    int[] subscribe(String filter, int qos) throws MqttException {
      IMqttToken t = paho.subscribe(new MqttSubscription(filter, qos));
      t.waitForCompletion(10_000);
      return t.getReasonCodes();
    }

    /**
     * Publishes {@code payload} at {@code qos} with {@code userProperties} (name, value pairs);
     * returns the PUBACK's reason codes (empty for QoS 0).
     */
    int[] publish(String topic, String payload, int qos, String... userProperties)
        throws MqttException {
      MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
      m.setQos(qos);
      MqttProperties p = new MqttProperties();
      List<UserProperty> users = new java.util.ArrayList<>();
      for (int i = 0; i < userProperties.length; i += 2) {
        users.add(new UserProperty(userProperties[i], userProperties[i + 1]));
      }
      p.setUserProperties(users);
      m.setProperties(p);
      IMqttToken t = paho.publish(topic, m);
      t.waitForCompletion(10_000);
      int[] codes = t.getReasonCodes();
      return codes == null ? new int[0] : codes;
    }

    /** Publishes {@code m} as it is; returns the PUBACK's reason codes (empty for QoS 0). */
    int[] publish(String topic, MqttMessage m) throws MqttException {
      IMqttToken t = paho.publish(topic, m);
      t.waitForCompletion(10_000);
      int[] codes = t.getReasonCodes();
      return codes == null ? new int[0] : codes;
    }

    /** Unsubscribes; returns the UNSUBACK's reason codes. */
    int[] unsubscribe(String filter) throws MqttException {
      IMqttToken t = paho.unsubscribe(filter);
      t.waitForCompletion(10_000);
      return t.getReasonCodes();
    }

    /** The next message received, waiting up to 20 s; fails if none comes. */
    Received next() throws InterruptedException {
      Received r = received.poll(20, TimeUnit.SECONDS);
      if (r == null) {
        throw new AssertionError("no message within 20 s");
      }
      return r;
    }

    @Override
    public void close() {
      try {
        if (paho.isConnected()) {
          paho.disconnect().waitForCompletion(5_000);
        }
        paho.close(true);
      } catch (MqttException e) {
        // closing anyway
      }
    }
  }
}
