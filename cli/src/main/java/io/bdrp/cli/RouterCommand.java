package io.bdrp.cli;

import io.bdrp.router.Router;
import io.bdrp.router.RouterConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
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

  @Override
  public Integer call() throws Exception {
    PrintWriter o = spec.commandLine().getOut();
    RouterConfig c = RouterConfig.load(config);
    Router r = Router.start(c);
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook =
        new Thread(
            () -> {
              r.close();
              stopped.countDown();
            },
            "bdrp-router-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    o.printf(
        "router %d listening: clients %s, routers %s%s%n",
        r.number(),
        Addresses.format(r.clientAddress()),
        Addresses.format(r.routerAddress()),
        r.metricsAddress() == null
            ? ""
            : ", metrics http://" + Addresses.format(r.metricsAddress()) + "/metrics");
    o.flush();
    stopped.await();
    return 0;
  }
}
