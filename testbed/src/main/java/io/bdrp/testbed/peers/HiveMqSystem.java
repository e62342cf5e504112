package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.Ports;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * HiveMQ Community Edition: one broker JVM ({@link HiveMqBrokerMain}, HiveMQ's embedded form from
 * Maven Central, with the same JVM options as the bdrp routers) in a temporary home under the run
 * folder. A bucket subscription is the topic {@code bench/N/m}. Single server only: HiveMQ CE has
 * no bridges or clustering.
 *
 * <p>HiveMQ and what it needs are not in bdrp-lab.jar (they would more than double it, and its
 * class path must not change bdrp's): the testbed's build writes HiveMQ's class path, jars of the
 * local Maven repository, to {@code target/hivemq.classpath} beside the testbed's classes or jar,
 * and the broker JVM runs with that class path ahead of this one. Without that file, or with a jar
 * of it missing, the system is skipped.
 */
public final class HiveMqSystem extends MqttSystem {
  private final List<String> jvmOptions;

  /** Broker JVM with {@code jvmOptions}; every publish and subscription at {@code qos}. */
  public HiveMqSystem(List<String> jvmOptions, int qos) {
    super(qos);
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  @Override
  public String name() {
    return "hivemq";
  }

  /** The file with HiveMQ's class path, beside this class's folder or jar. */
  static Path classPathFile() {
    try {
      Path here =
          Path.of(HiveMqSystem.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return here.toAbsolutePath().getParent().resolve("hivemq.classpath");
    } catch (URISyntaxException | RuntimeException e) {
      return Path.of("testbed", "target", "hivemq.classpath");
    }
  }

  /** HiveMQ's class path, or null with the reason in {@code why}. */
  private static String classPath(StringBuilder why) {
    Path f = classPathFile();
    if (!Files.isReadable(f)) {
      why.append("no ").append(f).append(": build the testbed module (mvn package) to write it");
      return null;
    }
    try {
      String cp = Files.readString(f).strip();
      for (String jar : cp.split(java.io.File.pathSeparator)) {
        if (!jar.isEmpty() && !Files.exists(Path.of(jar))) {
          why.append(jar).append(" is missing: build the testbed module again (mvn package)");
          return null;
        }
      }
      return cp.isEmpty() ? null : cp;
    } catch (IOException e) {
      why.append("cannot read ").append(f).append(": ").append(e.getMessage());
      return null;
    }
  }

  @Override
  public String missing() {
    StringBuilder why = new StringBuilder();
    return classPath(why) == null
        ? "HiveMQ CE not found: " + (why.isEmpty() ? "empty class path" : why)
        : null;
  }

  @Override
  protected void startServers(int count, Path dir) throws Exception {
    if (count != 1) {
      throw new IllegalArgumentException("HiveMQ CE runs one server only");
    }
    String cp = classPath(new StringBuilder());
    mqttPorts = new int[] {Ports.free()};
    List<String> cmd = ChildProcess.java(jvmOptions, HiveMqBrokerMain.class.getName());
    int at = cmd.indexOf("-cp");
    List<String> withHiveMq = new ArrayList<>(cmd);
    withHiveMq.set(at + 1, cp + java.io.File.pathSeparator + cmd.get(at + 1));
    withHiveMq.add(dir.resolve("hivemq-home").toAbsolutePath().toString());
    withHiveMq.add(Integer.toString(mqttPorts[0]));
    servers.add(ChildProcess.start("hivemq", withHiveMq, dir.resolve("hivemq.log")));
    servers.get(0).awaitPort(mqttPorts[0], Duration.ofSeconds(90));
  }
}
