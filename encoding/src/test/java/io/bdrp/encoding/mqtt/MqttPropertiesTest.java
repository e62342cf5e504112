package io.bdrp.encoding.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.mqtt.MqttProperties.UserProperty;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** MQTT 5 user properties as attributes: the typing rule, order and duplicates. */
class MqttPropertiesTest {

  private static UserProperty p(String name, String value) {
    return new UserProperty(name, value);
  }

  private static Message msg(List<UserProperty> props) {
    return MqttProperties.put(Message.builder(), props).build();
  }

  @Test
  void theTypingRule() {
    Map<String, Value> cases = new LinkedHashMap<>();
    cases.put("true", Value.TRUE);
    cases.put("false", Value.FALSE);
    cases.put("TRUE", Value.of("TRUE"));
    cases.put("0", Value.of(0));
    cases.put("-0", Value.of(0));
    cases.put("25", Value.of(25));
    cases.put("-17", Value.of(-17));
    cases.put("9223372036854775807", Value.of(Long.MAX_VALUE));
    cases.put("-9223372036854775808", Value.of(Long.MIN_VALUE));
    cases.put("9223372036854775808", Value.of("9223372036854775808"));
    cases.put("25.5", Value.of(25.5));
    cases.put("1.0", Value.of(1.0));
    cases.put("1e3", Value.of(1000.0));
    cases.put("-2.5E-3", Value.of(-0.0025));
    cases.put("1e400", Value.of("1e400"));
    cases.put("007", Value.of("007"));
    cases.put("+1", Value.of("+1"));
    cases.put(" 1", Value.of(" 1"));
    cases.put("1 ", Value.of("1 "));
    cases.put("1.", Value.of("1."));
    cases.put(".5", Value.of(".5"));
    cases.put("0x10", Value.of("0x10"));
    cases.put("NaN", Value.of("NaN"));
    cases.put("Infinity", Value.of("Infinity"));
    cases.put("", Value.of(""));
    cases.put("-", Value.of("-"));
    cases.put("roomA", Value.of("roomA"));
    cases.forEach((text, typed) -> assertEquals(typed, MqttProperties.typed(text), text));
  }

  @Property(tries = 1000)
  void typedReadsTextBack(@ForAll long l, @ForAll double d, @ForAll boolean b) {
    assertEquals(Value.of(l), MqttProperties.typed(MqttProperties.text(Value.of(l))));
    assertEquals(Value.of(b), MqttProperties.typed(MqttProperties.text(Value.of(b))));
    if (Double.isFinite(d)) {
      assertEquals(Value.of(d), MqttProperties.typed(MqttProperties.text(Value.of(d))));
    }
  }

  @Test
  void duplicatesAreKeptInOrderAndTheFirstValueIsTheAttribute() {
    List<UserProperty> props = List.of(p("b", "x"), p("a", "1"), p("b", "2"), p("a", "1"));
    Message m = msg(props);
    assertEquals(Value.of("x"), m.get("mqtt.user.b"));
    assertEquals(Value.of(1), m.get("mqtt.user.a"));
    assertEquals(
        Value.of("[[\"b\",\"x\"],[\"a\",\"1\"],[\"b\",\"2\"],[\"a\",\"1\"]]"),
        m.get(MqttProperties.USER_LIST));
    assertEquals(props, MqttProperties.of(m));
    assertEquals(3, m.size());
  }

  @Test
  void theDocumentedExample() {
    Message m = msg(List.of(p("site", "a"), p("value", "25.5"), p("site", "b")));
    assertEquals(Value.of("a"), m.get("mqtt.user.site"));
    assertEquals(Value.of(25.5), m.get("mqtt.user.value"));
    assertEquals(
        Value.of("[[\"site\",\"a\"],[\"value\",\"25.5\"],[\"site\",\"b\"]]"),
        m.get(MqttProperties.USER_LIST));
  }

  @Test
  void noPropertiesAddNothing() {
    assertEquals(0, msg(List.of()).size());
    assertEquals(List.of(), MqttProperties.of(msg(List.of())));
  }

  @Test
  void anyTextSurvivesTheWayThrough() {
    List<UserProperty> props =
        List.of(
            p("", ""),
            p("quote\"back\\slash", "line\nbreak\ttab\u0001ctl"),
            p("é😀", "[[\"not\",\"a list\"]]"),
            p("/", "\u007f\u2028"));
    assertEquals(props, MqttProperties.of(msg(props)));
    assertEquals(Value.of(""), msg(props).get("mqtt.user."));
  }

  @Test
  void aNameTooLongForAnAttributeIsOnlyInTheList() {
    String fits = "n".repeat(245);
    String tooLong = "n".repeat(246);
    Message m = msg(List.of(p(fits, "1"), p(tooLong, "2")));
    assertEquals(Value.of(1), m.get("mqtt.user." + fits));
    assertEquals(2, m.size());
    assertEquals(List.of(p(fits, "1"), p(tooLong, "2")), MqttProperties.of(m));
  }

  @Test
  void aListBeyondTheStringLimitIsRefused() {
    List<UserProperty> props = new ArrayList<>();
    for (int i = 0; i < 700; i++) {
      props.add(p("k", "v".repeat(100)));
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> msg(props));
    assertTrue(e.getMessage().contains(MqttProperties.USER_LIST), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> msg(List.of(p("a\uD800", "v"))));
  }

  @Test
  void aBdrpClientsAttributesAreThePropertiesInNameOrder() {
    Message m =
        Message.builder()
            .put("mqtt.user.site", "a")
            .put("mqtt.user.value", 25.5)
            .put("mqtt.user.count", 3)
            .put("mqtt.user.on", true)
            .put("mqtt.userx", "not a property")
            .put("other", 1)
            .build();
    assertEquals(
        List.of(p("count", "3"), p("on", "true"), p("site", "a"), p("value", "25.5")),
        MqttProperties.of(m));
  }

  @Test
  void aListNotInTheEncodingFallsBackToTheAttributes() {
    for (String bad :
        List.of(
            "", "[", "[[\"a\"]]", "[[\"a\",1]]", "[[\"a\",\"b\"]] x", "{}", "[[\"\\q\",\"\"]]")) {
      Message m =
          Message.builder().put(MqttProperties.USER_LIST, bad).put("mqtt.user.a", 1).build();
      assertEquals(List.of(p("a", "1")), MqttProperties.of(m), bad);
    }
    Message spaced =
        Message.builder().put(MqttProperties.USER_LIST, " [ [ \"a\" , \"\\u00e9\" ] ] ").build();
    assertEquals(List.of(p("a", "é")), MqttProperties.of(spaced));
    assertNull(Message.builder().build().get(MqttProperties.USER_LIST));
  }

  @Property(tries = 1000)
  void propertiesComeBackAsTheyWent(@ForAll long seed) {
    Random r = new Random(seed);
    String[] pool = {"", "a", "b", "1", "-2.5", "true", "é", "😀", "\"", "\\", "\n", " x "};
    List<UserProperty> props = new ArrayList<>();
    int n = r.nextInt(8);
    for (int i = 0; i < n; i++) {
      props.add(p(pool[r.nextInt(pool.length)], pool[r.nextInt(pool.length)]));
    }
    Message m = msg(props);
    assertEquals(props, MqttProperties.of(m));
    for (UserProperty up : props) {
      UserProperty first =
          props.stream().filter(x -> x.name().equals(up.name())).findFirst().orElseThrow();
      assertEquals(MqttProperties.typed(first.value()), m.get("mqtt.user." + up.name()));
    }
  }
}
