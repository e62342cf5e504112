package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The conformance suite checked as a whole: every test of this package names at least one normative
 * statement ({@link Normative}), each id is well-formed and listed in {@link Statements} with what
 * it requires, every listed statement is cited, each test's display name starts with its ids, and
 * docs/mqtt-conformance.md is the table this class writes from them, so that the document cannot
 * drift from the tests. With {@code -Dmqtt.conformance.write=true} the table is written instead of
 * checked.
 */
class ConformanceSuiteTest {
  private static final String DOC = "docs/mqtt-conformance.md";

  /** A conformance test: its class, method, statements, and why it is disabled (or null). */
  record Case(Class<?> type, Method method, Normative normative, String disabled) {
    String name() {
      return type.getSimpleName() + "." + method.getName();
    }
  }

  /** Every conformance test of this package, by class and method name. */
  static List<Case> cases() throws IOException, ClassNotFoundException, URISyntaxException {
    String pkg = ConformanceSuiteTest.class.getPackageName();
    URL dir = ConformanceSuiteTest.class.getResource("");
    List<Case> out = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> s = Files.list(Path.of(dir.toURI()))) {
      files = s.filter(p -> p.toString().endsWith(".class")).sorted().toList();
    }
    for (Path f : files) {
      String simple = f.getFileName().toString().replace(".class", "");
      Class<?> c = Class.forName(pkg + "." + simple);
      if (c == ConformanceSuiteTest.class) {
        continue;
      }
      for (Method m : c.getDeclaredMethods()) {
        if (m.isAnnotationPresent(Test.class) || m.isAnnotationPresent(ParameterizedTest.class)) {
          Disabled d = m.getAnnotation(Disabled.class);
          out.add(new Case(c, m, m.getAnnotation(Normative.class), d == null ? null : d.value()));
        }
      }
    }
    out.sort(Comparator.comparing(Case::name));
    return out;
  }

  @Test
  void everyTestNamesWellFormedStatementsItsDisplayNameStartsWith() throws Exception {
    List<Case> cases = cases();
    assertTrue(cases.size() > 20, "the suite's tests are found: " + cases.size());
    for (Case c : cases) {
      Normative n = c.normative();
      assertTrue(n != null, c.name() + " has no @Normative");
      assertTrue(n.v5().length + n.v311().length > 0, c.name() + " names no statement");
      check(c, n.v5(), Statements.V5, "MQTT 5");
      check(c, n.v311(), Statements.V311, "MQTT 3.1.1");
      DisplayName d = c.method().getAnnotation(DisplayName.class);
      assertTrue(d != null, c.name() + " has no @DisplayName");
      String prefix = Statements.prefix(n);
      assertTrue(
          d.value().startsWith(prefix) && d.value().length() > prefix.length(),
          c.name() + ": the display name must start with \"" + prefix + "\" and say more");
    }
  }

  private static void check(Case c, String[] ids, Map<String, String> listed, String version) {
    for (String id : ids) {
      assertTrue(Statements.ID.matcher(id).matches(), c.name() + ": not an id: " + id);
      assertTrue(
          listed.containsKey(id), c.name() + ": " + id + " is not in Statements (" + version + ")");
    }
    assertEquals(ids.length, java.util.Set.of(ids).size(), c.name() + ": an id named twice");
  }

  @Test
  void everyListedStatementIsCited() throws Exception {
    List<Case> cases = cases();
    for (String id : Statements.V5.keySet()) {
      assertFalse(tests(cases, id, true).isEmpty(), "MQTT 5 " + id + " is cited by no test");
    }
    for (String id : Statements.V311.keySet()) {
      assertFalse(tests(cases, id, false).isEmpty(), "MQTT 3.1.1 " + id + " is cited by no test");
    }
  }

  private static List<Case> tests(List<Case> cases, String id, boolean v5) {
    List<Case> out = new ArrayList<>();
    for (Case c : cases) {
      if (List.of(v5 ? c.normative().v5() : c.normative().v311()).contains(id)) {
        out.add(c);
      }
    }
    return out;
  }

  @Test
  void theConformanceTableIsTheOneTheTestsMake() throws Exception {
    String table = table(cases());
    Path doc = repositoryRoot().resolve(DOC);
    if (Boolean.getBoolean("mqtt.conformance.write")) {
      Files.writeString(doc, table, StandardCharsets.UTF_8);
      return;
    }
    assertTrue(Files.exists(doc), DOC + " is missing; run with -Dmqtt.conformance.write=true");
    assertEquals(
        table,
        Files.readString(doc, StandardCharsets.UTF_8),
        DOC
            + " is not the table the tests make; run ConformanceSuiteTest with"
            + " -Dmqtt.conformance.write=true and commit it");
  }

  private static Path repositoryRoot() {
    Path p = Path.of("").toAbsolutePath();
    while (p != null && !Files.exists(p.resolve("docs/mqtt.md"))) {
      p = p.getParent();
    }
    assertTrue(p != null, "the repository's root (with docs/mqtt.md) above the working directory");
    return p;
  }

  /** docs/mqtt-conformance.md as the tests make it. */
  static String table(List<Case> cases) {
    StringBuilder b = new StringBuilder();
    int v5 = covered(cases, Statements.V5, true);
    int v311 = covered(cases, Statements.V311, false);
    b.append("# MQTT conformance\n\n");
    b.append("The MQTT port's own conformance suite\n");
    b.append("(`router/src/test/java/io/bdrp/router/mqtt/conformance/`) checks a router against\n");
    b.append("the numbered normative statements of\n");
    b.append("[MQTT 5.0](https://docs.oasis-open.org/mqtt/mqtt/v5.0/mqtt-v5.0.html) and\n");
    b.append("[MQTT 3.1.1](https://docs.oasis-open.org/mqtt/mqtt/v3.1.1/mqtt-v3.1.1.html), with\n");
    b.append("raw packets on a real socket to a real router. Each test names the statements it\n");
    b.append(
        "checks (`@Normative`, and its display name starts with them). This page is written by\n");
    b.append(
        "`ConformanceSuiteTest`, which fails when it differs from the tests; after changing the\n");
    b.append("suite, rewrite it with\n\n");
    b.append("```sh\nmvn -B -pl router -am test -Dtest=ConformanceSuiteTest");
    b.append(" -Dsurefire.failIfNoSpecifiedTests=false -Dmqtt.conformance.write=true\n```\n\n");
    b.append("and run the suite with `-Dtest='*ConformanceTest'`. The \"requires\" column is a\n");
    b.append(
        "summary in our words; the specifications have the text. The two specifications number\n");
    b.append("their statements independently, so the tables are apart.\n\n");
    b.append("Statements checked: ")
        .append(v5)
        .append(" of MQTT 5.0 and ")
        .append(v311)
        .append(" of MQTT 3.1.1, by ")
        .append(cases.stream().filter(c -> c.disabled() == null).count())
        .append(
            " tests.\nStatements whose only tests are disabled are marked *not yet*: the router\n");
    b.append("does not conform there yet (the section at the end says why).\n\n");
    b.append("Not in the suite yet as statements: kept sessions (clean start 0, session expiry,\n");
    b.append("queued messages), shared subscriptions and retained messages, which have tests of\n");
    b.append("their own (`MqttSessionTest`, `MqttSharedSubscriptionTest`, `MqttRetainedTest`).\n");
    b.append("Their statements go in new classes of the package, added to `Statements`.\n\n");
    section(b, "MQTT 5.0", Statements.V5, cases, true);
    section(b, "MQTT 3.1.1", Statements.V311, cases, false);
    b.append("## Not yet\n\n");
    if (cases.stream().allMatch(c -> c.disabled() == null)) {
      b.append("Nothing: every statement listed has a test that runs.\n");
    }
    for (Case c : cases) {
      if (c.disabled() != null) {
        b.append("- `").append(c.name()).append("` (");
        b.append(String.join(", ", ids(c))).append("): ");
        b.append(c.disabled()).append('\n');
      }
    }
    return b.toString();
  }

  private static List<String> ids(Case c) {
    List<String> out = new ArrayList<>();
    for (String id : c.normative().v5()) {
      out.add(id);
    }
    for (String id : c.normative().v311()) {
      out.add("3.1.1 " + id);
    }
    return out;
  }

  private static int covered(List<Case> cases, Map<String, String> listed, boolean v5) {
    int n = 0;
    for (String id : listed.keySet()) {
      if (tests(cases, id, v5).stream().anyMatch(c -> c.disabled() == null)) {
        n++;
      }
    }
    return n;
  }

  private static void section(
      StringBuilder b, String title, Map<String, String> listed, List<Case> cases, boolean v5) {
    b.append("## ").append(title).append("\n\n");
    b.append("| statement | requires | tests |\n|---|---|---|\n");
    Map<String, String> sorted = new TreeMap<>(Statements::compare);
    sorted.putAll(listed);
    for (Map.Entry<String, String> e : sorted.entrySet()) {
      List<Case> by = tests(cases, e.getKey(), v5);
      boolean enabled = by.stream().anyMatch(c -> c.disabled() == null);
      b.append("| ").append(e.getKey()).append(enabled ? "" : " (*not yet*)");
      b.append(" | ").append(e.getValue().replace("|", "\\|")).append(" | ");
      List<String> names = new ArrayList<>();
      for (Case c : by) {
        names.add("`" + c.name() + "`" + (c.disabled() == null ? "" : " (disabled)"));
      }
      b.append(String.join(", ", names)).append(" |\n");
    }
    b.append('\n');
  }
}
