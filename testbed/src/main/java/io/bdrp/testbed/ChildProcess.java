package io.bdrp.testbed;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server process started for a run (a router, a broker): its output goes to a log file in the run
 * folder, {@link #awaitPort} waits until it listens, and {@link #close()} ends it, and only it, by
 * its PID — politely first, then forcibly.
 */
public final class ChildProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Path log;

  private ChildProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /** Starts {@code command}, its standard output and error appended to {@code log}. */
  public static ChildProcess start(String name, List<String> command, Path log) throws IOException {
    Files.createDirectories(log.toAbsolutePath().getParent());
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    try {
      return new ChildProcess(name, pb.start(), log);
    } catch (IOException e) {
      throw new IOException(
          "cannot start " + name + " (" + command.get(0) + "): " + e.getMessage());
    }
  }

  /**
   * The command that runs {@code mainClass} in a new JVM like this one: same java binary and class
   * path, with the given JVM options.
   */
  public static List<String> java(List<String> jvmOptions, String mainClass, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Waits until something accepts connections on {@code port} of 127.0.0.1. */
  public void awaitPort(int port, Duration timeout) throws IOException, InterruptedException {
    awaitPort("127.0.0.1", port, timeout);
  }

  /** Waits until something accepts connections at {@code host}:{@code port}. */
  public void awaitPort(String host, int port, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IOException(
            name + " exited with status " + process.exitValue() + " before listening; see " + log);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), 200);
        return;
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          throw new IOException(
              name + " is not listening on port " + port + " after " + timeout + "; see " + log);
        }
        Thread.sleep(50);
      }
    }
  }

  /** The process id. */
  public long pid() {
    return process.pid();
  }

  /** The log file. */
  public Path log() {
    return log;
  }

  /** Whether the process is still running. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * A header naming the process and whether it runs, then the last {@code lines} lines of its log,
   * each on its own line: for an error that says why a server did not answer.
   */
  public String describeWithLogTail(int lines) {
    StringBuilder b = new StringBuilder("\n--- ").append(this);
    b.append(isAlive() ? ", running" : ", exited");
    try {
      List<String> all = Files.readAllLines(log);
      for (String l : all.subList(Math.max(0, all.size() - lines), all.size())) {
        b.append("\n  ").append(l);
      }
    } catch (IOException | RuntimeException e) {
      b.append("\n  (log unreadable: ").append(e).append(')');
    }
    return b.toString();
  }

  /**
   * Ends the process with SIGKILL, as {@code kill -9} does (no shutdown hooks, nothing flushed),
   * and waits up to 10 s for it to be gone.
   */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  /** CPU time the process has used so far, or zero when the platform does not say. */
  public Duration cpu() {
    return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
