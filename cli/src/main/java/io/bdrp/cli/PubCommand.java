package io.bdrp.cli;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttTopic;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
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
      names = "--name",
      defaultValue = "bdrp-pub",
      description = "Client name shown by the router (default: ${DEFAULT-VALUE}).")
  String name;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    try (BdrpClient c =
        router.connect(
            credentials.apply(BdrpClient.builder()).name(name).reconnect(false), err, "bdrp pub")) {
      if (topic != null) {
        try {
          MqttTopic.checkName(topic);
        } catch (IllegalArgumentException e) {
          throw new picocli.CommandLine.ParameterException(
              spec.commandLine(), "--topic: " + e.getMessage());
        }
      }
      if ((attrs != null && !attrs.isEmpty()) || body != null) {
        c.sendAcknowledged(withTopic(fromFlags())).get(10, TimeUnit.SECONDS);
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
        c.send(withTopic(m)).get(10, TimeUnit.SECONDS);
        sent++;
      }
      c.flush().get(10, TimeUnit.SECONDS); // the router has taken everything sent

      err.println(
          "bdrp pub: "
              + sent
              + " messages published"
              + (bad > 0 ? ", " + bad + " bad lines skipped" : ""));
      err.flush();
      return bad > 0 ? 1 : 0;
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
