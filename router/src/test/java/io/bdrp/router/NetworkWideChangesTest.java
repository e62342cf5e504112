package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.topologies.Bundled;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A predicate change or a client leaving takes effect at every router of the network. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NetworkWideChangesTest {
  private static long destinationsCounted(Router r) {
    Matcher m =
        Pattern.compile("(?m)^bdrp_destination_routers_total (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    assertTrue(m.find());
    return Long.parseLong(m.group(1));
  }

  @Test
  void aSubscriptionToTrueReceivesEveryMessageOfTheNetwork() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      // A message for routers 0 and 3 of 4 is broadcast (more than half of them): it needs the
      // trees, not only the routes.
      f.awaitRoutes().awaitTrees();
      BdrpClient all = f.client(0, "all");
      BdrpClient some = f.client(3, "some");
      BdrpClient pub = f.client(2, "P");
      List<String> toAll = new CopyOnWriteArrayList<>();
      List<String> toSome = new CopyOnWriteArrayList<>();
      List<Long> markers = new CopyOnWriteArrayList<>();
      all.subscribe(Predicate.parse("true"), m -> toAll.add(m.toString()))
          .get(10, TimeUnit.SECONDS);
      some.subscribe(Predicate.parse("x = 1"), m -> toSome.add(m.toString()))
          .get(10, TimeUnit.SECONDS);
      some.subscribe(Predicate.parse("exists(marker)"), m -> markers.add(m.get("marker").asLong()))
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      List<Message> sent =
          List.of(
              Message.builder().put("x", 1L).build(),
              Message.builder().put("y", "s").build(),
              Message.builder().put("n", 3.5).put("ok", false).build(),
              Message.builder().put("marker", 1L).build());
      for (Message m : sent) {
        pub.send(m).get(10, TimeUnit.SECONDS);
      }
      Federation.await("the marker at 'some'", () -> markers.size() == 1);
      Federation.await("every message at 'all'", () -> toAll.size() >= sent.size());
      assertEquals(sent.stream().map(Message::toString).toList(), toAll);
      assertEquals(List.of(sent.get(0).toString()), toSome);
    }
  }

  @Test
  void aChangedPredicateIsWhatTheNetworkDeliversTo() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      f.awaitRoutes();
      BdrpClient a = f.client(0, "A");
      BdrpClient pub = f.client(2, "P");
      List<Long> got = new CopyOnWriteArrayList<>();
      List<Long> markers = new CopyOnWriteArrayList<>();
      BdrpClient.Subscription s =
          a.subscribe(Predicate.parse("x = 1"), m -> got.add(m.get("n").asLong()))
              .get(10, TimeUnit.SECONDS);
      a.subscribe(Predicate.parse("exists(marker)"), m -> markers.add(m.get("marker").asLong()))
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      pub.send(Message.builder().put("x", 1L).put("n", 1L).build()).get(10, TimeUnit.SECONDS);
      pub.send(Message.builder().put("marker", 1L).build()).get(10, TimeUnit.SECONDS);
      Federation.await("the first marker", () -> markers.size() == 1);
      assertEquals(List.of(1L), got);

      s.cancel().get(10, TimeUnit.SECONDS);
      a.subscribe(Predicate.parse("x = 2"), m -> got.add(m.get("n").asLong()))
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      pub.send(Message.builder().put("x", 1L).put("n", 2L).build()).get(10, TimeUnit.SECONDS);
      pub.send(Message.builder().put("x", 2L).put("n", 3L).build()).get(10, TimeUnit.SECONDS);
      pub.send(Message.builder().put("marker", 2L).build()).get(10, TimeUnit.SECONDS);
      Federation.await("the second marker", () -> markers.size() == 2);
      assertEquals(List.of(1L, 3L), got, "after the change only x = 2 is delivered");
    }
  }

  @Test
  void aClientThatLeavesIsNoLongerADestination() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      f.awaitRoutes();
      BdrpClient b = f.client(3, "B");
      BdrpClient pub = f.client(1, "P");
      b.subscribe(Predicate.parse("y = 1"), m -> {}).get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      Router ingress = f.routers.get(1);
      assertTrue(!ingress.view().predicateOf(3).isEmpty(), "router 3 advertises B's interest");
      long before = destinationsCounted(ingress);
      pub.sendAcknowledged(Message.builder().put("y", 1L).build()).get(10, TimeUnit.SECONDS);
      assertEquals(before + 1, destinationsCounted(ingress), "router 3 is in D");

      b.close();
      Federation.await(
          "router 3's empty predicate everywhere",
          () ->
              f.routers.stream()
                  .allMatch(r -> r.number() == 3 || r.view().predicateOf(3).isEmpty()));
      long after = destinationsCounted(ingress);
      pub.sendAcknowledged(Message.builder().put("y", 1L).build()).get(10, TimeUnit.SECONDS);
      assertEquals(after, destinationsCounted(ingress), "no router is in D any more");
    }
  }
}
