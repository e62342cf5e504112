package io.bdrp.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A hosts file for {@code bdrp topo configs}: where each router of a topology runs and on which
 * ports it listens. One line per router:
 *
 * <pre>
 * ROUTER HOST[:CLIENT_PORT[:ROUTER_PORT[:METRICS_PORT]]]    # comment
 * </pre>
 *
 * <p>{@code ROUTER} is a router number of the topology (0 to routers - 1); {@code HOST} is the name
 * or address that neighbours dial and clients use, an IPv6 address in brackets ({@code [fd00::1]}).
 * {@code #} starts a comment; blank lines are skipped. Every router needs exactly one line.
 *
 * <p><b>Ports.</b> A port left out takes the lowest port at or above its default (7400 clients,
 * 7500 routers, 9400 metrics) that no other router on the same host uses; ports written in the file
 * are taken first, then the omitted ones are filled in router-number order. Several routers on one
 * host without ports therefore get 7400/7500/9400, 7401/7501/9401, and so on. Two routers on one
 * host (compared as written, ignoring case) never share a port: a clash between written ports is an
 * error naming both lines.
 *
 * <p>Errors are {@link IllegalArgumentException}s that name the file, the line and the problem.
 * Stateless.
 */
final class HostsFile {
  static final int DEFAULT_CLIENT_PORT = 7400;
  static final int DEFAULT_ROUTER_PORT = 7500;
  static final int DEFAULT_METRICS_PORT = 9400;

  private static final String FORM = "ROUTER HOST[:CLIENT_PORT[:ROUTER_PORT[:METRICS_PORT]]]";
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9._-]+)?");
  private static final String[] KINDS = {"client", "router", "metrics"};
  private static final int[] DEFAULTS = {
    DEFAULT_CLIENT_PORT, DEFAULT_ROUTER_PORT, DEFAULT_METRICS_PORT
  };

  private HostsFile() {}

  /**
   * Where one router runs.
   *
   * @param router the router number
   * @param host the host as written, without brackets for IPv6
   * @param clientPort port for client sessions
   * @param routerPort port for sessions from neighbouring routers
   * @param metricsPort port of the HTTP metrics endpoint
   * @param line the line of the hosts file that placed it (1-based)
   */
  record Placement(
      int router, String host, int clientPort, int routerPort, int metricsPort, int line) {
    /** Whether the host is an IPv6 address. */
    boolean ipv6() {
      return host.indexOf(':') >= 0;
    }

    /** The host as written in an address: IPv6 in brackets. */
    String hostInAddress() {
      return ipv6() ? "[" + host + "]" : host;
    }

    /** Where neighbours dial this router. */
    String routerAddress() {
      return hostInAddress() + ":" + routerPort;
    }

    /** Where clients attach. */
    String clientAddress() {
      return hostInAddress() + ":" + clientPort;
    }

    /** Where the metrics are served. */
    String metricsAddress() {
      return hostInAddress() + ":" + metricsPort;
    }
  }

  /** Reads {@code file} for a topology of {@code routers} routers; see the class comment. */
  static List<Placement> read(Path file, int routers) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("--hosts: no such file: " + file);
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (java.nio.charset.CharacterCodingException e) {
      throw new IllegalArgumentException(file + ": not UTF-8 text");
    }
    return parse(lines, file.toString(), routers);
  }

  /**
   * Parses the lines of a hosts file named {@code source} in errors.
   *
   * @return one placement per router, index = router number
   */
  static List<Placement> parse(List<String> lines, String source, int routers) {
    Line[] byRouter = new Line[routers];
    for (int i = 0; i < lines.size(); i++) {
      Line l = line(lines.get(i), source + ":" + (i + 1), i + 1, routers);
      if (l == null) {
        continue;
      }
      Line earlier = byRouter[l.router];
      if (earlier != null) {
        throw new IllegalArgumentException(
            l.where
                + ": router "
                + l.router
                + " is listed twice (first on line "
                + earlier.number
                + ")");
      }
      byRouter[l.router] = l;
    }
    List<Integer> missing = new ArrayList<>();
    for (int r = 0; r < routers; r++) {
      if (byRouter[r] == null) {
        missing.add(r);
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          source
              + ": no line for "
              + listOfRouters(missing)
              + " of the topology (routers 0.."
              + (routers - 1)
              + "; each needs one line: "
              + FORM
              + ")");
    }
    return assignPorts(byRouter);
  }

  /** One parsed line; ports[k] is null where the line leaves the port out. */
  private record Line(int router, String host, Integer[] ports, String where, int number) {}

  private static Line line(String text, String where, int number, int routers) {
    int hash = text.indexOf('#');
    String s = (hash >= 0 ? text.substring(0, hash) : text).strip();
    if (s.isEmpty()) {
      return null;
    }
    String[] fields = s.split("\\s+");
    if (fields.length != 2) {
      throw new IllegalArgumentException(where + ": expected " + FORM + ", got '" + s + "'");
    }
    int router;
    try {
      router = Integer.parseInt(fields[0]);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          where + ": router '" + fields[0] + "' is not a number (expected " + FORM + ")");
    }
    if (router < 0 || router >= routers) {
      throw new IllegalArgumentException(
          where
              + ": router "
              + router
              + " is not in the topology (routers 0.."
              + (routers - 1)
              + ")");
    }
    String spec = fields[1];
    String host;
    String rest;
    if (spec.startsWith("[")) {
      int close = spec.indexOf(']');
      if (close < 0) {
        throw new IllegalArgumentException(where + ": '" + spec + "' lacks the closing ']'");
      }
      host = spec.substring(1, close);
      rest = spec.substring(close + 1);
      if (!host.contains(":") || !IPV6.matcher(host).matches()) {
        throw new IllegalArgumentException(
            where + ": '" + host + "' in brackets is not an IPv6 address");
      }
      if (!rest.isEmpty() && !rest.startsWith(":")) {
        throw new IllegalArgumentException(
            where + ": expected ':' after ']' in '" + spec + "', got '" + rest + "'");
      }
    } else {
      int colon = spec.indexOf(':');
      host = colon < 0 ? spec : spec.substring(0, colon);
      rest = colon < 0 ? "" : spec.substring(colon);
      if (host.isEmpty()) {
        throw new IllegalArgumentException(where + ": no host in '" + spec + "'");
      }
      if (!NAME.matcher(host).matches()) {
        throw new IllegalArgumentException(
            where + ": '" + host + "' is not a host name or address (letters, digits, '.', '-')");
      }
    }
    Integer[] ports = new Integer[KINDS.length];
    if (!rest.isEmpty()) {
      String[] ps = rest.substring(1).split(":", -1);
      if (ps.length > KINDS.length) {
        throw new IllegalArgumentException(
            where
                + ": too many ':' in '"
                + spec
                + "' (expected HOST[:CLIENT_PORT[:ROUTER_PORT"
                + "[:METRICS_PORT]]], an IPv6 address in brackets: [fd00::1]:7400)");
      }
      for (int k = 0; k < ps.length; k++) {
        ports[k] = port(ps[k], KINDS[k], spec, where);
      }
    }
    return new Line(router, host, ports, where, number);
  }

  private static int port(String s, String kind, String spec, String where) {
    if (s.isEmpty()) {
      throw new IllegalArgumentException(
          where
              + ": empty "
              + kind
              + " port in '"
              + spec
              + "' (an IPv6 address goes in brackets: [fd00::1]:7400)");
    }
    int p;
    try {
      p = Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          where + ": " + kind + " port '" + s + "' in '" + spec + "' is not a number");
    }
    if (p < 1 || p > 65535) {
      throw new IllegalArgumentException(
          where + ": " + kind + " port " + p + " in '" + spec + "' is outside 1..65535");
    }
    return p;
  }

  /** Ports written in the file first, in line order; then the omitted ones by router number. */
  private static List<Placement> assignPorts(Line[] byRouter) {
    Map<String, Map<Integer, String>> used = new HashMap<>();
    List<Line> inFileOrder = new ArrayList<>(List.of(byRouter));
    inFileOrder.sort((a, b) -> Integer.compare(a.number, b.number));
    for (Line l : inFileOrder) {
      Map<Integer, String> onHost = used.computeIfAbsent(key(l.host), h -> new HashMap<>());
      for (int k = 0; k < KINDS.length; k++) {
        Integer p = l.ports[k];
        if (p == null) {
          continue;
        }
        String owner = "router " + l.router + "'s " + KINDS[k] + " port (line " + l.number + ")";
        String earlier = onHost.putIfAbsent(p, owner);
        if (earlier != null) {
          throw new IllegalArgumentException(
              l.where
                  + ": "
                  + KINDS[k]
                  + " port "
                  + p
                  + " on host "
                  + l.host
                  + " is already taken by "
                  + earlier);
        }
      }
    }
    List<Placement> out = new ArrayList<>(byRouter.length);
    for (Line l : byRouter) {
      Map<Integer, String> onHost = used.get(key(l.host));
      int[] ports = new int[KINDS.length];
      for (int k = 0; k < KINDS.length; k++) {
        if (l.ports[k] != null) {
          ports[k] = l.ports[k];
          continue;
        }
        int p = DEFAULTS[k];
        while (onHost.containsKey(p)) {
          p++;
        }
        if (p > 65535) {
          throw new IllegalArgumentException(
              l.where + ": no free " + KINDS[k] + " port left on host " + l.host);
        }
        onHost.put(p, "router " + l.router + "'s " + KINDS[k] + " port");
        ports[k] = p;
      }
      out.add(new Placement(l.router, l.host, ports[0], ports[1], ports[2], l.number));
    }
    return out;
  }

  private static String key(String host) {
    return host.toLowerCase(Locale.ROOT);
  }

  private static String listOfRouters(List<Integer> rs) {
    int shown = Math.min(rs.size(), 10);
    StringBuilder b = new StringBuilder(rs.size() == 1 ? "router " : "routers ");
    for (int i = 0; i < shown; i++) {
      b.append(i == 0 ? "" : ", ").append(rs.get(i));
    }
    if (rs.size() > shown) {
      b.append(" and ").append(rs.size() - shown).append(" more");
    }
    return b.toString();
  }
}
