package io.bdrp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.TraceReport;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp trace}: asks a router who would receive a message, without publishing it (see
 * docs/trace.md), and prints what every router the trace copy reached did with it.
 */
@Command(
    name = "trace",
    mixinStandardHelpOptions = true,
    description = {
      "Traces a message without publishing it: the router routes a trace-only copy exactly as it"
          + " would route the message, delivers it to no host, and every router the copy reaches"
          + " reports what it did (destinations and false positives at the ingress, splits in"
          + " transit, matching hosts at destinations, drops and their reasons).",
      "Prints the routers as a tree from the ingress, or with --json one JSON object. Exit status:"
          + " 0 every router reported, 3 some did not within --timeout (they are named), 1 the"
          + " router refused the trace or could not be reached, 2 a usage error.",
    })
public final class TraceCommand implements Callable<Integer> {
  /** Exit status when some routers did not report before the timeout. */
  static final int INCOMPLETE = 3;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @picocli.CommandLine.Mixin ClientCredentials credentials;

  @picocli.CommandLine.Mixin RouterAddressOption router;

  @Parameters(
      paramLabel = "MESSAGE",
      description =
          "The message as a JSON object, as bdrp pub reads and bdrp sub prints:"
              + " '{\"stock\":\"XYZ\",\"price\":21}'.")
  String message;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      defaultValue = "2s",
      description =
          "How long the router waits for the reports, such as 2s or 500ms, at most 60s (default:"
              + " ${DEFAULT-VALUE}).")
  String timeout;

  @Option(names = "--json", description = "Print the result as one JSON object.")
  boolean json;

  @Option(
      names = "--name",
      defaultValue = "bdrp-trace",
      description = "Client name shown by the router (default: ${DEFAULT-VALUE}).")
  String name;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Message m;
    Duration wait;
    try {
      m = JsonMessages.parse(message);
      wait = RouterAddressOption.duration("--timeout", timeout);
      if (wait.toMillis() < 1 || wait.toMillis() > ClientFrame.MAX_TRACE_TIMEOUT_MS) {
        throw new IllegalArgumentException("--timeout: from 1ms to 60s, got '" + timeout + "'");
      }
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          e.getMessage().startsWith("--") ? e.getMessage() : "MESSAGE: " + e.getMessage());
    }
    try (BdrpClient c =
        router.connect(
            credentials.apply(BdrpClient.builder()).name(name).reconnect(false),
            err,
            "bdrp trace")) {
      ClientFrame.TraceResult r;
      try {
        r = c.trace(m, wait).get(wait.toMillis() + 10_000, TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        err.println("bdrp trace: " + e.getCause().getMessage());
        err.flush();
        return 1;
      }
      if (json) {
        out.println(json(r));
      } else {
        out.print(text(r));
      }
      out.flush();
      return r.complete() ? 0 : INCOMPLETE;
    }
  }

  /** The result as the tree that {@code bdrp trace} prints (and the web console shows). */
  public static String text(ClientFrame.TraceResult r) {
    StringBuilder s = new StringBuilder();
    s.append("trace ")
        .append(Long.toHexString(r.traceId()))
        .append(" from router ")
        .append(r.ingress())
        .append(": D = ")
        .append(set(r.destinations()))
        .append(", false positives ")
        .append(set(r.falsePositives()))
        .append(", ")
        .append(r.matchingHosts())
        .append(" matching host")
        .append(r.matchingHosts() == 1 ? "" : "s")
        .append('\n');
    Map<Integer, List<TraceReport>> children = new LinkedHashMap<>();
    for (TraceReport rep : r.reports()) {
      if (!rep.ingress()) {
        children.computeIfAbsent(rep.from(), k -> new ArrayList<>()).add(rep);
      }
    }
    Set<TraceReport> printed = new HashSet<>();
    Set<Integer> fp = Arrays.stream(r.falsePositives()).boxed().collect(Collectors.toSet());
    Set<Integer> d = Arrays.stream(r.destinations()).boxed().collect(Collectors.toSet());
    for (TraceReport rep : r.reports()) {
      if (rep.ingress()) {
        tree(s, rep, 1, children, printed, d, fp);
      }
    }
    for (TraceReport rep : r.reports()) {
      if (!printed.contains(rep)) {
        tree(s, rep, 1, children, printed, d, fp); // its sender's report is missing
      }
    }
    for (int missing : r.missing()) {
      s.append("  router ").append(missing).append(": no report before the timeout\n");
    }
    return s.toString();
  }

  private static void tree(
      StringBuilder s,
      TraceReport rep,
      int depth,
      Map<Integer, List<TraceReport>> children,
      Set<TraceReport> printed,
      Set<Integer> d,
      Set<Integer> fp) {
    if (!printed.add(rep)) {
      return;
    }
    String indent = "  ".repeat(depth);
    s.append(indent).append("router ").append(rep.router());
    if (rep.ingress()) {
      s.append(" (ingress)");
    } else {
      s.append(" from ").append(rep.from()).append(", hop limit ").append(rep.hopLimit());
    }
    if (rep.broadcast()) {
      s.append(", broadcast");
    }
    if (rep.local()) {
      s.append(rep.ingress() ? ", local hosts: " : d.contains(rep.router()) ? ", in D: " : ": ");
      s.append(rep.matching()).append(" matching host").append(rep.matching() == 1 ? "" : "s");
      if (!rep.hosts().isEmpty()) {
        s.append(" (")
            .append(
                rep.hosts().stream()
                    .map(h -> h.name().isEmpty() ? "#" + h.id() : h.name() + " #" + h.id())
                    .collect(Collectors.joining(", ")));
        if (rep.matching() > rep.hosts().size()) {
          s.append(", ").append(rep.matching() - rep.hosts().size()).append(" more");
        }
        s.append(')');
      }
      if (fp.contains(rep.router())) {
        s.append(": a false positive of the Bloom encoding");
      }
    } else if (!rep.ingress()) {
      s.append(", transit");
    }
    s.append('\n');
    for (TraceReport.Copy c : rep.copies()) {
      s.append(indent).append("  -> ").append(c.neighbour());
      s.append(c.routers().length == 0 ? " (tree)" : " for " + set(c.routers()));
      if (!c.sent()) {
        s.append(", not sent");
      }
      if (c.fastPath()) {
        s.append(", kernel fast path");
      }
      s.append('\n');
    }
    for (TraceReport.Dropped x : rep.drops()) {
      s.append(indent).append("  dropped: ").append(x.reason()).append(" x").append(x.count());
      if (x.routers().length > 0) {
        s.append(" ").append(set(x.routers()));
      }
      s.append('\n');
    }
    for (TraceReport child : children.getOrDefault(rep.router(), List.of())) {
      tree(s, child, depth + 1, children, printed, d, fp);
    }
  }

  private static String set(int[] routers) {
    return Arrays.stream(routers)
        .mapToObj(Integer::toString)
        .collect(Collectors.joining(", ", "{", "}"));
  }

  /**
   * The result as one JSON object (the layout is in docs/trace.md), as {@code bdrp trace --json}
   * prints it and the web console's {@code POST /api/trace} answers it.
   */
  public static String json(ClientFrame.TraceResult r) {
    ObjectMapper json = new ObjectMapper();
    ObjectNode o = json.createObjectNode();
    o.put("traceId", Long.toHexString(r.traceId()));
    o.put("ingress", r.ingress());
    o.put("complete", r.complete());
    ints(o.putArray("destinations"), r.destinations());
    ints(o.putArray("falsePositives"), r.falsePositives());
    ints(o.putArray("missing"), r.missing());
    o.put("matchingHosts", r.matchingHosts());
    ArrayNode reports = o.putArray("reports");
    for (TraceReport rep : r.reports()) {
      ObjectNode x = reports.addObject();
      x.put("router", rep.router());
      if (rep.ingress()) {
        x.putNull("from");
      } else {
        x.put("from", rep.from());
      }
      x.put("hopLimit", rep.hopLimit());
      x.put("broadcast", rep.broadcast());
      x.put("local", rep.local());
      x.put("matching", rep.matching());
      ArrayNode hosts = x.putArray("hosts");
      for (TraceReport.Host h : rep.hosts()) {
        ObjectNode hn = hosts.addObject().put("id", h.id());
        if (rep.named()) {
          hn.put("name", h.name());
        }
      }
      ArrayNode copies = x.putArray("copies");
      for (TraceReport.Copy c : rep.copies()) {
        ObjectNode cn =
            copies
                .addObject()
                .put("neighbour", c.neighbour())
                .put("sent", c.sent())
                .put("fastPath", c.fastPath());
        ints(cn.putArray("routers"), c.routers());
      }
      ArrayNode drops = x.putArray("drops");
      for (TraceReport.Dropped dr : rep.drops()) {
        ObjectNode dn = drops.addObject().put("reason", dr.reason()).put("count", dr.count());
        ints(dn.putArray("routers"), dr.routers());
      }
    }
    return o.toString();
  }

  private static void ints(ArrayNode a, int[] values) {
    for (int v : values) {
      a.add(v);
    }
  }
}
