package io.bdrp.testbed.chaos;

/**
 * The oracle's account of one fault: every message sent from the start of its warm-up to the end of
 * its recovery, each expected delivery classified as delivered or missing, and each missing one as
 * an <i>expected loss</i> (a fault that takes the receiver or the path away entirely) or a
 * <i>loss</i> (one the network should have avoided).
 *
 * <p>Expected losses:
 *
 * <ul>
 *   <li>kill-restart: messages sent by or to the killed router's hosts from the kill until one
 *       hello interval after each host's session was open again (on the restarted router): a router
 *       advertises its hosts' predicates at most once per hello interval, so a host's predicate is
 *       in force in the network within one hello interval of its session opening;
 *   <li>partition: messages sent from one half to the other while the cut was in place.
 * </ul>
 *
 * For reliable messages only the first half of the first case is expected: messages for the killed
 * router's hosts (sent from {@link #IN_FLIGHT_NANOS} before the kill) until their predicates are in
 * force again. The publisher resends what its killed ingress did not confirm, and the ingress holds
 * what a partition keeps from its destinations until the partition heals.
 *
 * <p>Everything else missing is loss, also a client's session that broke in another fault: that is
 * the network's doing. A loss counts as inside the target window if its message was sent from the
 * fault's injection (less {@link #IN_FLIGHT_NANOS}: messages in flight when it struck) until one
 * dead interval and one hello interval later, or as long from the heal: a router notices a silent
 * neighbour within a dead interval, and a link that carries again as soon (a broken session is
 * redialled every few seconds); its routes and advertisements react within a hello interval after
 * that. The target is no loss outside it.
 *
 * <p>Delivery is <i>exact again</i> from the send time of the first message after the last message
 * (sent after the injection) that was not delivered exactly: a missing delivery of either kind, a
 * duplicate, or a delivery to a client whose predicate does not match.
 */
public final class Accounting {
  private Accounting() {}

  /**
   * One fault's timing, nanoseconds from the ledger's origin.
   *
   * @param start the warm-up's start
   * @param inject when the fault was made
   * @param heal when it was undone (for kill-restart: when the new router served clients)
   * @param end the recovery's end
   * @param killed the killed router, or -1
   * @param side for a partition, each router's half; otherwise null
   * @param reliable whether the messages were published with the reliable service, which changes
   *     what is an expected loss (see {@link #expectedLoss})
   */
  public record Window(
      Fault fault,
      long start,
      long inject,
      long heal,
      long end,
      int killed,
      boolean[] side,
      boolean reliable) {
    /** A window of best-effort messages. */
    public Window(
        Fault fault, long start, long inject, long heal, long end, int killed, boolean[] side) {
      this(fault, start, inject, heal, end, killed, side, false);
    }
  }

  /**
   * The figures.
   *
   * @param messages messages sent in the window (sends that failed included)
   * @param failedSends messages whose send failed (no session)
   * @param expected deliveries the oracle expects
   * @param delivered expected deliveries that arrived
   * @param missing expected deliveries that did not
   * @param expectedLoss of the missing, those the fault made unavoidable
   * @param loss missing less expected loss
   * @param lossOutsideWindow losses of messages sent before the injection or more than a dead
   *     interval after it
   * @param missingFrom first send time of a missing delivery's message, seconds from the injection
   *     (NaN: none)
   * @param missingTo last such send time
   * @param lossFrom as {@code missingFrom} for losses only
   * @param lossTo as {@code missingTo} for losses only
   * @param duplicates deliveries beyond a client's first of a message
   * @param spurious deliveries to clients whose predicate does not match, and of messages not in
   *     the ledger received in the window
   * @param exactAfterHeal seconds from the heal until delivery was exact again (negative: it was
   *     before the heal; NaN: not by the end of the recovery)
   * @param exactAfterInject the same from the injection
   * @param exactThroughout whether every message sent after the injection was delivered exactly
   * @param late messages whose last delivery arrived more than a dead interval after they were sent
   * @param maxDelay the longest time from a message's send to its last delivery, seconds (NaN: none
   *     delivered)
   * @param outOfOrder first deliveries that came after a later message of the same sender
   * @param unconfirmed reliable messages whose publisher was told neither that they were confirmed
   *     nor that routers were not reached (0 for best effort)
   * @param unreached reliable messages whose publisher was told that routers were not reached
   * @param maxConfirmDelay the longest time from a reliable message's send to its confirmation,
   *     seconds (NaN: none confirmed, or best effort)
   * @param perSecond per second from the window's start: input, expected, delivered, missing,
   *     expected loss, duplicates, spurious
   */
  public record Result(
      int messages,
      long failedSends,
      long expected,
      long delivered,
      long missing,
      long expectedLoss,
      long loss,
      long lossOutsideWindow,
      double missingFrom,
      double missingTo,
      double lossFrom,
      double lossTo,
      long duplicates,
      long spurious,
      double exactAfterHeal,
      double exactAfterInject,
      boolean exactThroughout,
      long late,
      double maxDelay,
      long outOfOrder,
      long unconfirmed,
      long unreached,
      double maxConfirmDelay,
      long[][] perSecond) {
    /** Series names of {@link #perSecond}, in order. */
    public static final String[] SERIES = {
      "input_msgs",
      "expected_deliveries",
      "delivered",
      "missing",
      "expected_loss",
      "duplicates",
      "spurious"
    };

    /** Whether delivery was exact again by the end of the recovery. */
    public boolean exactAgain() {
      return !Double.isNaN(exactAfterHeal);
    }
  }

  /** The first message sent at or after {@code t}. */
  static int firstAt(Ledger l, long t) {
    int lo = 0;
    int hi = l.count();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (l.sentAt(mid) < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * Accounts for window {@code w}: {@code routerOf[c]} is client c's router, {@code dead} the
   * routers' dead interval in nanoseconds.
   */
  public static Result account(
      Ledger l, int[] routerOf, Sessions sessions, Window w, long deadNanos, long helloNanos) {
    int first = firstAt(l, w.start());
    int last = firstAt(l, w.end());
    int seconds = (int) Math.max(1, (w.end() - w.start() + 999_999_999L) / 1_000_000_000L);
    long[][] ps = new long[Result.SERIES.length][seconds];
    long failedSends = 0;
    long expected = 0;
    long delivered = 0;
    long missing = 0;
    long expectedLoss = 0;
    long lossOutside = 0;
    long duplicates = 0;
    long spurious = 0;
    long missingFrom = Long.MAX_VALUE;
    long missingTo = Long.MIN_VALUE;
    long lossFrom = Long.MAX_VALUE;
    long lossTo = Long.MIN_VALUE;
    int lastBad = -1;
    long late = 0;
    long maxDelay = -1;
    long outOfOrder = 0;
    long unconfirmed = 0;
    long unreached = 0;
    long maxConfirm = -1;
    int words = l.words();
    for (int i = first; i < last; i++) {
      long t = l.sentAt(i);
      int sec = (int) Math.min(seconds - 1, (t - w.start()) / 1_000_000_000L);
      int from = l.from(i);
      boolean failed = l.isFailed(i);
      failedSends += failed ? 1 : 0;
      ps[0][sec]++;
      boolean bad = false;
      for (int k = 0; k < words; k++) {
        long exp = l.expected(i, k);
        long got = l.got(i, k);
        long miss = exp & ~got;
        long spur = got & ~exp;
        int e = Long.bitCount(exp);
        int d = Long.bitCount(exp & got);
        expected += e;
        delivered += d;
        ps[1][sec] += e;
        ps[2][sec] += d;
        spurious += Long.bitCount(spur);
        ps[6][sec] += Long.bitCount(spur);
        bad |= miss != 0 || spur != 0;
        while (miss != 0) {
          int c = k * 64 + Long.numberOfTrailingZeros(miss);
          miss &= miss - 1;
          missing++;
          ps[3][sec]++;
          missingFrom = Math.min(missingFrom, t);
          missingTo = Math.max(missingTo, t);
          if (expectedLoss(w, t, from, routerOf[from], routerOf[c], sessions, c, helloNanos)) {
            expectedLoss++;
            ps[4][sec]++;
          } else {
            lossFrom = Math.min(lossFrom, t);
            lossTo = Math.max(lossTo, t);
            if (!inTargetWindow(w, t, deadNanos, helloNanos)) {
              lossOutside++;
            }
          }
        }
      }
      long arrived = l.lastDeliveryAt(i);
      if (arrived > 0) {
        maxDelay = Math.max(maxDelay, arrived - t);
        late += arrived - t > deadNanos ? 1 : 0;
      }
      int dup = l.duplicates(i);
      duplicates += dup;
      ps[5][sec] += dup;
      int disorder = l.outOfOrder(i);
      outOfOrder += disorder;
      bad |= dup > 0 || disorder > 0;
      if (w.reliable()) {
        long confirmed = l.confirmedAt(i);
        if (confirmed > 0) {
          maxConfirm = Math.max(maxConfirm, confirmed - t);
        } else if (l.isUnreached(i)) {
          unreached++;
        } else {
          unconfirmed++;
        }
      }
      if (bad && t >= w.inject()) {
        lastBad = i;
      }
    }
    for (int s = 0; s < seconds; s++) {
      long strays = l.strays((int) (w.start() / 1_000_000_000L) + s);
      spurious += strays;
      ps[6][s] += strays;
    }
    double exactAt; // nanoseconds from the origin, or NaN
    if (lastBad < 0) {
      exactAt = w.inject();
    } else if (lastBad + 1 < last) {
      exactAt = l.sentAt(lastBad + 1);
    } else {
      exactAt = Double.NaN;
    }
    return new Result(
        last - first,
        failedSends,
        expected,
        delivered,
        missing,
        expectedLoss,
        missing - expectedLoss,
        lossOutside,
        relative(missingFrom, w.inject()),
        relative(missingTo, w.inject()),
        relative(lossFrom, w.inject()),
        relative(lossTo, w.inject()),
        duplicates,
        spurious,
        (exactAt - w.heal()) / 1e9,
        (exactAt - w.inject()) / 1e9,
        lastBad < 0,
        late,
        maxDelay < 0 ? Double.NaN : maxDelay / 1e9,
        outOfOrder,
        unconfirmed,
        unreached,
        maxConfirm < 0 ? Double.NaN : maxConfirm / 1e9,
        ps);
  }

  /** What an {@link Anomaly} is. */
  public enum Kind {
    /** An expected delivery that did not arrive, and that the fault did not make unavoidable. */
    LOSS,
    /** An expected delivery that did not arrive because the fault took its path or host away. */
    EXPECTED_LOSS,
    /** A delivery beyond the receiver's first of the message. */
    DUPLICATE,
    /** A delivery to a client whose predicate the message does not satisfy. */
    SPURIOUS,
    /** A message whose last delivery came more than a dead interval after it was sent. */
    LATE,
    /** A first delivery that came after a later message of the same sender. */
    OUT_OF_ORDER,
    /** A reliable message whose publisher was told neither of confirmation nor of failure. */
    UNCONFIRMED
  }

  /**
   * One delivery that was not as the oracle expects, or one late message.
   *
   * @param message the message's number
   * @param sentAt its send time, nanoseconds from the origin
   * @param from its sender
   * @param to the receiver concerned (-1 for {@link Kind#LATE})
   * @param failed whether the send failed (the sender had no session)
   * @param arrivedAt when the delivery (duplicate) or the message's last delivery (late) arrived,
   *     nanoseconds from the origin; 0 for missing and spurious deliveries
   * @param firstArrivedAt when the message's first delivery to any client arrived (0: none)
   */
  public record Anomaly(
      Kind kind,
      int message,
      long sentAt,
      int from,
      int to,
      boolean failed,
      long arrivedAt,
      long firstArrivedAt) {}

  /** The anomalies of window {@code w}, in send order, at most {@code limit}. */
  public static java.util.List<Anomaly> anomalies(
      Ledger l,
      int[] routerOf,
      Sessions sessions,
      Window w,
      long deadNanos,
      long helloNanos,
      int limit) {
    java.util.List<Anomaly> out = new java.util.ArrayList<>();
    int first = firstAt(l, w.start());
    int last = firstAt(l, w.end());
    java.util.Map<Integer, java.util.List<long[]>> dups = new java.util.HashMap<>();
    for (long[] d : l.duplicateLog()) {
      if (d[0] >= first && d[0] < last) {
        dups.computeIfAbsent((int) d[0], k -> new java.util.ArrayList<>()).add(d);
      }
    }
    for (int i = first; i < last && out.size() < limit; i++) {
      long t = l.sentAt(i);
      int from = l.from(i);
      boolean failed = l.isFailed(i);
      for (int k = 0; k < l.words(); k++) {
        long exp = l.expected(i, k);
        long got = l.got(i, k);
        for (long bits = exp ^ got; bits != 0; bits &= bits - 1) {
          int c = k * 64 + Long.numberOfTrailingZeros(bits);
          Kind kind =
              (got & Long.lowestOneBit(bits)) != 0
                  ? Kind.SPURIOUS
                  : expectedLoss(w, t, from, routerOf[from], routerOf[c], sessions, c, helloNanos)
                      ? Kind.EXPECTED_LOSS
                      : Kind.LOSS;
          out.add(new Anomaly(kind, i, t, from, c, failed, 0, l.firstDeliveryAt(i)));
        }
      }
      for (long[] d : dups.getOrDefault(i, java.util.List.of())) {
        out.add(
            new Anomaly(
                Kind.DUPLICATE, i, t, from, (int) d[1], failed, d[2], l.firstDeliveryAt(i)));
      }
      long arrived = l.lastDeliveryAt(i);
      if (arrived > 0 && arrived - t > deadNanos) {
        out.add(new Anomaly(Kind.LATE, i, t, from, -1, failed, arrived, l.firstDeliveryAt(i)));
      }
      if (l.outOfOrder(i) > 0) {
        out.add(new Anomaly(Kind.OUT_OF_ORDER, i, t, from, -1, failed, 0, l.firstDeliveryAt(i)));
      }
      if (w.reliable() && l.confirmedAt(i) == 0 && !l.isUnreached(i)) {
        out.add(new Anomaly(Kind.UNCONFIRMED, i, t, from, -1, failed, 0, l.firstDeliveryAt(i)));
      }
    }
    return out.size() > limit ? out.subList(0, limit) : out;
  }

  private static double relative(long t, long inject) {
    return t == Long.MAX_VALUE || t == Long.MIN_VALUE ? Double.NaN : (t - inject) / 1e9;
  }

  /**
   * Whether a loss of a message sent at {@code t} lies in the window the targets allow: a dead
   * interval from the injection or the heal (detection), and one hello interval more (the routes'
   * and advertisements' reaction to it).
   */
  static boolean inTargetWindow(Window w, long t, long deadNanos, long helloNanos) {
    long span = deadNanos + helloNanos;
    return t >= w.inject() - IN_FLIGHT_NANOS && t <= w.inject() + span
        || w.heal() > w.inject() && t >= w.heal() - IN_FLIGHT_NANOS && t <= w.heal() + span;
  }

  /**
   * How long before a fault a message may have been sent and still be in flight when it strikes
   * (inside a router that is killed, on a link that goes down): more than the testbed's delivery
   * times, which are milliseconds.
   */
  static final long IN_FLIGHT_NANOS = 250_000_000L;

  /** Whether a missing delivery was made impossible by the fault itself. */
  static boolean expectedLoss(
      Window w,
      long t,
      int sender,
      int senderRouter,
      int receiverRouter,
      Sessions s,
      int c,
      long helloNanos) {
    if (w.reliable()) {
      // The publisher resends what its dead ingress did not confirm, and the ingress holds what
      // a partition keeps from its destinations until it heals: only a host's own session is
      // beyond the service, so messages for the killed router's hosts until their predicates are
      // in force again are all that may be missing.
      return w.fault() == Fault.KILL_RESTART
          && t >= w.inject() - IN_FLIGHT_NANOS
          && receiverRouter == w.killed()
          && t < inForce(s.firstUpAfter(c, w.inject()), helloNanos);
    }
    return switch (w.fault()) {
      case KILL_RESTART ->
          t >= w.inject()
              && (senderRouter == w.killed()
                      && t < inForce(s.firstUpAfter(sender, w.inject()), helloNanos)
                  || receiverRouter == w.killed()
                      && t < inForce(s.firstUpAfter(c, w.inject()), helloNanos));
      case PARTITION ->
          t >= w.inject() && t < w.heal() && w.side()[senderRouter] != w.side()[receiverRouter];
      default -> false;
    };
  }

  /** When a host's predicate is in force after its session opened at {@code up}. */
  private static long inForce(long up, long helloNanos) {
    return up > Long.MAX_VALUE - helloNanos ? Long.MAX_VALUE : up + helloNanos;
  }
}
