package io.bdrp.encoding.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.NotEmpty;
import org.junit.jupiter.api.Test;

/** Shared subscriptions written {@code $share/ShareName/filter}: the share name and the rest. */
class MqttSharedTest {

  @Test
  void theShareNameIsUpToTheNextSlashAndTheRestIsASubscription() {
    MqttShared s = MqttShared.parse("$share/workers/jobs/+/x?mqtt.user.size > 10");
    assertEquals("workers", s.shareName());
    assertEquals(MqttSubscription.parse("jobs/+/x?mqtt.user.size > 10"), s.subscription());
    assertEquals("$share/workers/jobs/+/x?mqtt.user.size > 10", s.text());
    assertEquals("#", MqttShared.parse("$share/g/#").subscription().topicFilter());
    assertEquals("/a", MqttShared.parse("$share/g//a").subscription().topicFilter());
  }

  @Test
  void onlyTextStartingWithTheSharePrefixIsShared() {
    assertTrue(MqttShared.isShared("$share/g/t"));
    assertFalse(MqttShared.isShared("$share"));
    assertFalse(MqttShared.isShared("$SHARE/g/t"));
    assertFalse(MqttShared.isShared("a/$share/g/t"));
    assertFalse(MqttShared.isShared(null));
  }

  @Test
  void invalidShareNamesAndMissingFiltersAreRefused() {
    for (String bad :
        new String[] {
          "$share//t", // MQTT-4.8.2-1: empty
          "$share/a+b/t", // MQTT-4.8.2-2
          "$share/a#/t",
          "$share/+/t",
          "$share/g", // no filter
          "$share/g/", // empty filter
          "$share/g/a#", // invalid filter
          "$share/g/a?", // empty content filter
          "a/b",
        }) {
      assertThrows(IllegalArgumentException.class, () -> MqttShared.parse(bad), bad);
    }
  }

  @Property(tries = 500)
  void parseReadsBackWhatTextWrites(
      @ForAll @AlphaChars @NotEmpty String name, @ForAll @AlphaChars @NotEmpty String level) {
    MqttShared s = new MqttShared(name, MqttSubscription.parse(level + "/+/#"));
    assertEquals(s, MqttShared.parse(s.text()));
    assertEquals(MqttTopic.filter(level + "/+/#"), s.subscription().predicate());
  }
}
