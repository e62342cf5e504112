package io.bdrp.testbed.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bad clients' frame reader and their predicate. */
class RawClientsTest {
  @Test
  void framesSplitAcrossReadsAtAnyByteAreReadWhole() {
    Message m = Message.builder().put("bdrp_msg", 7L).body(new byte[300]).build();
    byte[] all =
        RawClients.bytes(
            new ClientFrame.Ok(1), new ClientFrame.Deliver(m), new ClientFrame.Pong(9));
    for (int cut = 0; cut <= all.length; cut++) {
      RawClients.FrameReader r = new RawClients.FrameReader();
      List<ClientFrame> got = new ArrayList<>(r.add(all, 0, cut));
      got.addAll(r.add(all, cut, all.length - cut));
      assertEquals(
          List.of(new ClientFrame.Ok(1), new ClientFrame.Deliver(m), new ClientFrame.Pong(9)),
          got,
          "cut at " + cut);
    }
  }

  @Test
  void theBadClientsPredicateSelectsWorkloadAndFloodMessagesOnly() {
    var p = RawClients.everything("bdrp_msg");
    assertTrue(p.matches(Message.builder().put("bdrp_msg", 1L).put("s1", "x").build()));
    assertTrue(p.matches(Message.builder().put(RawClients.FLOOD, 1L).build()));
    assertFalse(p.matches(Message.builder().put("s1", "x").build()));
  }
}
