package io.bdrp.testbed.net;

import io.bdrp.encoding.Message;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.CsvFile;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Node;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.EthernetFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.io.PrintStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How fast one transit router forwards: router 0 — router 1 — routers 2.. (one sink, or several for
 * fan-out) in namespaces over unshaped links, the routers real {@code bdrp router} processes with
 * UDP links. A C blaster in router 0's namespace sends DATA datagrams for the sinks "from" router
 * 0's UDP socket out of its link at a fixed rate, faster than a router JVM could; router 1 only
 * splits and forwards them; the sinks drop them before their socket (iptables), and the copies that
 * arrive on their interfaces are counted. Each rate runs with router 1 forwarding in the JVM and in
 * the kernel ({@code fastPath: ebpf}); the machine's CPU time and router 1's JVM CPU time per
 * packet are measured over the same seconds.
 *
 * <p>The routers' UDP links run with {@code auth.udp: mac} or {@code none}, one network each, so
 * that the cost of authenticating datagrams is measured in the same run as without it. With {@code
 * mac} the routers write their link keys to {@value #KEY_LOG} in the run folder ({@code
 * BDRP_UDP_KEYLOG}), and the blaster and the latency probe seal each datagram as router 0 would: a
 * sequence number in the JVM's domain, from {@link #FIRST_SEQ} up (router 0's own count from 1
 * never reaches it), and the SipHash tag under router 0's current key for router 1.
 */
public final class TransitBench {
  private static final String BLAST_PACKAGES = "apt-get install gcc";
  private static final long UNSHAPED = 10_000_000_000L; // 10 Gbit/s: the HTB root never limits

  /** One rate on one path, with router 1's refusals of the blaster's datagrams. */
  public record Point(
      String fastPath,
      String udpAuth,
      int fanOut,
      double offered,
      long sent,
      long delivered,
      double seconds,
      double machineCpuSeconds,
      double transitCoreCpuSeconds,
      double transitJvmCpuSeconds,
      long refused) {
    /** Packets (each with {@code fanOut} copies) that did not reach every sink. */
    public double lossPercent() {
      return sent == 0 ? 0 : 100.0 * (sent - delivered) / sent;
    }

    /**
     * Machine CPU time per packet sent, in microseconds: every process and the kernel (routers,
     * sinks, the blaster's system calls), less the blaster's user time (its pacing loop).
     */
    public double machineMicrosPerPacket() {
      return sent == 0 ? 0 : 1e6 * machineCpuSeconds / sent;
    }

    /**
     * CPU 1's busy time per packet sent, in microseconds: router 1's core (its JVM, and the
     * kernel's receive processing steered there, the fast path's included), when pinned.
     */
    public double transitCoreMicrosPerPacket() {
      return sent == 0 ? 0 : 1e6 * transitCoreCpuSeconds / sent;
    }

    /** Router 1's JVM CPU time per packet sent, in microseconds. */
    public double transitJvmMicrosPerPacket() {
      return sent == 0 ? 0 : 1e6 * transitJvmCpuSeconds / sent;
    }
  }

  /** One-way latency of single packets across router 1, in microseconds. */
  public record Latency(String what, int sent, int received, double p50, double p90, double p99) {
    static Latency parse(String what, String line) throws IOException {
      Matcher m =
          Pattern.compile(
                  "received (\\d+) of (\\d+); min [0-9.]+ p50 ([0-9.]+) p90 ([0-9.]+) p99 ([0-9.]+)")
              .matcher(line);
      if (!m.find()) {
        throw new IOException(what + ": unexpected probe output: " + line);
      }
      return new Latency(
          what,
          Integer.parseInt(m.group(2)),
          Integer.parseInt(m.group(1)),
          Double.parseDouble(m.group(3)),
          Double.parseDouble(m.group(4)),
          Double.parseDouble(m.group(5)));
    }
  }

  /**
   * A path's points and latencies (the router's hop, and the kernel's IP forwarding across it),
   * with its links' {@code auth.udp}.
   */
  public record Result(
      String fastPath, String udpAuth, List<Point> points, List<Latency> latencies) {
    /** The highest rate (packets sent per second) lost at most 0.1 % of, or null. */
    Point ceiling() {
      Point best = null;
      for (Point pt : points) {
        if (pt.lossPercent() <= 0.1
            && (best == null || pt.sent() / pt.seconds() > best.sent() / best.seconds())) {
          best = pt;
        }
      }
      return best;
    }

    /** The router's hop latency, or null. */
    Latency hop() {
      return latencies.stream().filter(l -> l.what().endsWith(HOP)).findFirst().orElse(null);
    }
  }

  /** The {@code auth.udp} settings the benchmark compares. */
  public static final List<String> UDP_AUTH = List.of("mac", "none");

  /** The key log's file name in a network's run folder. */
  static final String KEY_LOG = "udp-keys.log";

  /** The first sequence number of the datagrams the blaster and the probe seal. */
  static final long FIRST_SEQ = 1L << 40;

  private static final String HOP = "transit hop";

  /** Probes per latency round, one every {@link #PROBE_INTERVAL_US}. */
  static final int PROBES = 500;

  /** Rounds of each latency measurement; the median of the rounds is reported. */
  static final int LATENCY_ROUNDS = 3;

  /** Per statistic, the median over rounds; probes counted over all of them. */
  static Latency median(List<Latency> rounds) {
    double[] p50 = rounds.stream().mapToDouble(Latency::p50).sorted().toArray();
    double[] p90 = rounds.stream().mapToDouble(Latency::p90).sorted().toArray();
    double[] p99 = rounds.stream().mapToDouble(Latency::p99).sorted().toArray();
    int mid = rounds.size() / 2;
    return new Latency(
        rounds.get(0).what(),
        rounds.stream().mapToInt(Latency::sent).sum(),
        rounds.stream().mapToInt(Latency::received).sum(),
        p50[mid],
        p90[mid],
        p99[mid]);
  }

  static final int PROBE_INTERVAL_US = 2000;

  /** Where the probe's sequence number goes: the DATA header's message id (offset 10). */
  private static final int SEQ_OFFSET = EthernetFrames.HEADERS + 10;

  private TransitBench() {}

  /** The line topology (fan-out 1) or the star around router 1 (fan-out k). */
  static Topology topology(int fanOut) {
    List<Node> nodes = new ArrayList<>();
    List<Edge> edges = new ArrayList<>();
    for (int i = 0; i < fanOut + 2; i++) {
      nodes.add(new Node(i, i, 0, 0, 0, 0, Node.ROUTER));
    }
    edges.add(edge(0, 0, 1));
    for (int k = 0; k < fanOut; k++) {
      edges.add(edge(k + 1, 1, k + 2));
    }
    return Topology.of(List.of(), nodes, edges);
  }

  private static Edge edge(int id, int a, int b) {
    return new Edge(id, a, b, 1, 0, 10_000, 0, 0, Edge.ROUTER_LINK, Edge.Direction.UNDIRECTED);
  }

  /**
   * Runs {@code rates} (packets per second offered) for {@code seconds} each on a fresh network
   * named {@code name} with router 1 forwarding as {@code fastPath} says and the links' datagrams
   * protected as {@code udpAuth} ({@code mac} or {@code none}) says; files go under {@code dir}.
   */
  public static Result run(
      String name,
      String fastPath,
      String udpAuth,
      int fanOut,
      boolean broadcast,
      double[] rates,
      double seconds,
      int bodyBytes,
      List<String> jvmOptions,
      Path dir,
      PrintStream progress)
      throws IOException, InterruptedException {
    Path blast = CPrograms.binary("bdrp-blast.c", "bdrp-blast-", BLAST_PACKAGES);
    Path probe = CPrograms.binary("bdrp-probe.c", "bdrp-probe-", BLAST_PACKAGES);
    if (!UDP_AUTH.contains(udpAuth)) {
      throw new IllegalArgumentException("udpAuth: expected mac or none, got " + udpAuth);
    }
    boolean mac = udpAuth.equals("mac");
    Path keyLog = dir.resolve(KEY_LOG).toAbsolutePath();
    Files.createDirectories(dir);
    Files.deleteIfExists(keyLog); // a folder run before: its keys are not this network's
    List<Latency> latencies = new ArrayList<>();
    Emulator.Network n = Emulator.plan(topology(fanOut), name, UNSHAPED);
    Emulator.upForThisProcess(n);
    List<Point> points = new ArrayList<>();
    try (NamespaceFederation f =
        NamespaceFederation.start(
            n,
            dir,
            jvmOptions,
            // Every packet goes by D: transit routers split it rather than pass a broadcast up.
            NamespaceFederation.routerYaml(Map.of("broadcastFraction", 1), fastPath, udpAuth),
            "udp",
            false,
            mac ? Map.of("BDRP_UDP_KEYLOG", keyLog.toString()) : Map.of())) {
      awaitRoutes(f, fanOut);
      Sealing seal = mac ? new Sealing(keyLog, awaitKey(keyLog), FIRST_SEQ) : null;
      for (int k = 0; k < fanOut; k++) {
        String ns = Emulator.namespace(name, k + 2);
        Shell.run(
            "ip",
            "netns",
            "exec",
            ns,
            "iptables-legacy",
            "-w",
            "-A",
            "INPUT",
            "-p",
            "udp",
            "--dport",
            Integer.toString(NamespaceFederation.ROUTER_PORT),
            "-j",
            "DROP");
      }
      Emulator.LinkNet in = n.links().get(0); // 0 - 1
      boolean pinned = Runtime.getRuntime().availableProcessors() >= 2;
      if (pinned) {
        // Router 1 gets CPU 1 to itself (its JVM, and its receive processing steered there with
        // RPS); the blaster runs on CPU 0. Without RPS the whole kernel path of a packet would run
        // in the blaster's system call, on its CPU.
        Shell.run("taskset", "-a", "-p", "-c", "1", Long.toString(f.process(1).pid()));
        Shell.run(
            "ip",
            "netns",
            "exec",
            Emulator.namespace(name, 1),
            "sh",
            "-c",
            "echo 2 > /sys/class/net/" + in.devB() + "/queues/rx-0/rps_cpus");
        // Everything else of the network goes to CPU 0 with the blaster: the other routers' JVMs
        // and the sinks' receive processing of the copies (which would otherwise run on the CPU
        // that sent them), so that CPU 1's busy time is router 1's work alone, in either path.
        for (int r = 0; r < fanOut + 2; r++) {
          if (r != 1) {
            Shell.run("taskset", "-a", "-p", "-c", "0", Long.toString(f.process(r).pid()));
          }
        }
        for (int k = 0; k < fanOut; k++) {
          Emulator.LinkNet l = n.links().get(k + 1); // 1 - (k + 2)
          Shell.run(
              "ip",
              "netns",
              "exec",
              Emulator.namespace(name, k + 2),
              "sh",
              "-c",
              "echo 1 > /sys/class/net/" + l.devB() + "/queues/rx-0/rps_cpus");
        }
      }
      byte[] data = frame(n, in, fanOut, bodyBytes, mac, broadcast);
      ChildProcess transit = f.process(1);
      // Latency first, on the idle network: single packets, one at a time, the router's hop and
      // the kernel's IP forwarding across the same router, in alternating rounds.
      List<Latency> hops = new ArrayList<>();
      List<Latency> ips = new ArrayList<>();
      byte[] ipData = ipFrame(n, in, data.length);
      for (int round = 0; round < LATENCY_ROUNDS; round++) {
        hops.add(probe(probe, n, withNewId(data), fastPath + " " + HOP, seal, progress));
        ips.add(probe(probe, n, ipData, "kernel IP forwarding", null, progress));
      }
      for (Latency l : List.of(median(hops), median(ips))) {
        latencies.add(l);
        progress.printf(Locale.ROOT, "%s%n", describe(l));
      }
      for (double rate : rates) {
        long rx0 = sinkPackets(n, fanOut);
        double cpu0 = machineCpuSeconds();
        double core0 = cpuSeconds("cpu1");
        double jvm0 = transit.cpu().toNanos() / 1e9;
        long refused0 = refused(f.metrics(1));
        List<String> cmd = new ArrayList<>();
        if (pinned) {
          cmd.addAll(List.of("taskset", "-c", "0"));
        }
        cmd.addAll(List.of("ip", "netns", "exec", Emulator.namespace(name, 0), blast.toString()));
        if (broadcast) {
          // Each packet its own message id: a router drops a broadcast it has taken already.
          cmd.addAll(List.of("--ids", Integer.toString(SEQ_OFFSET)));
        }
        cmd.addAll(
            List.of(
                in.devA(),
                HexFormat.of().formatHex(broadcast ? withNewId(data) : data),
                Double.toString(rate),
                Double.toString(seconds)));
        if (seal != null) {
          cmd.addAll(seal.next(progress));
        }
        String out = Shell.run(cmd);
        long rx = settle(n, fanOut) - rx0;
        double cpu = machineCpuSeconds() - cpu0;
        double core = cpuSeconds("cpu1") - core0;
        double jvm = transit.cpu().toNanos() / 1e9 - jvm0;
        Matcher m =
            Pattern.compile("sent (\\d+) in ([0-9.]+) s, .* user CPU ([0-9.]+) s").matcher(out);
        if (!m.find()) {
          throw new IOException("unexpected blaster output: " + out);
        }
        long sent = Long.parseLong(m.group(1));
        if (seal != null) {
          Matcher q = Pattern.compile("next sequence number (\\d+)").matcher(out);
          if (!q.find()) {
            throw new IOException("the blaster did not say its next sequence number: " + out);
          }
          seal.seq = Long.parseLong(q.group(1));
        }
        Point p =
            new Point(
                fastPath,
                udpAuth,
                fanOut,
                rate,
                sent,
                Math.min(sent, rx / fanOut),
                Double.parseDouble(m.group(2)),
                cpu - Double.parseDouble(m.group(3)),
                pinned ? core : Double.NaN,
                jvm,
                refused(f.metrics(1)) - refused0);
        points.add(p);
        progress.printf(
            Locale.ROOT,
            "%s auth.udp %s fan-out %d: offered %,8.0f pkt/s  sent %,9d  delivered %,9d  loss"
                + " %6.2f%%  CPU/pkt: machine %6.2f us, router 1's core %6.2f us, its JVM %6.2f us"
                + "%s%n",
            fastPath,
            udpAuth,
            fanOut,
            rate,
            sent,
            p.delivered(),
            p.lossPercent(),
            p.machineMicrosPerPacket(),
            p.transitCoreMicrosPerPacket(),
            p.transitJvmMicrosPerPacket(),
            p.refused() == 0 ? "" : "  (router 1 refused " + p.refused() + " datagrams)");
      }
      Files.writeString(dir.resolve("router-1.metrics"), f.metrics(1));
    } finally {
      Emulator.down(name);
    }
    return new Result(fastPath, udpAuth, points, latencies);
  }

  /**
   * What seals the blaster's and the probe's datagrams: router 0's key for router 1, read from the
   * key log, and the next sequence number, which goes on from tool run to tool run so that router
   * 1's replay window takes every datagram.
   */
  private static final class Sealing {
    private final Path keyLog;
    private String key;
    long seq;

    Sealing(Path keyLog, String key, long seq) {
      this.keyLog = keyLog;
      this.key = key;
      this.seq = seq;
    }

    /** The tool's arguments: the current key (a new session's, if the link started again), seq. */
    List<String> next(PrintStream progress) throws IOException {
      String now = outKey(Files.readAllLines(keyLog), 0, 1);
      if (now != null && !now.equals(key)) {
        progress.println("router 0's UDP session with router 1 started again; its new key is used");
        key = now;
      }
      return List.of(key, Long.toString(seq));
    }
  }

  /**
   * The key of datagrams from router {@code router} to {@code neighbour} on their current session
   * (the last such line) in the lines of a {@code BDRP_UDP_KEYLOG} file, or null.
   */
  static String outKey(List<String> lines, int router, int neighbour) {
    Pattern p =
        Pattern.compile(
            "router "
                + router
                + " neighbour "
                + neighbour
                + " session \\d+ out ([0-9a-f]{32}) in [0-9a-f]{32}");
    String key = null;
    for (String line : lines) {
      Matcher m = p.matcher(line.trim());
      if (m.matches()) {
        key = m.group(1);
      }
    }
    return key;
  }

  /** Router 0's key for router 1 once the key log has it, within 30 s. */
  private static String awaitKey(Path keyLog) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      String key = Files.exists(keyLog) ? outKey(Files.readAllLines(keyLog), 0, 1) : null;
      if (key != null) {
        return key;
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(
            "router 0 logged no key for its UDP session with router 1 in " + keyLog + " in 30 s");
      }
      Thread.sleep(100);
    }
  }

  /**
   * Datagrams a router refused on arrival as forged, replayed or too short, from its metrics (the
   * series of {@code bdrp_udp_datagrams_dropped_total} with those reasons).
   */
  static long refused(String metrics) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_udp_datagrams_dropped_total\\{[^}]*reason=\"(?:mac|replay|short)\""
                    + "[^}]*\\}\\s+([0-9.eE+]+)")
            .matcher(metrics);
    long sum = 0;
    while (m.find()) {
      sum += (long) Double.parseDouble(m.group(1));
    }
    return sum;
  }

  /**
   * Writes {@code transit.csv} (every rate of every path) and {@code summary.md} (each path's
   * highest rate without loss and its CPU there, the latencies, and per path measured with both
   * {@code auth.udp: mac} and {@code none}, the first's figures over the second's) to {@code dir};
   * returns the summary.
   */
  public static String writeReport(Path dir, List<Result> results) throws IOException {
    CsvFile csv =
        CsvFile.create(
            dir.resolve("transit.csv"),
            "path",
            "udp_auth",
            "fan_out",
            "offered_pps",
            "sent",
            "delivered",
            "seconds",
            "loss_percent",
            "machine_cpu_us_per_packet",
            "transit_core_cpu_us_per_packet",
            "transit_jvm_cpu_us_per_packet",
            "refused_by_router_1");
    StringBuilder md =
        new StringBuilder(
            "| path | auth.udp | highest rate without loss (pkt/s, ≤ 0.1 % lost) | machine CPU"
                + " µs/pkt there | router 1's core µs/pkt there | router 1's JVM µs/pkt there |\n"
                + "|---|---|---:|---:|---:|---:|\n");
    for (Result r : results) {
      for (Point pt : r.points()) {
        csv.row(
            pt.fastPath(),
            pt.udpAuth(),
            pt.fanOut(),
            CsvFile.fixed(0, pt.offered()),
            pt.sent(),
            pt.delivered(),
            CsvFile.fixed(3, pt.seconds()),
            CsvFile.fixed(3, pt.lossPercent()),
            CsvFile.fixed(3, pt.machineMicrosPerPacket()),
            CsvFile.fixed(3, pt.transitCoreMicrosPerPacket()),
            CsvFile.fixed(3, pt.transitJvmMicrosPerPacket()),
            pt.refused());
      }
      Point best = r.ceiling();
      md.append(
          best == null
              ? "| " + r.fastPath() + " | " + r.udpAuth() + " | none | | | |\n"
              : String.format(
                  Locale.ROOT,
                  "| %s | %s | %,.0f | %.2f | %.2f | %.2f |%n",
                  r.fastPath(),
                  r.udpAuth(),
                  best.sent() / best.seconds(),
                  best.machineMicrosPerPacket(),
                  best.transitCoreMicrosPerPacket(),
                  best.transitJvmMicrosPerPacket()));
    }
    md.append(
            "\n| one-way latency across router 1 | auth.udp | probes arrived | p50 µs | p90 µs |"
                + " p99 µs |\n")
        .append("|---|---|---:|---:|---:|---:|\n");
    for (Result r : results) {
      for (Latency l : r.latencies()) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d of %d | %.1f | %.1f | %.1f |%n",
                l.what(),
                r.udpAuth(),
                l.received(),
                l.sent(),
                l.p50(),
                l.p90(),
                l.p99()));
      }
    }
    md.append(authCost(results));
    csv.close();
    Files.writeString(dir.resolve("summary.md"), md);
    return md.toString();
  }

  /**
   * The cost of authentication, measured in the same run as without it: for each path run with both
   * {@code auth.udp: mac} and {@code none}, mac's figure over none's for the highest rate without
   * loss, router 1's CPU per packet at the highest rate both forwarded without loss, and the hop
   * latency; empty when no path has both.
   */
  static String authCost(List<Result> results) {
    StringBuilder md = new StringBuilder();
    for (Result mac : results) {
      if (!mac.udpAuth().equals("mac")) {
        continue;
      }
      Result none =
          results.stream()
              .filter(r -> r.fastPath().equals(mac.fastPath()) && r.udpAuth().equals("none"))
              .findFirst()
              .orElse(null);
      if (none == null) {
        continue;
      }
      if (md.isEmpty()) {
        md.append(
                "\nThe cost of authentication (auth.udp mac ÷ none), measured in the same run as"
                    + " without it:\n\n")
            .append(
                "| path | highest rate without loss | at pkt/s (both without loss) | router 1's"
                    + " core µs/pkt | router 1's JVM µs/pkt | hop latency p50 | hop latency p99"
                    + " |\n")
            .append("|---|---:|---:|---:|---:|---:|---:|\n");
      }
      Point cm = mac.ceiling();
      Point cn = none.ceiling();
      String ceiling =
          cm == null || cn == null
              ? "n/a"
              : ratio(cm.sent() / cm.seconds(), cn.sent() / cn.seconds());
      Point[] same = sameRate(mac, none);
      Latency hm = mac.hop();
      Latency hn = none.hop();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %s | %s |%n",
              mac.fastPath(),
              ceiling,
              same == null ? "none" : String.format(Locale.ROOT, "%,.0f", same[0].offered()),
              same == null
                  ? "n/a"
                  : ratio(
                      same[0].transitCoreMicrosPerPacket(), same[1].transitCoreMicrosPerPacket()),
              same == null
                  ? "n/a"
                  : ratio(same[0].transitJvmMicrosPerPacket(), same[1].transitJvmMicrosPerPacket()),
              hm == null || hn == null ? "n/a" : ratio(hm.p50(), hn.p50()),
              hm == null || hn == null ? "n/a" : ratio(hm.p99(), hn.p99())));
    }
    return md.toString();
  }

  /**
   * The points of {@code mac} and {@code none} at the highest offered rate both lost at most 0.1 %
   * of, or null.
   */
  private static Point[] sameRate(Result mac, Result none) {
    Point[] best = null;
    for (Point m : mac.points()) {
      for (Point n : none.points()) {
        if (m.offered() == n.offered()
            && m.lossPercent() <= 0.1
            && n.lossPercent() <= 0.1
            && (best == null || m.offered() > best[0].offered())) {
          best = new Point[] {m, n};
        }
      }
    }
    return best;
  }

  private static String ratio(double a, double b) {
    return b > 0 && Double.isFinite(a) && Double.isFinite(b)
        ? String.format(Locale.ROOT, "%.2f×", a / b)
        : "n/a";
  }

  static String describe(Latency l) {
    return String.format(
        Locale.ROOT,
        "%s: %d of %d probes arrived; one-way latency p50 %.1f us, p90 %.1f us, p99 %.1f us"
            + " (median of "
            + LATENCY_ROUNDS
            + " rounds)",
        l.what(),
        l.received(),
        l.sent(),
        l.p50(),
        l.p90(),
        l.p99());
  }

  /**
   * Sends {@link #PROBES} copies of {@code frame} (its UDP checksum zeroed, a sequence number
   * written into each) from router 0's namespace and times each until it arrives at the first
   * sink's interface; with {@code seal} (null: none) each sealed as {@code auth.udp: mac} wants.
   */
  private static Latency probe(
      Path probe, Emulator.Network n, byte[] frame, String what, Sealing seal, PrintStream progress)
      throws IOException {
    byte[] f = frame.clone();
    f[EthernetFrames.HEADERS - 2] = 0; // UDP checksum: none, so that the number can change
    f[EthernetFrames.HEADERS - 1] = 0;
    Emulator.LinkNet in = n.links().get(0);
    Emulator.LinkNet out = n.links().get(1); // 1 - 2
    List<String> cmd =
        new ArrayList<>(
            List.of(
                probe.toString(),
                "/var/run/netns/" + Emulator.namespace(n.name(), 0),
                in.devA(),
                "/var/run/netns/" + Emulator.namespace(n.name(), 2),
                out.devB(),
                HexFormat.of().formatHex(f),
                Integer.toString(SEQ_OFFSET),
                Integer.toString(PROBES),
                Integer.toString(PROBE_INTERVAL_US)));
    if (seal != null) {
      cmd.addAll(seal.next(progress));
    }
    String line = Shell.run(cmd);
    if (seal != null) {
      seal.seq += PROBES; // one sequence number per probe, sent
    }
    return Latency.parse(what, line);
  }

  /**
   * A plain UDP datagram as long as the DATA frame, from router 0's address on its link to the
   * first sink's, for router 1's kernel to forward by IP (its namespace forwards while this runs).
   */
  private static byte[] ipFrame(Emulator.Network n, Emulator.LinkNet in, int length)
      throws IOException {
    Shell.run(
        "ip",
        "netns",
        "exec",
        Emulator.namespace(n.name(), 1),
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.ip_forward=1");
    Emulator.LinkNet out = n.links().get(1);
    return EthernetFrames.udp(
        EthernetFrames.mac(mac(Emulator.namespace(n.name(), 1), in.devB())),
        EthernetFrames.mac(mac(Emulator.namespace(n.name(), 0), in.devA())),
        (Inet4Address) InetAddress.getByName(in.addressA()),
        9,
        (Inet4Address) InetAddress.getByName(out.addressB()),
        9,
        new byte[length - EthernetFrames.HEADERS]);
  }

  /** Waits until router 1 has a route to every other router and router 0 to the sinks. */
  private static void awaitRoutes(NamespaceFederation f, int fanOut)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String want = "bdrp_unicast_routes " + (fanOut + 1);
    String last = "no answer yet";
    while (true) {
      try {
        if (f.metrics(1).contains(want) && f.metrics(0).contains(want)) {
          return;
        }
        last = "routes still missing";
      } catch (IOException e) {
        last = "metrics: " + e; // the endpoint may not answer at once
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("the routers did not converge within 60 s (" + last + ")");
      }
      Thread.sleep(100);
    }
  }

  /**
   * The DATA datagram router 0 would send router 1 for every sink, as an Ethernet frame: by D, or a
   * broadcast of router 0 (the sinks are router 1's children on its tree; the frame's UDP checksum
   * 0, so that the blaster can give each packet its own message id); with {@code mac}, room after
   * the frame for the sequence number and tag the tools write.
   */
  private static byte[] frame(
      Emulator.Network n, Emulator.LinkNet in, int fanOut, int body, boolean mac, boolean broadcast)
      throws IOException {
    long[] d = new long[1];
    for (int k = 0; k < fanOut; k++) {
      d[0] |= 1L << (k + 2);
    }
    Message m = Message.builder().put("bench", "transit").body(new byte[body]).build();
    ByteBuf b =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT, 64, broadcast, 0, 1, broadcast ? null : d, m);
    byte[] payload;
    try {
      payload = ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
    if (mac) {
      payload = Arrays.copyOf(payload, payload.length + DatagramAuth.MAC_TRAILER_BYTES);
    }
    return EthernetFrames.udp(
        EthernetFrames.mac(mac(Emulator.namespace(n.name(), 1), in.devB())),
        EthernetFrames.mac(mac(Emulator.namespace(n.name(), 0), in.devA())),
        (Inet4Address) InetAddress.getByName(in.addressA()),
        NamespaceFederation.ROUTER_PORT,
        (Inet4Address) InetAddress.getByName(in.addressB()),
        NamespaceFederation.ROUTER_PORT,
        payload);
  }

  private static final java.util.Random IDS = new java.security.SecureRandom();

  /**
   * {@code frame} with a random message id and UDP checksum 0: the first id of a blaster's or a
   * probe's run, which count up from it (or XOR it), so that no two runs send the same broadcast.
   */
  private static byte[] withNewId(byte[] frame) {
    byte[] f = frame.clone();
    java.nio.ByteBuffer.wrap(f).putLong(SEQ_OFFSET, IDS.nextLong() & ~0xffff_ffffL);
    f[EthernetFrames.HEADERS - 2] = 0;
    f[EthernetFrames.HEADERS - 1] = 0;
    return f;
  }

  private static String mac(String ns, String dev) throws IOException {
    Matcher m =
        Pattern.compile("link/ether ([0-9a-f:]{17})")
            .matcher(Shell.run("ip", "-n", ns, "link", "show", "dev", dev));
    if (!m.find()) {
      throw new IOException("no Ethernet address on " + dev + " in " + ns);
    }
    return m.group(1);
  }

  /** Packets received by the sinks' interfaces of their links to router 1. */
  private static long sinkPackets(Emulator.Network n, int fanOut) throws IOException {
    long sum = 0;
    for (int k = 0; k < fanOut; k++) {
      Emulator.LinkNet l = n.links().get(k + 1); // 1 - (k + 2)
      String out =
          Shell.run(
              "ip",
              "-n",
              Emulator.namespace(n.name(), k + 2),
              "-s",
              "link",
              "show",
              "dev",
              l.devB());
      Matcher m = Pattern.compile("RX:[^\\n]*\\n\\s*(\\d+)\\s+(\\d+)").matcher(out);
      if (!m.find()) {
        throw new IOException("no RX counters in: " + out);
      }
      sum += Long.parseLong(m.group(2));
    }
    return sum;
  }

  /** The sinks' count once it stops moving (the last copies drained), within 3 s. */
  private static long settle(Emulator.Network n, int fanOut)
      throws IOException, InterruptedException {
    long last = sinkPackets(n, fanOut);
    long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
    while (System.nanoTime() < deadline) {
      Thread.sleep(200);
      long now = sinkPackets(n, fanOut);
      if (now == last) {
        return now;
      }
      last = now;
    }
    return last;
  }

  /** CPU time the whole machine spent busy (all CPUs, all modes but idle and iowait), in s. */
  static double machineCpuSeconds() throws IOException {
    return cpuSeconds("cpu");
  }

  /** Busy time of {@code cpu} ({@code cpu}: all, {@code cpuN}: CPU N) from /proc/stat, in s. */
  static double cpuSeconds(String cpu) throws IOException {
    String[] f = null;
    for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
      if (line.startsWith(cpu + " ")) {
        f = line.trim().split("\\s+");
        break;
      }
    }
    if (f == null) {
      throw new IOException("no " + cpu + " line in /proc/stat");
    }
    long busy = 0;
    for (int i = 1; i < f.length && i <= 8; i++) {
      if (i != 4 && i != 5) { // idle, iowait
        busy += Long.parseLong(f[i]);
      }
    }
    return busy / 100.0; // USER_HZ
  }
}
