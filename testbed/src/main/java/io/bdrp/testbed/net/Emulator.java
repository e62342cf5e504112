package io.bdrp.testbed.net;

import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Emulates a wide-area network of routers on one machine, from a topology: one network namespace
 * per router, one veth pair per edge shaped on both ends by an HTB class at the link's rate and,
 * optionally, delayed by a {@link Delayer}, and one unshaped veth pair per router to the root
 * namespace, where clients and the measurement run.
 *
 * <p><b>Names.</b> A network has a short name (1–4 lower-case letters or digits); everything it
 * creates carries it: namespaces {@code bdrp-NAME-rI}, root-side interfaces {@code bdNAMEhI}. So
 * {@link #down} finds and removes everything by name alone, also after the process that made it
 * crashed. Inside router I's namespace the link to neighbour J is interface {@code nJ} and the link
 * to the root namespace is {@code host}.
 *
 * <p><b>Addresses.</b> Every veth pair is a /30: the host link of router I is {@code 10.90.0.0 +
 * 4I} (root side .1, router side .2), edge K of the topology is {@code 10.100.0.0 + 4K} (lower
 * router .1, higher .2). Routers listen on their host-side address for clients and metrics and on
 * every address for neighbours.
 *
 * <p>Needs root (CAP_NET_ADMIN) and iproute2 ({@code ip}, {@code tc}); delayed links also need what
 * {@link Delayer} needs.
 */
public final class Emulator {
  private static final Pattern NAME = Pattern.compile("[a-z0-9]{1,4}");
  private static final int HOST_BASE = (10 << 24) | (90 << 16);
  private static final int EDGE_BASE = (10 << 24) | (100 << 16);

  /** For {@link #plan(Topology, String, long, long)}: each link's delay from the file. */
  public static final long DELAY_FROM_FILE = -1;

  private Emulator() {}

  /** One router's place in the emulated network. */
  public record RouterNet(int router, String namespace, String rootDevice, String address) {}

  /**
   * One link.
   *
   * @param a the lower-numbered router
   * @param b the other router
   * @param rateBits the shaped rate in bits per second, each direction
   * @param delayMicros the propagation delay in microseconds, each direction (0: none)
   */
  public record LinkNet(
      int a,
      int b,
      String devA,
      String devB,
      String addressA,
      String addressB,
      long rateBits,
      long delayMicros) {
    /** A link without delay. */
    public LinkNet(
        int a, int b, String devA, String devB, String addressA, String addressB, long rateBits) {
      this(a, b, devA, devB, addressA, addressB, rateBits, 0);
    }
  }

  /** A planned or running network. */
  public record Network(String name, List<RouterNet> routers, List<LinkNet> links) {
    /** The address at which {@code router} reaches neighbour {@code neighbour}. */
    public String addressOf(int neighbour, int router) {
      for (LinkNet l : links) {
        if (l.a == router && l.b == neighbour) {
          return l.addressB;
        }
        if (l.b == router && l.a == neighbour) {
          return l.addressA;
        }
      }
      throw new IllegalArgumentException("no link between " + router + " and " + neighbour);
    }
  }

  /** Checks a network name. */
  public static String checkName(String name) {
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "network name '" + name + "' must be 1 to 4 lower-case letters or digits");
    }
    return name;
  }

  /** The namespace of router {@code router} in network {@code name}. */
  public static String namespace(String name, int router) {
    return "bdrp-" + name + "-r" + router;
  }

  private static String dotted(int a) {
    return (a >>> 24) + "." + ((a >>> 16) & 255) + "." + ((a >>> 8) & 255) + "." + (a & 255);
  }

  /**
   * Plans a network for {@code t} without delay: each link shaped at {@code rateBits} per second,
   * or at the file's bandwidth (Mbit/s) when {@code rateBits} is zero or less.
   */
  public static Network plan(Topology t, String name, long rateBits) {
    return plan(t, name, rateBits, 0);
  }

  /**
   * Plans a network for {@code t}: each link shaped at {@code rateBits} per second, or at the
   * file's bandwidth (Mbit/s) when {@code rateBits} is zero or less, and delayed by {@code
   * delayMicros} each way, or by the file's delay (milliseconds) when it is {@link
   * #DELAY_FROM_FILE}.
   */
  public static Network plan(Topology t, String name, long rateBits, long delayMicros) {
    checkName(name);
    if (delayMicros != DELAY_FROM_FILE
        && (delayMicros < 0 || delayMicros > Delayer.MAX_DELAY_MICROS)) {
      throw new IllegalArgumentException("link delay " + delayMicros + " us: must be 0 to 10 s");
    }
    if (t.nodeCount() > 16_000) {
      throw new IllegalArgumentException("at most 16,000 routers can be emulated");
    }
    List<RouterNet> routers = new ArrayList<>();
    for (int i = 0; i < t.nodeCount(); i++) {
      routers.add(
          new RouterNet(
              i, namespace(name, i), "bd" + name + "h" + i, dotted(HOST_BASE + 4 * i + 2)));
    }
    List<LinkNet> links = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    for (Edge e : t.edges()) {
      int x = t.routerOf(e.from());
      int y = t.routerOf(e.to());
      int a = Math.min(x, y);
      int b = Math.max(x, y);
      if (a == b || !seen.add(((long) a << 32) | b)) {
        continue; // self-loops and parallel edges add nothing to the routing
      }
      long rate = rateBits > 0 ? rateBits : Math.round(e.bandwidth() * 1e6);
      if (rate <= 0) {
        throw new IllegalArgumentException(
            "edge "
                + e.id()
                + " has no bandwidth in the file ("
                + e.bandwidth()
                + "): give a rate for every link");
      }
      long delay = delayMicros == DELAY_FROM_FILE ? Math.round(e.delay() * 1000) : delayMicros;
      if (delay > Delayer.MAX_DELAY_MICROS) {
        throw new IllegalArgumentException(
            "edge " + e.id() + " has a delay of " + e.delay() + " ms in the file: at most 10 s");
      }
      int k = links.size();
      links.add(
          new LinkNet(
              a,
              b,
              "n" + b,
              "n" + a,
              dotted(EDGE_BASE + 4 * k + 1),
              dotted(EDGE_BASE + 4 * k + 2),
              rate,
              delay));
    }
    if (links.size() > (155 << 14)) {
      throw new IllegalArgumentException("too many links to address");
    }
    return new Network(name, List.copyOf(routers), List.copyOf(links));
  }

  /**
   * The process a network was made for: a run that takes it down again at its end. Its start time
   * tells it from a later process that was given the same PID.
   */
  public record Owner(long pid, long startMillis) {
    /** This process. */
    public static Owner current() {
      return of(ProcessHandle.current());
    }

    /** Process {@code p}. */
    public static Owner of(ProcessHandle p) {
      return new Owner(p.pid(), startMillis(p));
    }

    private static long startMillis(ProcessHandle p) {
      return p.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(0L);
    }

    /** Whether the process is still running (a start time that cannot be read counts as its). */
    public boolean running() {
      return ProcessHandle.of(pid)
          .filter(ProcessHandle::isAlive)
          .filter(p -> startMillis == 0 || startMillis(p) == 0 || startMillis(p) == startMillis)
          .isPresent();
    }
  }

  /**
   * Creates {@code n}, to stay up until {@code bdrp testbed down}. If any step fails, whatever was
   * created is removed again and the failure is thrown. A network of the same name, or another
   * network, that is already up is refused, unless it was made for a run whose process has ended.
   */
  public static void up(Network n) throws IOException {
    up(n, null);
  }

  /**
   * Creates {@code n} for this process, which takes it down at its end. If the process dies first
   * (killed, or its machine restarted), the next {@code up} finds the network abandoned and removes
   * it, where one that stays until {@code bdrp testbed down} would be refused.
   */
  public static void upForThisProcess(Network n) throws IOException {
    up(n, Owner.current());
  }

  /** Creates {@code n}, recording {@code owner} (null: the network stays until taken down). */
  public static void up(Network n, Owner owner) throws IOException {
    removeAbandoned();
    if (!namespaces(n.name).isEmpty() || !rootDevices(n.name).isEmpty()) {
      throw new IOException(
          "network '"
              + n.name
              + "' is already up ("
              + namespaces(n.name).size()
              + " namespaces); take it down first: bdrp testbed down --name "
              + n.name);
    }
    String other = otherNetwork(n.name);
    if (other != null) {
      // Every network uses the same address blocks: a second one would take the first's routes.
      throw new IOException(
          "network '"
              + other
              + "' is up and uses the addresses this one needs (10.90.0.0/16, 10.100.0.0/16);"
              + " one testbed network at a time: bdrp testbed down --name "
              + other);
    }
    if (n.links.stream().anyMatch(l -> l.delayMicros > 0)) {
      var why = Delayer.unavailable(); // before anything is made
      if (why.isPresent()) {
        throw new IOException(why.get());
      }
    }
    try {
      for (RouterNet r : n.routers) {
        Shell.run("ip", "netns", "add", r.namespace);
        Shell.run("ip", "-n", r.namespace, "link", "set", "lo", "up");
        Shell.run(
            "ip",
            "link",
            "add",
            r.rootDevice,
            "type",
            "veth",
            "peer",
            "name",
            "host",
            "netns",
            r.namespace);
        int base = HOST_BASE + 4 * r.router;
        Shell.run("ip", "addr", "add", dotted(base + 1) + "/30", "dev", r.rootDevice);
        Shell.run("ip", "link", "set", r.rootDevice, "up");
        Shell.run("ip", "-n", r.namespace, "addr", "add", r.address + "/30", "dev", "host");
        Shell.run("ip", "-n", r.namespace, "link", "set", "host", "up");
      }
      for (LinkNet l : n.links) {
        String nsA = namespace(n.name, l.a);
        String nsB = namespace(n.name, l.b);
        Shell.run(
            "ip", "-n", nsA, "link", "add", l.devA, "type", "veth", "peer", "name", l.devB, "netns",
            nsB);
        Shell.run("ip", "-n", nsA, "addr", "add", l.addressA + "/30", "dev", l.devA);
        Shell.run("ip", "-n", nsB, "addr", "add", l.addressB + "/30", "dev", l.devB);
        Shell.run("ip", "-n", nsA, "link", "set", l.devA, "up");
        Shell.run("ip", "-n", nsB, "link", "set", l.devB, "up");
        shape(nsA, l.devA, l.rateBits);
        shape(nsB, l.devB, l.rateBits);
      }
      save(n, Delayer.start(n), owner);
    } catch (IOException | RuntimeException e) {
      try {
        down(n.name);
      } catch (IOException again) {
        e.addSuppressed(again);
      }
      throw e;
    }
  }

  /** Egress shaping: one HTB class, at {@code rate} with no borrowing, taking all traffic. */
  private static void shape(String ns, String dev, long rateBits) throws IOException {
    String rate = rateBits + "bit";
    Shell.run(
        "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1");
    Shell.run(
        "tc", "-n", ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate",
        rate, "ceil", rate);
  }

  /**
   * Removes every network whose state file names an owner that is no longer running, saying so on
   * standard error: what a run killed before its clean-up left behind.
   */
  static void removeAbandoned() throws IOException {
    for (String name : networksUp()) {
      Owner o = owner(name);
      if (o != null && !o.running()) {
        System.err.printf(
            "bdrp: network '%s' was made for process %d, which has ended without taking it down;"
                + " removing it%n",
            name, o.pid());
        down(name);
      }
    }
  }

  /** The process network {@code name} was made for, or null if it stays until taken down. */
  public static Owner owner(String name) throws IOException {
    java.nio.file.Path f = stateFile(name);
    return java.nio.file.Files.exists(f) ? parseOwner(java.nio.file.Files.readAllLines(f)) : null;
  }

  /** The owner in the lines of a state file, or null. */
  static Owner parseOwner(List<String> lines) {
    for (String line : lines) {
      String[] w = line.split(" ");
      if (w[0].equals("owner") && w.length == 3) {
        return new Owner(Long.parseLong(w[1]), Long.parseLong(w[2]));
      }
    }
    return null;
  }

  /** The name of a network other than {@code name} that has namespaces now, or null. */
  static String otherNetwork(String name) throws IOException {
    return networksUp().stream().filter(n -> !n.equals(name)).findFirst().orElse(null);
  }

  /** The names of the networks that have namespaces now, sorted. */
  private static Set<String> networksUp() throws IOException {
    var m = Pattern.compile("bdrp-([a-z0-9]{1,4})-r[0-9]+");
    Set<String> names = new java.util.TreeSet<>();
    for (String ns : allNamespaces()) {
      var mm = m.matcher(ns);
      if (mm.matches()) {
        names.add(mm.group(1));
      }
    }
    return names;
  }

  /** Every network namespace on the machine, by name. */
  private static List<String> allNamespaces() throws IOException {
    List<String> out = new ArrayList<>();
    for (String line : Shell.run("ip", "netns", "list").split("\n")) {
      if (!line.isBlank()) {
        out.add(line.strip().split("\\s+")[0]);
      }
    }
    return out;
  }

  /** Namespaces of network {@code name} that exist now. */
  public static List<String> namespaces(String name) throws IOException {
    checkName(name);
    String prefix = "bdrp-" + name + "-r";
    return allNamespaces().stream().filter(ns -> ns.startsWith(prefix)).toList();
  }

  /**
   * Removes everything network {@code name} created: ends its delayers by the PIDs in its state
   * file, ends the processes still running in its namespaces (which only a testbed run puts there),
   * deletes the namespaces (which deletes every veth pair with one end in them, and the delay
   * rules). Returns how many namespaces it removed.
   */
  public static int down(String name) throws IOException {
    List<String> all = namespaces(name);
    Delayer.stop(delayers(name)); // first, and politely: each accepts what it holds
    for (String ns : all) {
      for (String pid : Shell.run("ip", "netns", "pids", ns).split("\\s+")) {
        if (!pid.isBlank()) {
          ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
    }
    // Deleting a namespace removes its veth pairs only later, in the kernel's own time; deleting
    // the root-side ends first removes the host links at once, so that a new network of the same
    // name can be made straight after.
    for (String dev : rootDevices(name)) {
      Shell.run("ip", "link", "delete", dev);
    }
    for (String ns : all) {
      Shell.run("ip", "netns", "delete", ns);
    }
    java.nio.file.Files.deleteIfExists(stateFile(name));
    return all.size();
  }

  /** Root-namespace interfaces of network {@code name} that exist now. */
  public static List<String> rootDevices(String name) throws IOException {
    Pattern dev = Pattern.compile("bd" + checkName(name) + "h[0-9]+");
    List<String> out = new ArrayList<>();
    for (String line : Shell.run("ip", "-o", "link", "show").split("\n")) {
      String[] w = line.split(":\\s+");
      if (w.length > 1) {
        String n = w[1].split("@")[0];
        if (dev.matcher(n).matches()) {
          out.add(n);
        }
      }
    }
    return out;
  }

  /** Bytes, packets and drops sent out of one end of a link, from its HTB class. */
  public record Counters(long bytes, long packets, long drops, long backlogBytes) {}

  /** The counters of {@code dev} in {@code ns} (zero if it is not shaped). */
  public static Counters counters(String ns, String dev) throws IOException {
    return qdiscCounters(ns).getOrDefault(dev, new Counters(0, 0, 0, 0));
  }

  private static long number(String text, String regex) {
    var m = Pattern.compile(regex).matcher(text);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /**
   * The counters of every shaped interface in namespace {@code ns}, by interface name, from one
   * {@code tc} call (the HTB root qdisc of each device).
   */
  public static java.util.Map<String, Counters> qdiscCounters(String ns) throws IOException {
    java.util.Map<String, Counters> out = new java.util.HashMap<>();
    String text = Shell.run("tc", "-n", ns, "-s", "qdisc", "show");
    var head = Pattern.compile("^qdisc htb 1: dev (\\S+) root", Pattern.MULTILINE).matcher(text);
    List<int[]> starts = new ArrayList<>();
    List<String> devs = new ArrayList<>();
    while (head.find()) {
      starts.add(new int[] {head.start()});
      devs.add(head.group(1));
    }
    for (int i = 0; i < devs.size(); i++) {
      int from = starts.get(i)[0];
      int to = i + 1 < devs.size() ? starts.get(i + 1)[0] : text.length();
      int next = text.indexOf("\nqdisc ", from + 1);
      if (next > 0 && next < to) {
        to = next;
      }
      String block = text.substring(from, to);
      out.put(
          devs.get(i),
          new Counters(
              number(block, "Sent (\\d+) bytes"),
              number(block, "bytes (\\d+) pkt"),
              number(block, "dropped (\\d+)"),
              number(block, "backlog (\\d+)b")));
    }
    return out;
  }

  /** A table of the network's links and their counters, for {@code bdrp testbed status}. */
  public static String status(Network n) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "network %s: %d routers, %d links%n%-12s %10s %9s %14s %14s %8s %8s%n",
            n.name,
            n.routers.size(),
            n.links.size(),
            "link",
            "rate",
            "delay",
            "bytes a->b",
            "bytes b->a",
            "drops",
            "backlog"));
    java.util.Map<String, java.util.Map<String, Counters>> byNamespace = new java.util.HashMap<>();
    for (RouterNet r : n.routers) {
      byNamespace.put(r.namespace, qdiscCounters(r.namespace)); // one tc call per namespace
    }
    Counters none = new Counters(0, 0, 0, 0);
    for (LinkNet l : n.links) {
      Counters ab = byNamespace.get(namespace(n.name, l.a)).getOrDefault(l.devA, none);
      Counters ba = byNamespace.get(namespace(n.name, l.b)).getOrDefault(l.devB, none);
      b.append(
          String.format(
              Locale.ROOT,
              "%-12s %10s %9s %,14d %,14d %8d %7db%n",
              l.a + "-" + l.b,
              rate(l.rateBits),
              l.delayMicros == 0 ? "-" : delay(l.delayMicros),
              ab.bytes,
              ba.bytes,
              ab.drops + ba.drops,
              ab.backlogBytes + ba.backlogBytes));
    }
    for (Delayer.Running d : delayers(n.name)) {
      if (ProcessHandle.of(d.pid()).filter(Delayer::isDelayer).isEmpty()) {
        b.append(
            String.format(
                Locale.ROOT,
                "the delayer of %s (pid %d) is not running: its delayed links drop every packet;"
                    + " see %s%n",
                d.namespace(),
                d.pid(),
                Delayer.log(d.namespace())));
      }
    }
    return b.toString();
  }

  /** Where {@link #up} records a running network, for status and down. */
  public static java.nio.file.Path stateFile(String name) {
    return java.nio.file.Path.of("/run/bdrp-testbed", checkName(name) + ".net");
  }

  /** Writes {@code n} to its state file, keeping the delayers recorded there. */
  public static void save(Network n) throws IOException {
    save(n, delayers(n.name), owner(n.name));
  }

  /** Writes {@code n}, the delayers running for it and its owner to its state file. */
  private static void save(Network n, List<Delayer.Running> delayers, Owner owner)
      throws IOException {
    java.nio.file.Path f = stateFile(n.name);
    java.nio.file.Files.createDirectories(f.getParent());
    java.nio.file.Files.writeString(f, format(n, delayers, owner));
  }

  /** The state file's text: the network's owner if it has one, the network, the delayers' PIDs. */
  static String format(Network n, List<Delayer.Running> delayers, Owner owner) {
    StringBuilder b = new StringBuilder("# bdrp testbed network; removed by bdrp testbed down\n");
    b.append("name ").append(n.name).append('\n');
    if (owner != null) {
      b.append("owner ").append(owner.pid()).append(' ').append(owner.startMillis()).append('\n');
    }
    for (RouterNet r : n.routers) {
      b.append("router ").append(r.router).append(' ').append(r.namespace).append(' ');
      b.append(r.rootDevice).append(' ').append(r.address).append('\n');
    }
    for (LinkNet l : n.links) {
      b.append("link ").append(l.a).append(' ').append(l.b).append(' ').append(l.devA).append(' ');
      b.append(l.devB).append(' ').append(l.addressA).append(' ').append(l.addressB).append(' ');
      b.append(l.rateBits).append(' ').append(l.delayMicros).append('\n');
    }
    for (Delayer.Running d : delayers) {
      b.append("delayer ").append(d.namespace()).append(' ').append(d.pid()).append('\n');
    }
    return b.toString();
  }

  /** Reads the state file of network {@code name}. */
  public static Network load(String name) throws IOException {
    java.nio.file.Path f = stateFile(name);
    if (!java.nio.file.Files.exists(f)) {
      throw new IOException("network '" + name + "' is not up (no " + f + ")");
    }
    return parse(name, java.nio.file.Files.readAllLines(f));
  }

  /** The delayers recorded in the state file of network {@code name} (none if it has no file). */
  public static List<Delayer.Running> delayers(String name) throws IOException {
    java.nio.file.Path f = stateFile(name);
    return java.nio.file.Files.exists(f)
        ? parseDelayers(java.nio.file.Files.readAllLines(f))
        : List.of();
  }

  /** The delayers in the lines of a state file. */
  static List<Delayer.Running> parseDelayers(List<String> lines) {
    List<Delayer.Running> out = new ArrayList<>();
    for (String line : lines) {
      String[] w = line.split(" ");
      if (w[0].equals("delayer")) {
        out.add(new Delayer.Running(w[1], Long.parseLong(w[2])));
      }
    }
    return List.copyOf(out);
  }

  /** A network from the lines of its state file; links without a delay field have none. */
  static Network parse(String name, List<String> lines) {
    List<RouterNet> routers = new ArrayList<>();
    List<LinkNet> links = new ArrayList<>();
    for (String line : lines) {
      String[] w = line.split(" ");
      switch (w[0]) {
        case "router" -> routers.add(new RouterNet(Integer.parseInt(w[1]), w[2], w[3], w[4]));
        case "link" ->
            links.add(
                new LinkNet(
                    Integer.parseInt(w[1]),
                    Integer.parseInt(w[2]),
                    w[3],
                    w[4],
                    w[5],
                    w[6],
                    Long.parseLong(w[7]),
                    w.length > 8 ? Long.parseLong(w[8]) : 0));
        default -> {}
      }
    }
    return new Network(name, List.copyOf(routers), List.copyOf(links));
  }

  /**
   * Parses a rate: a number and a unit, bits per second ({@code bit}, {@code kbit}, {@code mbit},
   * {@code gbit}, any case) or bytes per second ({@code B/s}, {@code kB/s}, {@code MB/s}, {@code
   * GB/s}); decimal multiples. {@code 1MB/s} is {@code 8mbit}.
   */
  public static long parseRate(String text) {
    var m = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*([a-zA-Z/]+)").matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "rate '" + text + "': expected a number and a unit, such as 8mbit or 1MB/s");
    }
    double v = Double.parseDouble(m.group(1));
    String unit = m.group(2);
    double bits =
        switch (unit.toLowerCase(Locale.ROOT)) {
          case "bit" -> v;
          case "kbit" -> v * 1e3;
          case "mbit" -> v * 1e6;
          case "gbit" -> v * 1e9;
          default ->
              switch (unit) {
                case "B/s" -> v * 8;
                case "kB/s" -> v * 8e3;
                case "MB/s" -> v * 8e6;
                case "GB/s" -> v * 8e9;
                default ->
                    throw new IllegalArgumentException(
                        "rate '"
                            + text
                            + "': unknown unit '"
                            + unit
                            + "' (bit, kbit, mbit, gbit, B/s, kB/s, MB/s, GB/s)");
              };
        };
    if (bits < 8_000 || bits > 100e9) {
      throw new IllegalArgumentException("rate '" + text + "': must be between 1kB/s and 100gbit");
    }
    return Math.round(bits);
  }

  /**
   * Parses a link delay in microseconds: a number and a unit ({@code us}, {@code ms}, {@code s}),
   * {@code 0}, or {@code brite} for each edge's delay from the topology file ({@link
   * #DELAY_FROM_FILE}).
   */
  public static long parseDelay(String text) {
    String t = text.strip();
    if (t.equals("brite")) {
      return DELAY_FROM_FILE;
    }
    if (t.equals("0")) {
      return 0;
    }
    var m = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*(us|ms|s)").matcher(t);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "delay '" + text + "': expected a number and a unit (us, ms, s), such as 20ms, or brite");
    }
    double us =
        Double.parseDouble(m.group(1))
            * switch (m.group(2)) {
              case "s" -> 1e6;
              case "ms" -> 1e3;
              default -> 1;
            };
    if (us > Delayer.MAX_DELAY_MICROS) {
      throw new IllegalArgumentException("delay '" + text + "': at most 10 s");
    }
    return Math.round(us);
  }

  /** A delay in microseconds as {@link #parseDelay} reads it: {@code 20ms}, {@code 1768us}. */
  public static String delay(long micros) {
    return micros % 1000 == 0 ? micros / 1000 + "ms" : micros + "us";
  }

  /** A rate in the unit a person reads it in. */
  public static String rate(long bits) {
    if (bits % 1_000_000 == 0) {
      return bits / 1_000_000 + "Mbit";
    }
    if (bits % 1_000 == 0) {
      return bits / 1_000 + "kbit";
    }
    return bits + "bit";
  }
}
