package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.LinkMeter;
import io.bdrp.testbed.Ports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * bdrp through its MQTT port: one {@code bdrp router} process per server (the real command, from a
 * generated config file with {@code listen.mqtt}), routers in a line, router i dialling router i+1
 * through a {@link LinkMeter}, DATA over the links' TCP connections.
 *
 * <p>A bucket subscription is a content filter: {@code bench/+/m?mqtt.level.1 = "N"}, the topic
 * filter without the bucket and, after the {@code ?}, the predicate on the topic's second level
 * (docs/mqtt.md), which routers advertise and route on like any host's predicate. The level comes
 * after the wildcard rather than the filter ending in one because MQTT clients check a filter's
 * wildcards themselves, and refuse {@code bench/+?…}.
 */
public final class BdrpMqtt extends MqttSystem {
  private final List<String> jvmOptions;

  /** Router JVMs with {@code jvmOptions}; every publish and subscription at {@code qos}. */
  public BdrpMqtt(List<String> jvmOptions, int qos) {
    super(qos);
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  @Override
  public String name() {
    return "bdrp";
  }

  @Override
  public String filter(int bucket) {
    return bucket == ALL ? super.filter(bucket) : PREFIX + "+/m?mqtt.level.1 = \"" + bucket + "\"";
  }

  @Override
  protected void startServers(int count, Path dir) throws Exception {
    int[] clientPorts = new int[count];
    int[] routerPorts = new int[count];
    mqttPorts = new int[count];
    for (int i = 0; i < count; i++) {
      clientPorts[i] = Ports.free();
      routerPorts[i] = Ports.free();
      mqttPorts[i] = Ports.free();
    }
    for (int i = 0; i + 1 < count; i++) {
      links.add(LinkMeter.start(i + "-" + (i + 1), routerPorts[i + 1]));
    }
    for (int i = 0; i < count; i++) {
      StringBuilder y = new StringBuilder();
      y.append("router: ").append(i).append('\n');
      y.append("listen:\n");
      y.append("  clients: 127.0.0.1:").append(clientPorts[i]).append('\n');
      y.append("  routers: 127.0.0.1:").append(routerPorts[i]).append('\n');
      y.append("  mqtt: 127.0.0.1:").append(mqttPorts[i]).append('\n');
      if (count > 1) {
        y.append("neighbours:\n");
      }
      if (i > 0) {
        y.append("  - router: ").append(i - 1).append('\n'); // it dials us
        y.append("    transport: tcp\n");
      }
      if (i + 1 < count) {
        y.append("  - router: ").append(i + 1).append('\n');
        y.append("    address: 127.0.0.1:").append(links.get(i).port()).append('\n');
        y.append("    transport: tcp\n");
      }
      Path config = dir.resolve("bdrp-router-" + i + ".yaml");
      Files.writeString(config, y);
      servers.add(
          ChildProcess.start(
              "bdrp router " + i,
              ChildProcess.java(jvmOptions, BdrpSystem.MAIN, "--config", config.toString()),
              dir.resolve("bdrp-router-" + i + ".log")));
    }
    for (int i = 0; i < count; i++) {
      servers.get(i).awaitPort(mqttPorts[i], Duration.ofSeconds(60));
    }
  }
}
