package io.bdrp.router;

import io.bdrp.router.config.ConfigAddress;
import io.bdrp.router.config.RouterConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs one router until the process is stopped (SIGINT or SIGTERM): the router process itself, for
 * {@code bdrp router} and for whatever starts router processes from the router's own jar (the
 * testbed does, through its declared dependency on this module). {@code java -cp JAR
 * io.bdrp.router.RouterMain --config FILE} takes the configuration file alone; {@code bdrp router}
 * adds its overrides and calls {@link #run}.
 */
public final class RouterMain {
  private RouterMain() {}

  /**
   * {@code --config FILE}. Exits 2 for a bad argument, file, configuration or {@code BDRP_LOG_*}
   * setting, and 1 when the router cannot start (a port in use), each with one line on stderr.
   */
  public static void main(String[] args) throws InterruptedException {
    if (args.length != 2 || !args[0].equals("--config")) {
      System.err.println(
          "usage: java -cp bdrp.jar " + RouterMain.class.getName() + " --config FILE");
      System.exit(2);
    }
    String refused = Logging.configure(System.getenv());
    if (refused != null) {
      System.err.println(refused);
      System.exit(ExitStatus.USAGE);
    }
    RouterConfig config;
    try {
      config = RouterConfig.load(Path.of(args[1]));
    } catch (IOException | IllegalArgumentException e) {
      // A file that cannot be read is the caller's to fix, as a bad one is.
      System.err.println(ExitStatus.line(e));
      System.exit(ExitStatus.USAGE);
      return;
    }
    try {
      run(config, new PrintWriter(System.out, true));
    } catch (IllegalStateException | UncheckedIOException e) {
      System.err.println(ExitStatus.line(e));
      System.exit(ExitStatus.FAILURE);
    }
  }

  /**
   * Starts a router from {@code config}, prints the line that says where it listens to {@code out},
   * and returns when the JVM is stopped, after the router has closed.
   */
  public static void run(RouterConfig config, PrintWriter out) throws InterruptedException {
    Router r = Router.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  r.close();
                  stopped.countDown();
                },
                "bdrp-router-shutdown"));
    out.printf(
        "router %d listening: clients %s, routers %s%s%s%s%n",
        r.number(),
        format(r.clientAddress()),
        format(r.routerAddress()),
        r.mqttAddress() == null ? "" : ", mqtt " + format(r.mqttAddress()),
        r.udpAddress() == null ? "" : ", udp " + format(r.udpAddress()),
        r.metricsAddress() == null
            ? ""
            : ", metrics http://" + format(r.metricsAddress()) + "/metrics");
    out.flush();
    stopped.await();
  }

  /** HOST:PORT, an IPv6 host in brackets. */
  public static String format(InetSocketAddress a) {
    return ConfigAddress.format(a);
  }
}
