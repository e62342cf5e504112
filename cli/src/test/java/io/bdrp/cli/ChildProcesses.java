package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bdrp} commands run as child JVMs ({@link Main} on the test classpath, with the JDK running
 * the tests), their output collected line by line. {@link #endAll()} ends every process started, by
 * its PID only.
 */
final class ChildProcesses {
  /** The line a router prints once it listens, with its number and ports. */
  static final Pattern LISTENING =
      Pattern.compile(
          "router (\\d+) listening: clients [^:]+:(\\d+), routers [^:]+:(\\d+)"
              + ".*metrics http://[^:]+:(\\d+)/metrics");

  /**
   * A running process and the lines it has printed; {@code out} stays empty when the caller reads
   * stdout itself.
   */
  record Proc(Process process, List<String> out, List<String> err) {}

  private final List<Process> started = new ArrayList<>();

  /** The java command line that runs {@code bdrp args...} from the test classpath. */
  static List<String> command(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("--enable-native-access=ALL-UNNAMED"); // as ./bdrp runs it: JNI without a warning
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Starts {@code bdrp args...} in {@code dir}, collecting stdout and stderr. */
  Proc start(Path dir, String... args) throws IOException {
    return start(dir, true, args);
  }

  /**
   * Starts {@code bdrp args...} in {@code dir}, collecting stderr, and stdout too unless {@code
   * collectStdout} is false (the caller then reads {@code process().getInputStream()}).
   */
  Proc start(Path dir, boolean collectStdout, String... args) throws IOException {
    return start(dir, collectStdout, List.of(), args);
  }

  /**
   * As {@link #start(Path, boolean, String...)}, with {@code prefix} before the java command (such
   * as a {@code setpriv} invocation that runs it with fewer capabilities).
   */
  Proc start(Path dir, boolean collectStdout, List<String> prefix, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(command(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
    pb.environment().put("BDRP_LOG_LEVEL", "WARN");
    Process p = pb.start();
    started.add(p);
    List<String> out = new CopyOnWriteArrayList<>();
    List<String> err = new CopyOnWriteArrayList<>();
    if (collectStdout) {
      pump(p.getInputStream(), out);
    }
    pump(p.getErrorStream(), err);
    return new Proc(p, out, err);
  }

  private static void pump(java.io.InputStream in, List<String> into) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  into.add(line);
                }
              } catch (IOException e) {
                // the process ended
              }
            });
    t.setDaemon(true);
    t.start();
  }

  /** Waits up to 60 s for {@code condition}, failing early if the process exits. */
  static void await(String what, Proc p, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (!p.process().isAlive() || System.nanoTime() > deadline) {
        fail(
            "waiting for "
                + what
                + (p.process().isAlive() ? ": timed out" : ": process exited")
                + "\nstdout: "
                + p.out()
                + "\nstderr: "
                + p.err());
      }
      Thread.sleep(20);
    }
  }

  /** A router started from a YAML file, with the ports it listens on. */
  record Router(Proc proc, int clientPort, int routerPort, int metricsPort) {}

  /**
   * Starts {@code bdrp router} configured by {@code yaml} (written to {@code dir}) and waits until
   * it listens; {@code yaml} should listen on port 0 of 127.0.0.1 for clients, routers and metrics.
   */
  Router startRouter(Path dir, int number, String yaml) throws IOException, InterruptedException {
    Path file = dir.resolve("router-" + number + ".yaml");
    Files.writeString(file, yaml);
    Proc p = start(dir, "router", "--config", file.toString());
    await(
        "router " + number + " to listen",
        p,
        () -> p.out().stream().anyMatch(l -> LISTENING.matcher(l).find()));
    Matcher m =
        p.out().stream().map(LISTENING::matcher).filter(Matcher::find).findFirst().orElseThrow();
    assertEquals(number, Integer.parseInt(m.group(1)));
    return new Router(
        p,
        Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)),
        Integer.parseInt(m.group(4)));
  }

  /** Ends every process started: SIGTERM to each PID, then SIGKILL to any still running. */
  void endAll() throws InterruptedException {
    for (Process p : started) {
      p.destroy(); // SIGTERM to this PID only
    }
    for (Process p : started) {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(5, TimeUnit.SECONDS);
      }
    }
  }
}
