package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.routing.DataNet.Payload;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Test;

/**
 * The resend rule of {@link Reliable}: a timeout that follows the measured acknowledgement delay
 * (RFC 6298, per destination router), Karn's rule, the doubling on timeout, and no resend of a copy
 * still queued on the live session to its next hop.
 *
 * <p>Three routers in a line, 0 - 1 - 2, whose routes and predicates converge in a {@link DataNet};
 * a reliable service over each, on a clock the test moves in 5 ms steps. Copies and
 * acknowledgements travel through one event queue, each link delaying them by {@link #hopDelay}, or
 * holding them on the link 0 - 1 while it is blocked ({@link #blocked}), as a full output queue
 * would, and telling router 0's service so through {@link Reliable.Output#drained}.
 */
class ReliableResendTest {
  private static final long START = 1_000_000;
  private static final long STEP = 5;

  private record Event(long at, long order, Runnable action) {}

  private final DataNet net;
  private final List<Reliable<Payload>> services = new ArrayList<>();
  private final PriorityQueue<Event> events =
      new PriorityQueue<>(
          (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.order, b.order));
  private final List<Long> sendTimes01 = new ArrayList<>(); // copies router 0 sent to 1
  private final List<Event> heldOn01 = new ArrayList<>(); // copies waiting on a blocked 0 - 1
  private final List<Long> confirmed = new ArrayList<>();
  private long now = START;
  private long order;
  private long hopDelay;
  private boolean lost; // copies on 0 - 1 vanish
  private boolean blocked; // copies on 0 - 1 wait in router 0's output queue
  private long written01; // router 0's output position towards 1, 100 bytes a copy
  private long drained01; // where the queue stopped while blocked

  ReliableResendTest() {
    net = DataNet.line(3, DataNet.testConfig(64).build());
    net.host(2, "a = 1");
    net.converge();
    for (int r = 0; r < 3; r++) {
      services.add(service(r));
    }
  }

  private Reliable<Payload> service(int self) {
    Reliable.Output<Payload> out =
        new Reliable.Output<>() {
          @Override
          public boolean send(
              int neighbour,
              int hopLimit,
              int source,
              long messageId,
              long[] d,
              Reliable.Header h,
              Payload message) {
            DataNet.Header p = new DataNet.Header(hopLimit, source, messageId, d);
            Runnable arrive = () -> services.get(neighbour).receive(self, p, h, message);
            if (self == 0 && neighbour == 1) {
              sendTimes01.add(now);
              written01 += 100;
              if (lost) {
                return true;
              }
              if (blocked) {
                heldOn01.add(new Event(0, order++, arrive));
                return true;
              }
            }
            events.add(new Event(now + hopDelay, order++, arrive));
            return true;
          }

          @Override
          public boolean sendAck(int neighbour, Reliable.Ack ack) {
            events.add(
                new Event(
                    now + hopDelay, order++, () -> services.get(neighbour).receiveAck(self, ack)));
            return true;
          }

          @Override
          public long written(int neighbour) {
            return self == 0 && neighbour == 1 ? written01 : -1;
          }

          @Override
          public long drained(int neighbour) {
            return self == 0 && neighbour == 1 ? (blocked ? drained01 : written01) : -1;
          }

          @Override
          public boolean deliver(int h, long messageId, Payload message) {
            return true;
          }

          @Override
          public Message decode(Payload message) {
            return message.message();
          }

          @Override
          public Payload keep(Payload message) {
            return message;
          }

          @Override
          public void release(Payload message) {}

          @Override
          public int size(Payload message) {
            return 100;
          }

          @Override
          public void confirmed(long messageId, long publisher, long publisherSeq) {
            confirmed.add(publisherSeq);
          }

          @Override
          public void failed(long messageId, long publisher, long publisherSeq, long[] u) {
            throw new AssertionError("gave up on message " + publisherSeq);
          }
        };
    return new Reliable<>(
        net.plane(self), net.node(self), 1, () -> now, Reliable.Config.DEFAULT, out);
  }

  private Reliable<Payload> ingress() {
    return services.get(0);
  }

  private void publish(long seq) {
    Message m = Message.builder().put("a", 1L).build();
    assertTrue(ingress().hasRoom(100));
    ingress().publish(m, Payload.of(m), 7, seq);
  }

  /** Moves the clock by {@code ms}, running what is due on the way. */
  private void run(long ms) {
    long until = now + ms;
    while (now < until) {
      now += STEP;
      while (!events.isEmpty() && events.peek().at <= now) {
        events.poll().action.run();
      }
      for (Reliable<Payload> s : services) {
        if (s.nextDeadlineMillis() <= now) {
          s.tick();
        }
      }
    }
  }

  /** The copies router 0 sent to 1, as times since {@code t0}. */
  private List<Long> sends01Since(long t0) {
    return sendTimes01.stream().map(t -> t - t0).toList();
  }

  @Test
  void aSlowAcknowledgementPathRaisesTheTimeoutAndStopsTheResends() {
    hopDelay = 250; // 1 s and the destination's 25 ms from a copy's send to its acknowledgement
    long seq = 0;
    for (int i = 0; i < 30; i++) { // 3 s at 10 messages a second: the estimate settles
      publish(++seq);
      run(100);
    }
    long resentWhileLearning = ingress().count(Reliable.Count.RESENT);
    assertTrue(resentWhileLearning > 0, "the first messages outlive the initial 200 ms");
    long rto = ingress().resendTimeoutMillis(2);
    assertTrue(rto > 1_025 && rto < 3 * 1_025, "timeout " + rto + " ms for a delay of 1,025");
    for (int i = 0; i < 50; i++) { // acknowledgements only late, not lost: nothing is resent
      publish(++seq);
      run(100);
    }
    run(3_000);
    assertEquals(resentWhileLearning, ingress().count(Reliable.Count.RESENT));
    assertEquals(seq, confirmed.size());
    assertEquals(0, ingress().retainedMessages());
    assertEquals(0, services.get(2).count(Reliable.Count.PUBLISHER_DUPLICATE));
    assertEquals(seq, services.get(2).delivered());
  }

  @Test
  void noSampleFromAResentMessageKarn() {
    hopDelay = 250;
    publish(1);
    run(1_200); // sent at 0, again at 200 and 600; acknowledged at about 1,025
    assertEquals(List.of(0L, 200L, 600L), sends01Since(START));
    assertEquals(List.of(1L), confirmed);
    // Two timeouts doubled the initial 200 ms twice; the acknowledgement of a resent message is no
    // sample (as one, 1,025 ms would have set 1,025 + 4 × 512).
    assertEquals(800, ingress().resendTimeoutMillis(2));
    long t = now;
    publish(2);
    run(1_200); // sent once, acknowledged within its 800 ms? no: 1,025 ms, so resent at 800
    assertEquals(List.of(0L, 800L), sends01Since(t).subList(3, 5));
    hopDelay = 50; // 225 ms: acknowledged before its timeout, a sample
    publish(3);
    run(1_000);
    long sample = 4 * 50 + 25;
    assertEquals(3 * sample, ingress().resendTimeoutMillis(2)); // SRTT + 4 × SRTT/2
    assertEquals(List.of(1L, 2L, 3L), confirmed);
  }

  @Test
  void theTimeoutDoublesPerAttempt() {
    hopDelay = 10;
    lost = true;
    publish(1);
    run(7_000);
    assertEquals(List.of(0L, 200L, 600L, 1_400L, 3_000L, 6_200L), sends01Since(START));
    lost = false;
    run(13_000);
    assertEquals(List.of(1L), confirmed);
    assertEquals(6, ingress().count(Reliable.Count.RESENT));
  }

  @Test
  void aCopyStillQueuedOnTheLiveSessionIsNotSentAgain() {
    hopDelay = 10;
    blocked = true; // the output queue to router 1 does not move for 3 s
    for (long seq = 1; seq <= 20; seq++) {
      publish(seq);
      run(50);
    }
    run(2_000);
    assertEquals(0, ingress().count(Reliable.Count.RESENT));
    assertTrue(ingress().count(Reliable.Count.QUEUED) > 0);
    assertEquals(20, sendTimes01.size(), "each copy once");
    blocked = false; // the queue drains: the copies go, in order
    for (Event e : heldOn01) {
      events.add(new Event(now + hopDelay, order++, e.action()));
    }
    heldOn01.clear();
    run(1_000);
    assertEquals(20, confirmed.size());
    assertEquals(0, ingress().count(Reliable.Count.RESENT));
    assertEquals(20, sendTimes01.size());
    assertEquals(0, services.get(2).count(Reliable.Count.DUPLICATE));
  }

  @Test
  void aCopyWhoseQueueDrainedIsSentAgain() {
    hopDelay = 10;
    lost = true; // the copy leaves the queue and is lost beyond it
    publish(1);
    run(300);
    assertEquals(List.of(0L, 200L), sends01Since(START));
    assertEquals(0, ingress().count(Reliable.Count.QUEUED));
  }
}
