package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.routing.Reliable;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Node;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ReliableFrames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The per-link counters of DATA bytes and acknowledgement bytes ({@code
 * bdrp_link_data_bytes_out_total{neighbour,type}}, {@code
 * bdrp_link_reliable_ack_bytes_out_total{neighbour}}) on a line of three routers on loopback, a
 * publisher at router 0 and a subscriber at router 2: every copy counted at its frame's exact size
 * on each hop, and every acknowledgement at 26 bytes on each hop back to the ingress.
 */
class LinkFrameBytesTest {
  private static final int BEST_EFFORT = 40;
  private static final int RELIABLE = 300;

  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  private static long dataBytes(Router r, int neighbour, String type) {
    return metric(
        r, "bdrp_link_data_bytes_out_total{neighbour=\"" + neighbour + "\",type=\"" + type + "\"}");
  }

  private static long ackBytes(Router r, int neighbour) {
    return metric(r, "bdrp_link_reliable_ack_bytes_out_total{neighbour=\"" + neighbour + "\"}");
  }

  private static Message message(long n) {
    // The same encoded length for every n: a fixed-width body and a long attribute.
    return Message.builder().put("x", 1L).put("n", n).body(new byte[100]).build();
  }

  @Test
  @Timeout(120)
  void dataAndAcknowledgementBytesAreCountedFrameByFrameOnEveryHop() throws Exception {
    Topology line =
        Topology.of(
            List.of("Model (0 - Test): line"),
            List.of(node(0), node(1), node(2)),
            List.of(edge(0, 0, 1), edge(1, 1, 2)));
    try (Federation f = new Federation(line)) {
      f.awaitRoutes();
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      f.client(2, "sub").subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      BdrpClient pub = f.client(0, "pub");
      Router r0 = f.routers.get(0);
      Router r1 = f.routers.get(1);
      Router r2 = f.routers.get(2);
      int messageBytes = MessageCodec.encodedLength(message(0));
      long[] d = {1L << 2}; // every copy's D: router 2

      for (int i = 0; i < BEST_EFFORT; i++) {
        pub.send(message(i)).get(10, TimeUnit.SECONDS);
      }
      Federation.await("every best-effort message at router 2", () -> inbox.size() >= BEST_EFFORT);
      long dataFrame = DataHeader.frameLength(DataHeader.layoutOf(d), messageBytes);
      assertEquals(BEST_EFFORT * dataFrame, dataBytes(r0, 1, "data"), "DATA 0 -> 1");
      assertEquals(BEST_EFFORT * dataFrame, dataBytes(r1, 2, "data"), "DATA 1 -> 2");
      assertEquals(0, dataBytes(r1, 0, "data"), "nothing published towards router 0");
      assertEquals(0, dataBytes(r2, 1, "data"));
      assertEquals(0, ackBytes(r2, 1), "best effort is not acknowledged");

      List<CompletableFuture<Void>> confirmed = new ArrayList<>();
      for (int i = 0; i < RELIABLE; i++) {
        confirmed.add(pub.sendReliable(message(BEST_EFFORT + i)));
      }
      CompletableFuture.allOf(confirmed.toArray(CompletableFuture[]::new))
          .get(60, TimeUnit.SECONDS);
      // Every copy carries one entry (router 2's); copies the ingress sent again count as well.
      Reliable.Header oneEntry =
          new Reliable.Header(0, 0, 0, new int[] {2}, new long[1], new long[1]);
      long reliableFrame = ReliableFrames.frameLength(d, oneEntry, messageBytes);
      long copies =
          RELIABLE + metric(r0, "bdrp_reliable_events_total{event=\"resent\"}"); // resent: 0 idle
      assertEquals(copies * reliableFrame, dataBytes(r0, 1, "reliable_data"), "copies 0 -> 1");
      assertEquals(
          dataBytes(r0, 1, "reliable_data"),
          dataBytes(r1, 2, "reliable_data"),
          "router 1 passes on every copy it receives");
      assertEquals(BEST_EFFORT * dataFrame, dataBytes(r0, 1, "data"), "no best-effort DATA since");

      // Router 2 acknowledges to router 1, which passes each acknowledgement on to router 0;
      // every one is confirmed, so every acknowledgement has arrived there.
      long acks = ackBytes(r2, 1);
      assertTrue(acks > 0, "router 2 acknowledged");
      assertEquals(0, acks % ReliableFrames.ACK_BYTES, "whole acknowledgement frames: " + acks);
      assertTrue(
          acks / ReliableFrames.ACK_BYTES <= copies,
          "an acknowledgement covers at least one message: " + acks);
      assertEquals(acks, ackBytes(r1, 0), "router 1 passes them on, frame for frame");
      assertEquals(0, ackBytes(r0, 1), "the ingress acknowledges nothing");
      assertEquals(0, ackBytes(r1, 2), "nor does the transit router towards router 2");
    }
  }

  private static Node node(int id) {
    return new Node(id, id, 0, 0, 0, -1, "RT_NODE");
  }

  private static Edge edge(int id, int from, int to) {
    return new Edge(id, from, to, 1, 1, 1, -1, -1, "E_RT", Edge.Direction.UNDIRECTED);
  }
}
