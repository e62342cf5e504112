package io.bdrp.encoding.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.PredicateSyntaxException;
import io.bdrp.encoding.mqtt.MqttProperties.UserProperty;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** Subscriptions written {@code filter?predicate}: parsing, meaning and limits. */
class MqttSubscriptionTest {

  private static Message msg(String topic, UserProperty... props) {
    Message.Builder b = MqttTopic.put(Message.builder(), topic);
    return MqttProperties.put(b, List.of(props)).build();
  }

  private static UserProperty p(String name, String value) {
    return new UserProperty(name, value);
  }

  @Test
  void aTopicFilterAloneIsItsPredicate() {
    MqttSubscription s = MqttSubscription.parse("sensors/+/temp");
    assertEquals("sensors/+/temp", s.topicFilter());
    assertEquals(Predicate.ALL, s.content());
    assertEquals(MqttTopic.filter("sensors/+/temp"), s.predicate());
    assertEquals("sensors/+/temp", s.text());
  }

  @Test
  void theContentFilterAppliesWithTheTopicFilter() {
    MqttSubscription s =
        MqttSubscription.parse("sensors/+/temp?mqtt.user.value > 25 && mqtt.user.site = \"a\"");
    assertEquals("sensors/+/temp", s.topicFilter());
    assertEquals(
        "mqtt.level.0 = \"sensors\" && mqtt.level.2 = \"temp\" && mqtt.levels = 3"
            + " && mqtt.user.site = \"a\" && mqtt.user.value > 25",
        s.predicate().toString());
    assertTrue(s.matches(msg("sensors/k1/temp", p("value", "26"), p("site", "a"))));
    assertTrue(s.matches(msg("sensors/k1/temp", p("value", "25.5"), p("site", "a"))));
    assertFalse(s.matches(msg("sensors/k1/temp", p("value", "25"), p("site", "a"))));
    assertFalse(s.matches(msg("sensors/k1/temp", p("value", "26"), p("site", "b"))));
    assertFalse(s.matches(msg("sensors/k1/hum", p("value", "26"), p("site", "a"))));
    assertFalse(s.matches(msg("sensors/k1/temp", p("value", "hot"), p("site", "a"))));
    // A bdrp client's message with the same attributes is matched alike.
    Message.Builder b = MqttTopic.put(Message.builder(), "sensors/k2/temp");
    assertTrue(s.matches(b.put("mqtt.user.value", 30.5).put("mqtt.user.site", "a").build()));
  }

  @Test
  void aDisjunctiveContentFilterGivesOneConjunctionEach() {
    MqttSubscription s = MqttSubscription.parse("a/#?x = 1 || (y = 2 || z prefix \"q\") && w = 3");
    assertEquals(3, s.predicate().size());
    for (Conjunction c : s.predicate().conjunctions()) {
      assertTrue(c.toString().startsWith("mqtt.level.0 = \"a\""), c.toString());
    }
    assertFalse(s.matches(Message.builder().put("x", 1).build()));
    assertTrue(s.matches(MqttTopic.put(Message.builder(), "a").put("x", 1).build()));
    assertFalse(s.matches(MqttTopic.put(Message.builder(), "b").put("x", 1).build()));
  }

  @Test
  void theFirstQuestionMarkSeparates() {
    MqttSubscription s = MqttSubscription.parse("a?b = \"?\"");
    assertEquals("a", s.topicFilter());
    assertEquals(Predicate.parse("b = \"?\""), s.content());
    assertEquals(s, MqttSubscription.parse(s.text()));
    MqttSubscription spaced = MqttSubscription.parse("a/b ?  x=1");
    assertEquals("a/b ", spaced.topicFilter(), "the topic filter is not trimmed [MQTT-4.7.3-4]");
  }

  @Test
  void contentFilterErrorsNameTheirColumnInTheWholeText() {
    PredicateSyntaxException e =
        assertThrows(PredicateSyntaxException.class, () -> MqttSubscription.parse("a/b?x >"));
    assertEquals(8, e.column());
    assertEquals(
        "column 8: expected a value after '>' but found the end of input"
            + " (in the content filter after '?')",
        e.getMessage());
    IllegalArgumentException empty =
        assertThrows(IllegalArgumentException.class, () -> MqttSubscription.parse("a/b? "));
    assertTrue(empty.getMessage().contains("nothing after '?'"), empty.getMessage());
    IllegalArgumentException badFilter =
        assertThrows(IllegalArgumentException.class, () -> MqttSubscription.parse("a/b#?x = 1"));
    assertTrue(badFilter.getMessage().contains("'#'"), badFilter.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MqttSubscription.parse("?x = 1"));
  }

  @Test
  void aContradictionSubscribesToNothing() {
    assertEquals(Predicate.NONE, MqttSubscription.parse("a/+?mqtt.levels = 3").predicate());
    assertEquals(Predicate.NONE, MqttSubscription.parse("a/b?false").predicate());
    assertEquals(MqttTopic.filter("a/b"), MqttSubscription.parse("a/b?true").predicate());
  }

  @Test
  void theConstructorChecksThePredicate() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new MqttSubscription("a/b", Predicate.ALL, Predicate.ALL));
    MqttSubscription s = MqttSubscription.of("a/+", Predicate.parse("x = 1"));
    assertEquals(s, new MqttSubscription("a/+", s.content(), s.predicate()));
  }

  @Test
  void aCombinationBeyondTheLimitsIsRefused() {
    String deep = String.join("/", Collections.nCopies(40, "x")) + "/+";
    List<String> terms = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      terms.add("c" + i + " = " + i);
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> MqttSubscription.parse(deep + "?" + String.join(" && ", terms)));
    assertTrue(e.getMessage().contains("constraints a conjunction may have"), e.getMessage());
  }

  private static final String[] FILTERS = {
    "#", "+", "a/+", "a/#", "+/b/#", "a", "$SYS/#", "+/+", "a/b", "/+"
  };
  private static final String[] TOPICS = {"a", "a/b", "a/", "/b", "$SYS/b", "b/b/c", "a/b/c"};
  private static final String[] CONTENTS = {
    "true",
    "false",
    "mqtt.user.x > 1",
    "mqtt.user.x = 2 || mqtt.user.y = \"a\"",
    "(mqtt.user.x < 2 || mqtt.user.y prefix \"b\") && mqtt.levels >= 2",
    "mqtt.level.0 = \"a\" || exists(mqtt.user.y)",
    "mqtt.levels = 1 || mqtt.dollar = true",
  };

  @Property(tries = 1000)
  void aSubscriptionMatchesItsTopicFilterAndItsContentFilter(@ForAll long seed) {
    Random r = new Random(seed);
    String text = FILTERS[r.nextInt(FILTERS.length)];
    Predicate content = Predicate.parse(CONTENTS[r.nextInt(CONTENTS.length)]);
    MqttSubscription s =
        content.isAll()
            ? MqttSubscription.parse(text)
            : MqttSubscription.parse(text + "?" + content);
    for (Conjunction c : s.predicate().conjunctions()) {
      assertTrue(c.size() <= Limits.MAX_CONSTRAINTS);
    }
    assertTrue(s.predicate().size() <= Limits.MAX_CONJUNCTIONS);
    for (int k = 0; k < 20; k++) {
      String topic = TOPICS[r.nextInt(TOPICS.length)];
      List<UserProperty> props = new ArrayList<>();
      if (r.nextBoolean()) {
        props.add(p("x", Integer.toString(r.nextInt(4))));
      }
      if (r.nextBoolean()) {
        props.add(p("y", r.nextBoolean() ? "a" : "bc"));
      }
      Message m = msg(topic, props.toArray(new UserProperty[0]));
      assertEquals(
          MqttTopicTest.reference(s.topicFilter(), topic) && content.matches(m),
          s.matches(m),
          () -> s + " on " + m);
    }
  }

  @Property(tries = 100)
  void everyAcceptedSubscriptionStaysWithinTheLimits(@ForAll long seed) {
    Random r = new Random(seed);
    List<String> levels = new ArrayList<>();
    int n = 1 + r.nextInt(MqttTopic.MAX_LEVELS);
    for (int i = 0; i < n; i++) {
      levels.add(r.nextInt(3) == 0 ? "+" : "l" + r.nextInt(3));
    }
    List<String> conj = new ArrayList<>();
    int width = 1 + r.nextInt(20);
    for (int i = 0; i < width; i++) {
      conj.add("(a" + i + " = 1 || b" + i + " = 2)");
    }
    String text =
        String.join("/", levels) + "?" + String.join(" && ", conj.subList(0, Math.min(width, 10)));
    try {
      MqttSubscription s = MqttSubscription.parse(text);
      assertTrue(s.predicate().size() <= Limits.MAX_CONJUNCTIONS);
      for (Conjunction c : s.predicate().conjunctions()) {
        assertTrue(c.size() <= Limits.MAX_CONSTRAINTS, c::toString);
      }
    } catch (IllegalArgumentException refused) {
      assertTrue(refused.getMessage().contains("constraints"), refused.getMessage());
    }
  }
}
