package io.bdrp.cli;

import io.bdrp.router.RouterMain;
import io.bdrp.router.config.RouterConfig;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bdrp router}: runs a router daemon until it is stopped (SIGINT or SIGTERM). */
@Command(
    name = "router",
    mixinStandardHelpOptions = true,
    description = {
      "Runs a B-DRP router from a YAML configuration (see docs/router-example.yaml) until it is"
          + " stopped with SIGINT or SIGTERM. Logs go to stderr; BDRP_LOG_LEVEL sets the level.",
    })
final class RouterCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "The router's YAML configuration.")
  Path config;

  @Option(names = "--clients", description = "Overrides listen.clients (HOST:PORT).")
  String clients;

  @Option(names = "--routers", description = "Overrides listen.routers (HOST:PORT).")
  String routers;

  @Option(names = "--metrics", description = "Overrides listen.metrics (HOST:PORT).")
  String metrics;

  @Option(names = "--mqtt", description = "Overrides listen.mqtt (HOST:PORT): the MQTT port.")
  String mqtt;

  @Option(names = "--epoch", description = "Overrides epoch (default: the wall clock in ms).")
  Long epoch;

  @Option(
      names = "--fast-path",
      paramLabel = "jvm|ebpf",
      description =
          "Overrides fastPath: where transit DATA from UDP links is forwarded, in the JVM or in the"
              + " kernel by the eBPF sidecar (needs root; without it the router logs why and"
              + " forwards in the JVM).")
  String fastPath;

  /** The file's configuration with the flags applied. */
  RouterConfig effective() throws java.io.IOException {
    RouterConfig c = RouterConfig.load(config);
    return new RouterConfig(
        c.router(),
        epoch != null ? epoch : c.epoch(),
        clients != null ? Addresses.parse("--clients", clients, 0) : c.clientListen(),
        routers != null ? Addresses.parse("--routers", routers, 0) : c.routerListen(),
        metrics != null ? Addresses.parse("--metrics", metrics, 0) : c.metricsListen(),
        c.udpListen(),
        c.neighbours(),
        c.routing(),
        c.bloom(),
        c.limits(),
        c.routerToken(),
        fastPath == null ? c.fastPath() : fastPath(fastPath),
        c.clientAuth(),
        c.clientTls(),
        c.routerTls(),
        c.metricsAccess(),
        c.udpProtection(),
        mqtt != null ? Addresses.parse("--mqtt", mqtt, 0) : c.mqttListen());
  }

  private static RouterConfig.FastPath fastPath(String v) {
    return switch (v.toLowerCase(java.util.Locale.ROOT)) {
      case "jvm" -> RouterConfig.FastPath.JVM;
      case "ebpf" -> RouterConfig.FastPath.EBPF;
      default ->
          throw new IllegalArgumentException("--fast-path: expected jvm or ebpf, got '" + v + "'");
    };
  }

  @Override
  public Integer call() throws Exception {
    if (epoch != null && epoch < 1) {
      throw new IllegalArgumentException("--epoch must be positive, got " + epoch);
    }
    RouterMain.run(effective(), spec.commandLine().getOut());
    return 0;
  }
}
