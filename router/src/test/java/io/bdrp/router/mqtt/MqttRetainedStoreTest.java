package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttRetained;
import io.bdrp.encoding.mqtt.MqttTopic;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The store of retained messages: one per topic, the greatest (version, origin) kept whatever the
 * order copies arrive in, deletions kept against older copies, its bounds, expiry, and what is
 * handed over to a router that comes back.
 */
class MqttRetainedStoreTest {
  private static Message message(String topic, String body) {
    return MqttTopic.put(Message.builder(), topic).body(body.getBytes()).build();
  }

  private static List<String> all(MqttRetainedStore s, long now) {
    List<String> out = new ArrayList<>();
    s.forEachMatching(
        Predicate.ALL, null, now, m -> out.add(MqttTopic.of(m) + "=" + new String(m.body())));
    Collections.sort(out);
    return out;
  }

  @Test
  void everyOrderOfArrivalEndsWithTheSameMessagePerTopic() {
    // Retained messages of two topics from three routers; each store takes them in its own order.
    List<Message> copies = new ArrayList<>();
    for (int origin = 0; origin < 3; origin++) {
      MqttRetainedStore at = new MqttRetainedStore(origin, 0);
      for (int i = 0; i < 4; i++) {
        long now = 1_000 + i; // the same clock at each router: ties broken by origin
        copies.add(at.stamp(message("t/" + (i % 2), origin + "." + i), now));
      }
    }
    Random random = new Random(7);
    List<String> first = null;
    for (int run = 0; run < 20; run++) {
      Collections.shuffle(copies, random);
      MqttRetainedStore s = new MqttRetainedStore(9, 0);
      copies.forEach(m -> s.offer(m, 2_000));
      List<String> got = all(s, 2_000);
      if (first == null) {
        first = got;
      }
      assertEquals(first, got);
    }
    assertEquals(
        List.of("t/0=2.2", "t/1=2.3"), first, "the latest version, then the greatest origin");
  }

  @Test
  void aDeletionHoldsAgainstAnOlderCopyUntilItIsPurged() {
    MqttRetainedStore s = new MqttRetainedStore(0, 0);
    Message old = s.stamp(message("a", "x"), 1_000);
    Message deletion = s.stamp(message("a", ""), 1_001);
    assertEquals(MqttRetainedStore.Offer.STORED, s.offer(old, 1_000));
    assertEquals(MqttRetainedStore.Offer.DELETED, s.offer(deletion, 1_001));
    assertEquals(MqttRetainedStore.Offer.STALE, s.offer(old, 1_002), "an older copy comes back");
    assertEquals(List.of(), all(s, 1_002));
    assertEquals(1, s.entries());
    assertEquals(0, s.messages());
    s.purge(1_001 + MqttRetainedStore.DELETION_KEEP_MS + 1);
    assertEquals(0, s.entries());
  }

  @Test
  void versionsKeepIncreasingWithinAMillisecondAndAfterARestart() {
    MqttRetainedStore s = new MqttRetainedStore(4, 0);
    long a = MqttRetained.version(s.stamp(message("a", "1"), 5_000));
    long b = MqttRetained.version(s.stamp(message("a", "2"), 5_000));
    assertTrue(b > a);
    // The same router, restarted with its clock behind: the epoch floor keeps it ahead.
    MqttRetainedStore restarted = new MqttRetainedStore(4, 9_000);
    long c = MqttRetained.version(restarted.stamp(message("a", "3"), 4_000));
    assertTrue(c >= 9_000);
    // And a copy of its own from before the restart moves it past that copy.
    restarted.offer(MqttRetained.stamp(message("b", "4"), 20_000, 4), 4_000);
    assertTrue(MqttRetained.version(restarted.stamp(message("c", "5"), 4_000)) > 20_000);
  }

  @Test
  void aNewTopicBeyondTheBoundIsRefusedAtItsIngressAndDroppedElsewhere() {
    MqttRetainedStore s = new MqttRetainedStore(0, 0);
    for (int i = 0; i < MqttRetainedStore.MAX_ENTRIES; i++) {
      assertEquals(MqttRetainedStore.Offer.STORED, s.offer(s.stamp(message("t/" + i, "x"), 1), 1));
    }
    assertNull(s.stamp(message("t/new", "x"), 1), "a new topic is refused");
    assertNotNull(s.stamp(message("t/0", "y"), 1), "a held topic may be replaced");
    Message fromElsewhere = MqttRetained.stamp(message("t/other", "z"), 5, 3);
    assertEquals(MqttRetainedStore.Offer.FULL, s.offer(fromElsewhere, 1));
  }

  @Test
  void expiredMessagesAreNotSentAndAreRemoved() {
    MqttRetainedStore s = new MqttRetainedStore(0, 0);
    Message m =
        MqttTopic.put(Message.builder(), "e")
            .put(MqttPublish.EXPIRES_AT, 10_000L)
            .body(new byte[] {1})
            .build();
    s.offer(s.stamp(m, 1_000), 1_000);
    assertEquals(1, all(s, 9_999).size());
    assertEquals(0, all(s, 10_000).size(), "MQTT-3.3.2-5");
    assertEquals(0, s.entries());
  }

  @Test
  void aComebackIsHandedWhatEnteredHereAndWhatOnlyAnUnreachableOriginHad() {
    MqttRetainedStore s = new MqttRetainedStore(1, 0);
    s.offer(s.stamp(message("mine", "1"), 10), 10);
    s.offer(MqttRetained.stamp(message("reachable", "2"), 10, 2), 10);
    s.offer(MqttRetained.stamp(message("lost", "3"), 10, 3), 10);
    List<String> handed = new ArrayList<>();
    for (Message m : s.toHandOver(r -> r == 2)) {
      handed.add(MqttTopic.of(m));
    }
    Collections.sort(handed);
    assertEquals(List.of("lost", "mine"), handed);
  }

  @Test
  void aWrappedMessageIsTakenOnlyByTheRouterItIsFor() {
    MqttRetainedStore s = new MqttRetainedStore(1, 0);
    Message m = s.stamp(message("w", "1"), 10);
    Message wrapped = MqttRetained.wrap(m, 5);
    assertEquals(m, MqttRetained.unwrap(wrapped, 5));
    assertNull(MqttRetained.unwrap(wrapped, 4));
    assertNull(MqttRetained.unwrap(m, 5), "not wrapped");
    assertTrue(MqttRetained.reserved(wrapped) && MqttRetained.reserved(m));
  }
}
