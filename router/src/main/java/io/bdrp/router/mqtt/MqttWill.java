package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.security.ClientAuth;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The will of an MQTT session (MQTT 3.1.1 §3.1.2.5, MQTT 5 §3.1.3.2): a message published through
 * the data plane, like a PUBLISH of the client, when its connection ends other than by the client's
 * DISCONNECT (or by an MQTT 5 DISCONNECT with reason 0x04, Disconnect with Will Message).
 *
 * <p>It is checked at CONNECT: a will topic that is not a valid topic name, a will no bdrp message
 * holds, or one outside the user's publish permission refuses the CONNECT (MQTT 5 0x90, 0x83, 0x87;
 * 3.1.1 0x05, not authorized, for all, which is the nearest 3.1.1 has).
 *
 * <p><b>Will Delay Interval</b> (MQTT 5): the will waits that long on the router's event loop
 * timer, and is cancelled if a session with the same client identifier connects meanwhile. The
 * router keeps the delayed will though it keeps no session after the connection, so that a client
 * that reconnects quickly does not raise its will. Its Message Expiry Interval counts from when it
 * is published. Counted in {@code bdrp_mqtt_wills_total{result}}.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttWill {
  /** Longest Will Delay Interval kept, in seconds (a day): longer ones are cut to it. */
  static final long MAX_DELAY_SECONDS = 86_400;

  private final String topic;
  private final int qos;
  private final MqttProperties properties;
  private final byte[] payload;
  private final long delaySeconds;
  private final boolean retain;

  private MqttWill(
      String topic,
      int qos,
      MqttProperties properties,
      byte[] payload,
      long delaySeconds,
      boolean retain) {
    this.retain = retain;
    this.topic = topic;
    this.qos = qos;
    this.properties = properties;
    this.payload = payload;
    this.delaySeconds = delaySeconds;
  }

  /**
   * The will of {@code c}: null if it has none, a {@link MqttConnect.Refusal} if it is refused,
   * else the will.
   */
  static Object of(MqttConnectMessage c, boolean v5, ClientAuth.Permissions permissions) {
    if (!c.variableHeader().isWillFlag()) {
      return null;
    }
    String topic = c.payload().willTopic();
    try {
      MqttTopic.checkName(topic);
    } catch (IllegalArgumentException e) {
      return refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_TOPIC_NAME_INVALID,
          "will_topic_invalid",
          "the will topic: " + e.getMessage());
    }
    MqttProperties props = v5 ? c.payload().willProperties() : null;
    long delay = 0;
    if (props != null
        && props.getProperty(MqttProperties.WILL_DELAY_INTERVAL)
            instanceof MqttProperties.IntegerProperty d) {
      delay = Math.min(Integer.toUnsignedLong(d.value()), MAX_DELAY_SECONDS);
    }
    byte[] payload = c.payload().willMessageInBytes();
    MqttWill will =
        new MqttWill(
            topic,
            c.variableHeader().willQos(),
            props,
            payload == null ? new byte[0] : payload,
            delay,
            c.variableHeader().isWillRetain());
    Message m;
    try {
      m = will.message();
    } catch (IllegalArgumentException e) {
      return refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_IMPLEMENTATION_SPECIFIC,
          "will_unmappable",
          "no bdrp message holds the will: " + e.getMessage());
    }
    if (!permissions.mayPublish(m)) {
      return refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED_5,
          "will_not_authorized",
          "the will is outside the user's publish permission");
    }
    return will;
  }

  private static MqttConnect.Refusal refusal(MqttConnectReturnCode v5, String result, String why) {
    return new MqttConnect.Refusal(
        MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED, v5, result, why);
  }

  private Message message() {
    return MqttPublishes.toMessage(
        topic, qos, properties, ByteBuffer.wrap(payload), System.currentTimeMillis());
  }

  /**
   * The connection of {@code clientId} ended without the DISCONNECT that discards the will:
   * publishes it now, or after its delay unless a session of {@code clientId} connects meanwhile
   * ({@code reconnected}: one has already).
   */
  void connectionEnded(
      MqttListener listener,
      EventExecutor loop,
      String clientId,
      boolean reconnected,
      MqttMetrics.Protocol counters) {
    if (delaySeconds == 0) {
      publish(listener, counters);
    } else if (reconnected) {
      counters.wills("cancelled").inc();
    } else {
      ScheduledFuture<?> f =
          loop.schedule(
              () -> {
                listener.delayedWills.remove(clientId);
                publish(listener, counters);
              },
              delaySeconds,
              TimeUnit.SECONDS);
      ScheduledFuture<?> before = listener.delayedWills.put(clientId, f);
      if (before != null) {
        before.cancel(false);
      }
    }
  }

  /** A session of {@code clientId} connects: the will waiting for it, if any, is not sent. */
  static void reconnected(MqttListener listener, String clientId, MqttMetrics.Protocol counters) {
    ScheduledFuture<?> f = listener.delayedWills.remove(clientId);
    if (f != null && f.cancel(false)) {
      counters.wills("cancelled").inc();
    }
  }

  private void publish(MqttListener listener, MqttMetrics.Protocol counters) {
    boolean sent;
    try {
      Message m = message();
      if (retain) {
        // A retained will is stored like a retained PUBLISH; if the store is full it still goes
        // to the subscribers it matches, counted.
        Message stamped = listener.retained.store.stamp(m, System.currentTimeMillis());
        if (stamped == null) {
          counters.wills("retained_full").inc();
        } else {
          m = stamped;
        }
      }
      sent = MqttInbound.toDataPlane(listener, m);
    } catch (IllegalArgumentException e) {
      sent = false; // checked at CONNECT; its expiry cannot make it unmappable
    }
    counters.wills(sent ? "published" : "unmappable").inc();
  }
}
