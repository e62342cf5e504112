package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.LinkMeter;
import io.bdrp.testbed.Ports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Eclipse Mosquitto: one {@code mosquitto} process per server (Debian's package {@code mosquitto},
 * or the binary named by {@code BDRP_MOSQUITTO}), each from a generated config file: a listener on
 * 127.0.0.1, anonymous clients, no persistence, TCP_NODELAY, and in-flight and queue limits raised
 * to bdrp's MQTT delivery window (1024 QoS 1 deliveries in flight per session) and beyond, so that
 * the broker's defaults (20 in flight, 1000 queued) do not hold it back or drop what bdrp would
 * deliver.
 *
 * <p>Several servers form a bridge chain: broker i has a bridge to broker i+1 (dialled through a
 * {@link LinkMeter}) forwarding {@code #} out at the run's QoS, the way Mosquitto federates: every
 * message crosses every bridge whatever the subscribers downstream want, since a bridge's topics
 * are configured, not learnt. A bucket subscription is the topic {@code bench/N/m}.
 */
public final class MosquittoSystem extends MqttSystem {
  /** Every publish and subscription at {@code qos}. */
  public MosquittoSystem(int qos) {
    super(qos);
  }

  @Override
  public String name() {
    return "mosquitto";
  }

  /** The mosquitto binary, or null. */
  static Path binary() {
    return binary("BDRP_MOSQUITTO", "mosquitto");
  }

  @Override
  public String missing() {
    return binary() == null
        ? "mosquitto not found (/usr/sbin or PATH): install Debian's mosquitto package "
            + "(apt-get install mosquitto) or set BDRP_MOSQUITTO"
        : null;
  }

  /** The config of broker {@code i} of {@code count}: its listener, and its bridge onwards. */
  String config(int i, int count) {
    StringBuilder c = new StringBuilder();
    c.append("listener ").append(mqttPorts[i]).append(" 127.0.0.1\n");
    c.append("allow_anonymous true\n");
    c.append("persistence false\n");
    c.append("set_tcp_nodelay true\n");
    c.append("max_inflight_messages 1024\n");
    c.append("max_queued_messages 100000\n");
    c.append("log_dest stdout\n");
    c.append("log_type error\nlog_type warning\nlog_type notice\n");
    if (i + 1 < count) {
      c.append("\nconnection bridge-").append(i).append('-').append(i + 1).append('\n');
      c.append("address 127.0.0.1:").append(links.get(i).port()).append('\n');
      c.append("topic # out ").append(qos()).append('\n');
      c.append("bridge_protocol_version mqttv311\n");
      c.append("cleansession true\n");
      c.append("notifications false\n");
      c.append("start_type automatic\n");
      c.append("restart_timeout 1\n");
    }
    return c.toString();
  }

  @Override
  protected void startServers(int count, Path dir) throws Exception {
    Path bin = binary();
    mqttPorts = new int[count];
    for (int i = 0; i < count; i++) {
      mqttPorts[i] = Ports.free();
    }
    for (int i = 0; i + 1 < count; i++) {
      links.add(LinkMeter.start(i + "-" + (i + 1), mqttPorts[i + 1]));
    }
    for (int i = 0; i < count; i++) {
      Path config = dir.resolve("mosquitto-" + i + ".conf");
      Files.writeString(config, config(i, count));
      servers.add(
          ChildProcess.start(
              "mosquitto " + i,
              List.of(bin.toString(), "-c", config.toString()),
              dir.resolve("mosquitto-" + i + ".log")));
    }
    for (int i = 0; i < count; i++) {
      servers.get(i).awaitPort(mqttPorts[i], Duration.ofSeconds(60));
    }
  }
}
