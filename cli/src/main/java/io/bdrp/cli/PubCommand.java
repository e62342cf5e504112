package io.bdrp.cli;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttTopic;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bdrp pub}: publishes messages read as JSON lines from stdin, or one given by flags. */
@Command(
    name = "pub",
    mixinStandardHelpOptions = true,
    description = {
      "Publishes messages through a router. Without --attr, reads one JSON object per line from"
          + " stdin (the format bdrp sub prints); a bad line is reported on stderr with its number"
          + " and skipped, and the exit status is 1. With --attr, publishes one message.",
      "With --confirm, publishes reliably and waits until the router confirms every message (every"
          + " router whose hosts want it has it); prints how many were confirmed and which routers"
          + " were not reached, and the exit status is 1 unless every message was confirmed.",
    })
final class PubCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @picocli.CommandLine.Mixin ClientCredentials credentials;

  @picocli.CommandLine.Mixin RouterAddressOption router;

  @Option(
      names = "--attr",
      description =
          "name=value; value is read as JSON when it parses (42, 1.5, true, \"s\"), else as a string. Repeatable.")
  List<String> attrs;

  @Option(
      names = "--topic",
      description =
          "An MQTT topic name for every message published: its attributes (mqtt.topic, mqtt.levels,"
              + " mqtt.dollar, mqtt.level.N; docs/mqtt.md) are added, so that MQTT subscribers whose"
              + " filters match it receive the message.")
  String topic;

  @Option(
      names = "--body",
      description =
          "Publishes one message with this body, UTF-8 text (and the --attr attributes); an MQTT"
              + " subscriber gets it as the payload.")
  String body;

  @Option(
      names = "--confirm",
      description =
          "Publish reliably (docs/client.md, \"Reliable publishing\") and wait for the router's"
              + " confirmation of every message; a broken session is dialled again and what was not"
              + " confirmed is sent again. Needs a router that offers the reliable service.")
  boolean confirm;

  @Option(
      names = "--confirm-timeout",
      paramLabel = "DURATION",
      defaultValue = "60s",
      description =
          "With --confirm: give up once no confirmation has come for this long, such as 30s or"
              + " 500ms; the messages still waiting count as not confirmed (default:"
              + " ${DEFAULT-VALUE}).")
  String confirmTimeout;

  @Option(
      names = "--name",
      defaultValue = "bdrp-pub",
      description = "Client name shown by the router (default: ${DEFAULT-VALUE}).")
  String name;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    Confirmations confirmations =
        confirm
            ? new Confirmations(RouterAddressOption.duration("--confirm-timeout", confirmTimeout))
            : null;
    try (BdrpClient c =
        router.connect(
            credentials.apply(BdrpClient.builder()).name(name).reconnect(confirm),
            err,
            "bdrp pub")) {
      if (topic != null) {
        try {
          MqttTopic.checkName(topic);
        } catch (IllegalArgumentException e) {
          throw new picocli.CommandLine.ParameterException(
              spec.commandLine(), "--topic: " + e.getMessage());
        }
      }
      if ((attrs != null && !attrs.isEmpty()) || body != null) {
        Message m = withTopic(fromFlags());
        if (confirmations != null) {
          confirmations.add(c.sendReliable(m));
          return confirmations.finish(err) ? 0 : 1;
        }
        c.sendAcknowledged(m).get(10, TimeUnit.SECONDS);
        return 0;
      }
      long lineNo = 0;
      long sent = 0;
      long bad = 0;
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        lineNo++;
        if (line.isBlank()) {
          continue;
        }
        Message m;
        try {
          m = JsonMessages.parse(line);
        } catch (IllegalArgumentException e) {
          bad++;
          err.println("bdrp pub: line " + lineNo + ": " + e.getMessage());
          err.flush();
          continue;
        }
        if (confirmations != null) {
          confirmations.add(c.sendReliable(withTopic(m)));
        } else {
          c.send(withTopic(m)).get(10, TimeUnit.SECONDS);
        }
        sent++;
      }
      if (confirmations == null) {
        c.flush().get(10, TimeUnit.SECONDS); // the router has taken everything sent
      }

      err.println(
          "bdrp pub: "
              + sent
              + " messages published"
              + (bad > 0 ? ", " + bad + " bad lines skipped" : ""));
      err.flush();
      boolean allConfirmed = confirmations == null || confirmations.finish(err);
      return bad > 0 || !allConfirmed ? 1 : 0;
    }
  }

  /**
   * The futures of {@code --confirm}'s reliable messages, settled oldest first: at most {@link
   * #WINDOW} wait at a time (reading stdin pauses beyond), so that a long input is not held in
   * memory whole. Counts what was confirmed, not reached (with the routers), refused or lost. Used
   * by the command's thread only.
   */
  static final class Confirmations {
    /** Reliable messages published and not yet settled here, at most. */
    static final int WINDOW = 1_000;

    private final Duration timeout;
    private final ArrayDeque<CompletableFuture<Void>> waiting = new ArrayDeque<>();
    private final TreeSet<Integer> unreachedRouters = new TreeSet<>();
    private long confirmed;
    private long unreached;
    private long refused;
    private long failed;
    private long timedOut;
    private String firstProblem;

    Confirmations(Duration timeout) {
      this.timeout = timeout;
    }

    /** A message published; waits for the oldest if {@link #WINDOW} are waiting. */
    void add(CompletableFuture<Void> f) throws InterruptedException {
      waiting.add(f);
      while (waiting.size() > WINDOW) {
        settle(waiting.poll());
      }
    }

    /**
     * Waits for every message still waiting and prints the outcome on {@code err}; true if every
     * message was confirmed.
     */
    boolean finish(PrintWriter err) throws InterruptedException {
      while (!waiting.isEmpty()) {
        settle(waiting.poll());
      }
      StringBuilder line = new StringBuilder("bdrp pub: ").append(confirmed).append(" confirmed");
      if (unreached > 0) {
        line.append(", ")
            .append(unreached)
            .append(" not reaching every router (not reached: routers ")
            .append(String.join(", ", unreachedRouters.stream().map(String::valueOf).toList()))
            .append(")");
      }
      if (refused > 0) {
        line.append(", ").append(refused).append(" refused");
      }
      if (failed > 0) {
        line.append(", ").append(failed).append(" lost with the session");
      }
      if (timedOut > 0) {
        line.append(", ")
            .append(timedOut)
            .append(" not confirmed within ")
            .append(timeout.toMillis())
            .append(" ms (--confirm-timeout)");
      }
      err.println(line);
      if (firstProblem != null) {
        err.println("bdrp pub: first problem: " + firstProblem);
      }
      err.flush();
      return unreached + refused + failed + timedOut == 0;
    }

    /** Waits for {@code f}, unless the timeout already passed once, and counts its outcome. */
    private void settle(CompletableFuture<Void> f) throws InterruptedException {
      try {
        if (timedOut > 0 && !f.isDone()) {
          timedOut++; // gave up already: what has not come counts as not confirmed
          return;
        }
        f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        confirmed++;
      } catch (TimeoutException e) {
        timedOut++;
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof BdrpClient.UnreachedException u) {
          unreached++;
          for (int r : u.routers()) {
            unreachedRouters.add(r);
          }
        } else if (cause instanceof BdrpClient.RouterException) {
          refused++;
        } else {
          failed++;
        }
        if (firstProblem == null) {
          firstProblem = cause.getMessage();
        }
      }
    }
  }

  /**
   * The JSON of an {@code --attr} value, typed as on stdin: a JSON number, boolean or quoted string
   * keeps its type, anything else that is not JSON (a bare word) is a string, and JSON that stdin
   * refuses (null, an object, an array) is refused here too.
   */
  static String attrValue(String name, String value) {
    String t = value.strip();
    boolean json = t.equals("null") || t.startsWith("{") || t.startsWith("[");
    try {
      JsonMessages.parse("{\"v\":" + value + "}");
      return value;
    } catch (IllegalArgumentException e) {
      if (json) {
        throw new IllegalArgumentException(
            "--attr "
                + name
                + "="
                + value
                + ": values are strings, numbers or booleans, as on stdin; to send the text, quote"
                + " it: --attr '"
                + name
                + "=\""
                + value.replace("\"", "\\\"")
                + "\"'");
      }
      return quote(value);
    }
  }

  /** {@code m} with the attributes of {@code --topic} and the {@code --body}, if given. */
  private Message withTopic(Message m) {
    if (topic == null && body == null) {
      return m;
    }
    Message.Builder b = Message.builder();
    m.attributes().forEach(b::put);
    if (topic != null) {
      MqttTopic.put(b, topic);
    }
    if (body != null) {
      b.body(body.getBytes(StandardCharsets.UTF_8));
    } else if (m.bodyLength() > 0) {
      b.body(m.body());
    }
    return b.build();
  }

  private Message fromFlags() {
    StringBuilder json = new StringBuilder("{");
    for (String a : attrs == null ? List.<String>of() : attrs) {
      int eq = a.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--attr must be name=value, got '" + a + "'");
      }
      String name = a.substring(0, eq);
      String value = a.substring(eq + 1);
      if (json.length() > 1) {
        json.append(',');
      }
      json.append(quote(name.startsWith("$") ? "$" + name : name)).append(':');
      json.append(attrValue(name, value));
    }
    return JsonMessages.parse(json.append('}').toString());
  }

  private static String quote(String s) {
    return new com.fasterxml.jackson.databind.node.TextNode(s).toString();
  }
}
