package io.bdrp.testbed.net;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Propagation delay on emulated links, for kernels without netem: a small C program, {@code
 * bdrp-delayer}, holds the packets that arrive on a delayed link in an NFQUEUE queue and accepts
 * each once the link's delay has passed. One delayer runs in each namespace that has delayed links,
 * with one queue per such link; an {@code iptables-legacy} rule in the namespace's {@code mangle
 * PREROUTING} chain sends the link's arriving IPv4 packets to its queue. Both ends delay what they
 * receive, so each direction is delayed once.
 *
 * <p>Arriving packets, not departing ones: on egress the sending socket still owns a held packet,
 * and TCP's small-queue limit then throttles the sender to a few packets per delay (a 1 MByte/s
 * link delayed 20 ms each way carried 0.3 MByte/s); on ingress the packet belongs to no socket.
 *
 * <p>The program's source is a resource of this package; {@link #binary} compiles it with the
 * system's C compiler on first use into {@code /run/bdrp-testbed/bin}, under a name that carries
 * the source's hash. Its PIDs go into the network's state file, so {@link Emulator#down} ends them,
 * and only them, by PID. Used only from {@link Emulator}'s {@code up} and {@code down}, on the
 * caller's thread.
 */
public final class Delayer {
  private static final String SOURCE = "bdrp-delayer.c";
  private static final String PREFIX = "bdrp-delayer-";
  private static final String PACKAGES = "apt-get install gcc libnetfilter-queue-dev iptables";

  /** The largest delay the program takes, 10 s. */
  public static final long MAX_DELAY_MICROS = 10_000_000L;

  private Delayer() {}

  /** A delayer process: the namespace whose links it delays, and its PID. */
  public record Running(String namespace, long pid) {}

  /**
   * Why links cannot be delayed on this machine (no C compiler, no libnetfilter_queue headers, no
   * {@code iptables-legacy}), or empty when they can; compiles the delayer if needed.
   */
  public static Optional<String> unavailable() {
    try {
      binary();
      iptables();
      return Optional.empty();
    } catch (IOException e) {
      return Optional.of(e.getMessage());
    }
  }

  private static String iptables() throws IOException {
    if (!Shell.onPath("iptables-legacy")) {
      throw new IOException(
          "link delay needs iptables-legacy (this kernel has no nftables queue); Debian: "
              + PACKAGES);
    }
    return "iptables-legacy";
  }

  /** The compiled delayer, compiled now if it is missing or its source has changed. */
  static Path binary() throws IOException {
    try {
      return CPrograms.binary(SOURCE, PREFIX, PACKAGES, "-lnetfilter_queue");
    } catch (IOException e) {
      String m = e.getMessage();
      if (m != null && m.contains("libnetfilter_queue")) {
        throw new IOException(
            "link delay needs libnetfilter_queue's headers and library; Debian: " + PACKAGES);
      }
      throw new IOException("cannot build the link delayer: " + m, e);
    }
  }

  /** Where the delayer of {@code namespace} writes its messages and, when it ends, its counters. */
  public static Path log(String namespace) {
    return CPrograms.DIR.resolve(namespace + ".delayer.log");
  }

  /**
   * Starts a delayer in every namespace of {@code n} with delayed links, and only then sends each
   * delayed link's arriving packets to its queue, so that no packet meets a queue nobody reads. If
   * anything fails, the delayers started are ended again.
   */
  static List<Running> start(Emulator.Network n) throws IOException {
    // namespace -> (interface -> delay), interfaces in link order: queue numbers 0, 1, ...
    Map<String, Map<String, Long>> delayed = new LinkedHashMap<>();
    for (Emulator.LinkNet l : n.links()) {
      if (l.delayMicros() > 0) {
        String nsA = Emulator.namespace(n.name(), l.a());
        String nsB = Emulator.namespace(n.name(), l.b());
        delayed.computeIfAbsent(nsA, k -> new LinkedHashMap<>()).put(l.devA(), l.delayMicros());
        delayed.computeIfAbsent(nsB, k -> new LinkedHashMap<>()).put(l.devB(), l.delayMicros());
      }
    }
    if (delayed.isEmpty()) {
      return List.of();
    }
    Path binary = binary();
    String iptables = iptables();
    List<Running> started = new ArrayList<>();
    try {
      for (Map.Entry<String, Map<String, Long>> e : delayed.entrySet()) {
        String ns = e.getKey();
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns, binary.toString()));
        int q = 0;
        for (long delay : e.getValue().values()) {
          cmd.add(q++ + ":" + delay);
        }
        // ip netns exec execs the program: the PID is the delayer's.
        Process p =
            new ProcessBuilder(cmd)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(log(ns).toFile())
                .start();
        started.add(new Running(ns, p.pid()));
        awaitReady(p, ns);
        q = 0;
        for (String dev : e.getValue().keySet()) {
          Shell.run(
              "ip",
              "netns",
              "exec",
              ns,
              iptables,
              "-w",
              "-t",
              "mangle",
              "-A",
              "PREROUTING",
              "-i",
              dev,
              "-j",
              "NFQUEUE",
              "--queue-num",
              Integer.toString(q++));
        }
      }
      return List.copyOf(started);
    } catch (IOException | RuntimeException e) {
      stop(started);
      throw e;
    }
  }

  /** Waits until the delayer says it has bound its queues; fails with its message if it exits. */
  private static void awaitReady(Process p, String ns) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Path log = log(ns);
    try {
      while (true) {
        boolean ended = p.waitFor(10, TimeUnit.MILLISECONDS);
        String text = Files.readString(log, StandardCharsets.UTF_8);
        if (text.startsWith("ready\n")) {
          return;
        }
        if (ended) {
          throw new IOException(
              "the delayer in " + ns + " exited (status " + p.exitValue() + "): " + text.strip());
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("the delayer in " + ns + " is not ready after 10 s; see " + log);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the delayer in " + ns);
    }
  }

  /** Whether {@code p} runs a delayer binary (a recorded PID may have been reused). */
  static boolean isDelayer(ProcessHandle p) {
    return p.info()
        .command()
        .map(c -> Path.of(c).getFileName().toString().startsWith(PREFIX))
        .orElse(false);
  }

  /**
   * Ends the delayers of {@code running} that still run: SIGTERM, on which each accepts what it
   * holds and writes its counters to its log, then SIGKILL for any still running after 5 s.
   */
  static void stop(List<Running> running) {
    List<ProcessHandle> live = new ArrayList<>();
    for (Running r : running) {
      ProcessHandle.of(r.pid).filter(Delayer::isDelayer).ifPresent(live::add);
    }
    live.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    for (ProcessHandle p : live) {
      try {
        p.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
        p.destroyForcibly();
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
