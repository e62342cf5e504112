package io.bdrp.encoding.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * MQTT topic names and filters mapped to attributes and predicates. Statement numbers are those of
 * MQTT 5.0 §4.7 (3.1.1's numbers are given where they differ); the property tests compare {@link
 * MqttTopic#filter} with {@link #reference}, a matcher written from the spec's rules.
 */
class MqttTopicTest {

  private static Message msg(String topic) {
    return MqttTopic.put(Message.builder(), topic).build();
  }

  private static boolean matches(String filter, String topic) {
    return MqttTopic.filter(filter).matches(msg(topic));
  }

  // ---- the reference matcher, from the spec's words ----

  /**
   * MQTT's matching, level by level: '+' matches exactly one level (empty ones too), '#' matches
   * the rest, its parent level included; other levels match only themselves, unnormalised; a filter
   * starting with a wildcard matches no topic starting with '$'.
   */
  static boolean reference(String filter, String topic) {
    if (topic.startsWith("$") && (filter.startsWith("+") || filter.startsWith("#"))) {
      return false;
    }
    return refLevels(filter.split("/", -1), 0, topic.split("/", -1), 0);
  }

  private static boolean refLevels(String[] f, int i, String[] t, int j) {
    if (i == f.length) {
      return j == t.length;
    }
    if (f[i].equals("#")) {
      return true;
    }
    if (j == t.length) {
      return false;
    }
    return (f[i].equals("+") || f[i].equals(t[j])) && refLevels(f, i + 1, t, j + 1);
  }

  private static final String[] POOL = {
    "", "a", "b", "$", "$SYS", "a$", "é", "e\u0301", "😀", "a b", " ", "A", "sport", "\u0001"
  };

  private static String randomTopic(Random r, int maxLevels) {
    int n = 1 + r.nextInt(maxLevels);
    List<String> levels = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      levels.add(POOL[r.nextInt(POOL.length)]);
    }
    String t = String.join("/", levels);
    return t.isEmpty() ? "a" : t;
  }

  /**
   * A filter derived from a topic: levels kept, replaced by '+' or changed, and maybe cut by '#'.
   */
  private static String derivedFilter(Random r, String topic) {
    List<String> levels = new ArrayList<>(List.of(topic.split("/", -1)));
    for (int i = 0; i < levels.size(); i++) {
      switch (r.nextInt(6)) {
        case 0, 1 -> levels.set(i, "+");
        case 2 -> levels.set(i, POOL[r.nextInt(POOL.length)]);
        default -> {}
      }
    }
    int cut = r.nextInt(levels.size() + 3);
    if (cut <= levels.size() && r.nextBoolean()) {
      levels = new ArrayList<>(levels.subList(0, cut));
      levels.add("#");
    } else if (r.nextInt(8) == 0) {
      levels.add(r.nextBoolean() ? "+" : "");
    } else if (r.nextInt(8) == 0 && levels.size() > 1) {
      levels.remove(levels.size() - 1);
    }
    String f = String.join("/", levels);
    return f.isEmpty() ? "+" : f;
  }

  private static String randomFilter(Random r) {
    int n = r.nextInt(5);
    List<String> levels = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      levels.add(r.nextInt(3) == 0 ? "+" : POOL[r.nextInt(POOL.length)]);
    }
    if (n == 0 || r.nextInt(3) == 0) {
      levels.add("#");
    }
    return String.join("/", levels).isEmpty() ? "#" : String.join("/", levels);
  }

  @Property(tries = 2000)
  void filterPredicateMatchesAsTheSpecSays(@ForAll long seed) {
    Random r = new Random(seed);
    String topic = randomTopic(r, 6);
    Message m = msg(topic);
    for (int k = 0; k < 20; k++) {
      String filter = k % 2 == 0 ? derivedFilter(r, topic) : randomFilter(r);
      Predicate p = MqttTopic.filter(filter);
      assertEquals(
          reference(filter, topic), p.matches(m), () -> filter + " on " + topic + ": " + p);
    }
  }

  @Test
  void theGeneratedCasesMatchOftenAndFailOften() {
    Random r = new Random(4711);
    int matched = 0;
    int dollarRefused = 0;
    int total = 0;
    for (int i = 0; i < 2000; i++) {
      String topic = randomTopic(r, 6);
      for (int k = 0; k < 20; k++, total++) {
        String filter = k % 2 == 0 ? derivedFilter(r, topic) : randomFilter(r);
        if (reference(filter, topic)) {
          matched++;
        } else if (topic.startsWith("$") && (filter.startsWith("+") || filter.startsWith("#"))) {
          dollarRefused++;
        }
      }
    }
    assertTrue(matched > total / 5, matched + " of " + total);
    assertTrue(total - matched > total / 5, matched + " of " + total);
    assertTrue(dollarRefused > 100, "$ rule exercised " + dollarRefused + " times");
  }

  @Property(tries = 300)
  void deepTopicsMatchAsTheSpecSays(@ForAll long seed) {
    Random r = new Random(seed);
    List<String> levels = new ArrayList<>();
    int n = 55 + r.nextInt(20);
    for (int i = 0; i < n; i++) {
      levels.add(r.nextInt(4) == 0 ? "" : "ab".substring(r.nextInt(2), r.nextInt(2) + 1));
    }
    String topic = String.join("/", levels);
    Message m = msg(topic);
    for (int k = 0; k < 20; k++) {
      String filter = derivedFilter(r, topic);
      boolean deep = filter.contains("+") || filter.contains("#");
      int named = filter.split("/", -1).length - (filter.endsWith("#") ? 1 : 0);
      Predicate p;
      try {
        p = MqttTopic.filter(filter);
      } catch (IllegalArgumentException refused) {
        assertTrue(
            deep && (named > MqttTopic.MAX_LEVELS || refused.getMessage().contains("constraints")),
            refused.getMessage());
        continue;
      }
      assertEquals(reference(filter, topic), p.matches(m), () -> filter + " on " + topic);
    }
  }

  // ---- the attributes of a topic ----

  @Test
  void topicAttributesCountEmptyLevels() {
    Message m = msg("a/b");
    assertEquals(Value.of("a/b"), m.get(MqttTopic.TOPIC));
    assertEquals(Value.of(2), m.get(MqttTopic.LEVELS));
    assertEquals(Value.FALSE, m.get(MqttTopic.DOLLAR));
    assertEquals(Value.of("a"), m.get("mqtt.level.0"));
    assertEquals(Value.of("b"), m.get("mqtt.level.1"));
    assertEquals(5, m.size());
    assertEquals(Value.of(2), msg("a/").get(MqttTopic.LEVELS));
    assertEquals(Value.of(""), msg("a/").get("mqtt.level.1"));
    assertEquals(Value.of(2), msg("/").get(MqttTopic.LEVELS));
    assertEquals(Value.of(""), msg("/").get("mqtt.level.0"));
    assertEquals(Value.of(1), msg("a").get(MqttTopic.LEVELS));
    assertEquals(Value.of(3), msg("//").get(MqttTopic.LEVELS));
    assertEquals(Value.TRUE, msg("$SYS/x").get(MqttTopic.DOLLAR));
    assertEquals("a/b", MqttTopic.of(msg("a/b")));
    assertNull(MqttTopic.of(Message.builder().put("x", 1).build()));
    assertNull(MqttTopic.of(Message.builder().put(MqttTopic.TOPIC, 1).build()));
  }

  @Test
  void onlyTheFirst64LevelsAreAttributes() {
    String topic = String.join("/", Collections.nCopies(70, "x"));
    Message m = msg(topic);
    assertEquals(Value.of(70), m.get(MqttTopic.LEVELS));
    assertEquals(Value.of("x"), m.get("mqtt.level.63"));
    assertNull(m.get("mqtt.level.64"));
    // A filter without wildcards is an equality on the whole name, at any depth.
    assertTrue(matches(topic, topic));
    assertTrue(matches(String.join("/", Collections.nCopies(64, "+")) + "/#", topic));
    assertFalse(matches(String.join("/", Collections.nCopies(64, "+")), topic));
  }

  // ---- filters, by the normative statement they implement ----

  @Test
  void multiLevelWildcardMatchesTheParentAndAllChildren_MQTT_4_7_1_1() {
    assertTrue(matches("sport/tennis/player1/#", "sport/tennis/player1"));
    assertTrue(matches("sport/tennis/player1/#", "sport/tennis/player1/ranking"));
    assertTrue(matches("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon"));
    assertTrue(matches("sport/#", "sport"));
    assertTrue(matches("sport/#", "sport/"));
    assertFalse(matches("sport/#", "sports"));
    assertTrue(matches("#", "sport/tennis"));
    assertTrue(matches("#", "/"));
    assertTrue(matches("/#", "/"));
    assertFalse(matches("/#", "a/"));
    assertTrue(matches("+/#", "a"));
    assertFalse(matches("a/+/#", "a"));
    assertTrue(matches("a/+/#", "a/"));
  }

  @Test
  void multiLevelWildcardMustBeAWholeLastLevel_MQTT_4_7_1_1() {
    // MQTT 3.1.1: [MQTT-4.7.1-2].
    for (String bad : List.of("sport/tennis#", "sport/tennis/#/ranking", "#/a", "##", "a/#/")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(bad), bad);
      assertTrue(e.getMessage().contains("'#'"), e.getMessage());
    }
  }

  @Test
  void singleLevelWildcardMatchesOneLevel_MQTT_4_7_1_2() {
    assertTrue(matches("sport/tennis/+", "sport/tennis/player1"));
    assertTrue(matches("sport/tennis/+", "sport/tennis/player2"));
    assertFalse(matches("sport/tennis/+", "sport/tennis/player1/ranking"));
    assertFalse(matches("sport/+", "sport"));
    assertTrue(matches("sport/+", "sport/"));
    assertTrue(matches("+/+", "/finance"));
    assertTrue(matches("/+", "/finance"));
    assertFalse(matches("+", "/finance"));
    assertTrue(matches("+/tennis/#", "sport/tennis/x"));
    assertTrue(matches("+/+", "/"), "empty levels are levels");
    assertTrue(matches("+/b", "/b"));
  }

  @Test
  void singleLevelWildcardMustBeAWholeLevel_MQTT_4_7_1_2() {
    // MQTT 3.1.1: [MQTT-4.7.1-3].
    for (String bad : List.of("sport+", "sport/+tennis", "++", "a/b+/c")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(bad), bad);
      assertTrue(e.getMessage().contains("'+'"), e.getMessage());
    }
  }

  @Test
  void wildcardFirstFiltersDoNotMatchDollarTopics_MQTT_4_7_2_1() {
    assertFalse(matches("#", "$SYS/monitor/Clients"));
    assertFalse(matches("+/monitor/Clients", "$SYS/monitor/Clients"));
    assertFalse(matches("+", "$"));
    assertTrue(matches("$SYS/#", "$SYS/monitor/Clients"));
    assertTrue(matches("$SYS/monitor/+", "$SYS/monitor/Clients"));
    assertTrue(matches("$SYS/monitor/Clients", "$SYS/monitor/Clients"));
    assertTrue(matches("+/a", "a$/a"), "only a leading '$' counts");
    assertTrue(matches("+/$SYS", "a/$SYS"));
  }

  @Test
  void namesAndFiltersAreAtLeastOneCharacter_MQTT_4_7_3_1() {
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName(""));
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(""));
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName(null));
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.put(Message.builder(), ""));
  }

  @Test
  void namesAndFiltersHaveNoNullCharacter_MQTT_4_7_3_2() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName("a\u0000b"));
    assertTrue(e.getMessage().contains("U+0000"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter("a/\u0000/#"));
  }

  @Test
  void namesAndFiltersAreAtMost65535Bytes_MQTT_4_7_3_3() {
    String max = "é".repeat(32_767) + "a"; // 65,535 bytes
    MqttTopic.checkName(max);
    assertTrue(matches(max, max));
    String over = max + "a";
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName(over));
    assertTrue(e.getMessage().contains("65536 bytes"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(over));
  }

  @Test
  void namesAreWellFormedUtf8_MQTT_1_5_4_1() {
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName("a\uD800"));
    assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter("\uDC00/#"));
    assertTrue(matches("😀/+", "😀/x"));
  }

  @Test
  void noNormalisation_MQTT_4_7_3_4() {
    assertFalse(matches("a/b", "A/b"));
    assertFalse(matches("a/b", "a/b/"));
    assertFalse(matches("a/b", "a//b"));
    assertFalse(matches("café/+", "cafe\u0301/x"), "NFC and NFD differ");
    assertFalse(matches("a /+", "a/x"));
    assertTrue(matches("a /+", "a /x"));
  }

  @Test
  void topicNamesHaveNoWildcards_MQTT_4_7_0_1() {
    // MQTT 3.1.1: [MQTT-4.7.1-1].
    for (String bad : List.of("a/+", "#", "a/b#", "+x")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> MqttTopic.checkName(bad), bad);
      assertTrue(e.getMessage().contains("wildcard"), e.getMessage());
    }
  }

  // ---- the predicates themselves ----

  @Test
  void predicatesAreOrdinaryPredicates() {
    assertEquals("mqtt.topic = \"sensors/a/temp\"", MqttTopic.filter("sensors/a/temp").toString());
    assertEquals(
        "mqtt.level.0 = \"sensors\" && mqtt.level.2 = \"temp\" && mqtt.levels = 3",
        MqttTopic.filter("sensors/+/temp").toString());
    assertEquals("mqtt.level.0 = \"sensors\"", MqttTopic.filter("sensors/#").toString());
    assertEquals(
        "mqtt.level.0 = \"sensors\" && mqtt.levels >= 2",
        MqttTopic.filter("sensors/+/#").toString());
    assertEquals("mqtt.dollar = false", MqttTopic.filter("#").toString());
    assertEquals("mqtt.dollar = false && mqtt.levels = 1", MqttTopic.filter("+").toString());
    assertEquals(
        "mqtt.dollar = false && mqtt.level.2 = \"temp\" && mqtt.levels = 3",
        MqttTopic.filter("+/+/temp").toString());
    assertEquals("mqtt.level.0 = \"$SYS\"", MqttTopic.filter("$SYS/#").toString());
    assertEquals("mqtt.level.0 = \"\" && mqtt.levels = 2", MqttTopic.filter("/+").toString());
    Message dollar = msg("$SYS/x/");
    assertEquals(Value.of(3), dollar.get(MqttTopic.LEVELS));
    assertEquals(Value.of(""), dollar.get("mqtt.level.2"));
    for (String f : List.of("sensors/+/temp", "#", "+/+/#", "a")) {
      Predicate p = MqttTopic.filter(f);
      assertEquals(p, Predicate.parse(p.toString()));
    }
  }

  @Test
  void filtersBeyondTheLimitsAreRefused() {
    String plus65 = String.join("/", Collections.nCopies(65, "+"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(plus65));
    assertTrue(e.getMessage().contains("65 levels"), e.getMessage());
    MqttTopic.filter(String.join("/", Collections.nCopies(64, "+")) + "/#");
    // '+' first and 63 equal levels: 65 constraints, one more than a conjunction may have.
    String tooMany = "+/" + String.join("/", Collections.nCopies(63, "x"));
    e = assertThrows(IllegalArgumentException.class, () -> MqttTopic.filter(tooMany));
    assertTrue(e.getMessage().contains("constraints"), e.getMessage());
    // Every accepted filter stays within a conjunction's limit.
    Random r = new Random(27);
    for (int k = 0; k < 2000; k++) {
      List<String> levels = new ArrayList<>();
      int n = 1 + r.nextInt(MqttTopic.MAX_LEVELS);
      for (int i = 0; i < n; i++) {
        levels.add(r.nextInt(3) == 0 ? "+" : "x");
      }
      if (r.nextBoolean()) {
        levels.add("#");
      }
      try {
        Predicate p = MqttTopic.filter(String.join("/", levels));
        assertEquals(1, p.size());
        assertTrue(p.get(0).size() <= Limits.MAX_CONSTRAINTS);
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().contains("constraints"), refused.getMessage());
      }
    }
  }
}
