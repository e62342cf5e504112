package io.bdrp.cli;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Predicate;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bdrp sub}: prints every delivered message as one JSON object per line. */
@Command(
    name = "sub",
    mixinStandardHelpOptions = true,
    description = {
      "Attaches to a router with a predicate and prints each delivered message on stdout as one"
          + " JSON object per line: attribute name -> string, integer, float or boolean; the body,"
          + " if any, base64 under \"$body\". Status goes to stderr.",
      "When stdout is closed (bdrp sub ... | head -1), exits with status 0 at the next message"
          + " it would print.",
    })
final class SubCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @picocli.CommandLine.Mixin ClientCredentials credentials;

  @picocli.CommandLine.Mixin RouterAddressOption router;

  @Option(
      names = "--predicate",
      required = true,
      description = "The predicate, e.g. 'stock = \"XYZ\" && price > 20'.")
  String predicate;

  @Option(
      names = "--count",
      defaultValue = "0",
      description = "Exit after this many messages; 0: run until stopped (default).")
  long count;

  @Option(
      names = "--name",
      defaultValue = "bdrp-sub",
      description = "Client name shown by the router (default: ${DEFAULT-VALUE}).")
  String name;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Predicate p = Predicate.parse(predicate); // a syntax error names the column, before connecting
    CountDownLatch done = new CountDownLatch(1);
    AtomicLong seen = new AtomicLong();
    AtomicBoolean stdoutClosed = new AtomicBoolean();
    try (BdrpClient c =
        router.connect(
            credentials
                .apply(BdrpClient.builder())
                .name(name)
                .onMessage(
                    m -> {
                      if (stdoutClosed.get()) {
                        return;
                      }
                      out.println(JsonMessages.format(m));
                      // The writers swallow a write's IOException (EPIPE once the reader of a pipe
                      // has
                      // gone, as `head` does) and only remember it: ask both, and stop then.
                      if (out.checkError() || System.out.checkError()) {
                        stdoutClosed.set(true);
                        done.countDown();
                        return;
                      }
                      if (count > 0 && seen.incrementAndGet() >= count) {
                        done.countDown();
                      }
                    })
                .listener(
                    new BdrpClient.ConnectionListener() {
                      @Override
                      public void disconnected(Throwable cause, boolean willReconnect) {
                        err.println(
                            "bdrp sub: "
                                + cause.getMessage()
                                + (willReconnect ? "; reconnecting" : ""));
                        err.flush();
                      }
                    }),
            err,
            "bdrp sub")) {
      c.setPredicate(p).get(10, TimeUnit.SECONDS);
      err.println("bdrp sub: subscribed at router " + c.routerNumber() + ": " + p);
      err.flush();
      Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));
      done.await();
    }
    return 0;
  }
}
