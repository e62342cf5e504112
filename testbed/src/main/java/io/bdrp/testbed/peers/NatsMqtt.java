package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.Ports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * nats-server through its MQTT port: one server (Debian's package {@code nats-server}, or the
 * binary named by {@code BDRP_NATS_SERVER}) from a generated config file with a {@code
 * server_name}, JetStream (which nats-server's MQTT support needs: it keeps QoS 1 messages and
 * sessions in streams) stored in the run folder, and an {@code mqtt} listener on 127.0.0.1. A
 * bucket subscription is the topic {@code bench/N/m}. Single server only: the three-server line is
 * bdrp against a Mosquitto bridge chain.
 */
public final class NatsMqtt extends MqttSystem {
  /** Every publish and subscription at {@code qos}. */
  public NatsMqtt(int qos) {
    super(qos);
  }

  @Override
  public String name() {
    return "nats";
  }

  @Override
  public String missing() {
    try {
      NatsSystem.binary();
      return null;
    } catch (java.io.IOException e) {
      return e.getMessage();
    }
  }

  @Override
  protected void startServers(int count, Path dir) throws Exception {
    if (count != 1) {
      throw new IllegalArgumentException("nats over MQTT runs one server only");
    }
    mqttPorts = new int[] {Ports.free()};
    int natsPort = Ports.free();
    Path store = dir.resolve("jetstream");
    Files.createDirectories(store);
    String c =
        "server_name: bench-0\n"
            + "listen: 127.0.0.1:"
            + natsPort
            + "\n"
            + "jetstream {\n  store_dir: \""
            + store.toAbsolutePath()
            + "\"\n}\n"
            + "mqtt {\n  listen: 127.0.0.1:"
            + mqttPorts[0]
            + "\n}\n";
    Path config = dir.resolve("nats-server.conf");
    Files.writeString(config, c);
    servers.add(
        ChildProcess.start(
            "nats-server",
            List.of(NatsSystem.binary().toString(), "-c", config.toString()),
            dir.resolve("nats-server.log")));
    servers.get(0).awaitPort(mqttPorts[0], Duration.ofSeconds(30));
  }
}
