package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client's reliable messages that the router has not confirmed yet (docs/client.md, "Reliable
 * publishing"). Each is numbered 1, 2, 3, ... (from the builder's start) as message of this
 * client's publisher id and kept, in number order, until the router answers CONFIRM (or a
 * CONFIRM_RANGE that covers it) or UNREACHED for it, or refuses it with an ERROR other than
 * OVERLOADED. The futures of the messages one confirmation covers complete in one task on the
 * callback executor. A confirmation of numbers this client never sent is a router's fault: those
 * numbers are ignored and counted.
 *
 * <p>At most {@code maxUnconfirmed} of them are written and unanswered at a time; the rest wait
 * here and go out, in order, as answers free room. OVERLOADED (the router's retention is full)
 * holds back the refused message and everything after it: all of them go out again, in order, after
 * the next CONFIRM or {@value #OVERLOADED_RETRY_MS} ms, whichever comes first, so that no later
 * message overtakes a refused one. Before they go, a PING ({@link #BARRIER}) and its PONG make sure
 * every refusal of what was written before has arrived: the router refuses a publisher's later
 * messages until the refused one comes again, and a refusal that arrived only after the resend
 * would make the client send the same messages twice. Every new session sends every unconfirmed
 * message again, in order, before any new one: destination routers drop a publisher's messages
 * numbered at or below the last one they delivered, so nothing reaches a host twice.
 *
 * <p>Any thread: the state is guarded by this object's lock, and no future is completed while it is
 * held. Frames are written only on the event loop of the session's channel, by {@link #drain}, so
 * that they leave in the order they were taken from the table.
 */
final class ReliableSender {
  /** How long a message refused with OVERLOADED waits before it is sent again, at most. */
  static final long OVERLOADED_RETRY_MS = 100;

  /** Bit set in the correlation id of a SEND_RELIABLE, above its number; requests never set it. */
  private static final long RELIABLE_BIT = Long.MIN_VALUE;

  /** The nonce of the sender's PING before it sends held messages again (no number is 0). */
  static final long BARRIER = RELIABLE_BIT;

  /** An unconfirmed message and the future its sender waits on. */
  private record Pending(Message message, CompletableFuture<Void> confirmed) {}

  private final long publisher;
  private final int maxUnconfirmed;
  private final Executor settle;
  private final AtomicLong refusedFrames;

  /** Unconfirmed messages by number, sent or not; its {@code next()} numbers the next message. */
  private final SeqTable<Pending> unconfirmed;

  /** The channel of the open session, or null. */
  private Channel channel;

  /** Every message numbered below this one has been written on {@link #channel}. */
  private long nextToSend;

  /** Every message numbered below this one has been written, on this session or an earlier one. */
  private long sentBelow;

  /** Unconfirmed messages numbered below {@link #nextToSend}: written and not answered. */
  private int inFlight;

  /** The lowest number refused with OVERLOADED and not yet sent again, or 0 for none. */
  private long heldFrom;

  /** Whether the sender's PING is out and its PONG not yet back. */
  private boolean barrierOut;

  /** Whether a {@link #drain} task waits on the session's event loop. */
  private boolean drainQueued;

  /** Set when no session will come again (client closed, no reconnecting): sends fail with it. */
  private IOException ended;

  /**
   * @param publisher this client's publisher id, not 0
   * @param firstSeq the number of the first message, at least 1
   * @param maxUnconfirmed how many messages may be written and unanswered at a time, at least 1
   * @param settle where futures complete
   * @param refusedFrames counts the frames from the router this client refused
   */
  ReliableSender(
      long publisher,
      long firstSeq,
      int maxUnconfirmed,
      Executor settle,
      AtomicLong refusedFrames) {
    this.publisher = publisher;
    this.unconfirmed = new SeqTable<>(firstSeq);
    this.sentBelow = firstSeq;
    this.maxUnconfirmed = maxUnconfirmed;
    this.settle = settle;
    this.refusedFrames = refusedFrames;
  }

  /** This client's publisher id. */
  long publisher() {
    return publisher;
  }

  /** The correlation id a SEND_RELIABLE of message {@code seq} carries. */
  static long correlationId(long seq) {
    return seq | RELIABLE_BIT;
  }

  /** Whether {@code correlationId} is that of a SEND_RELIABLE. */
  static boolean isReliable(long correlationId) {
    return (correlationId & RELIABLE_BIT) != 0;
  }

  /** How many messages are unconfirmed, sent or waiting to be. */
  synchronized int size() {
    return unconfirmed.size();
  }

  /**
   * Numbers {@code m}, keeps it, and has it written as soon as the window and the session allow.
   * The future completes on CONFIRM and fails on UNREACHED, on a refusal, or when the client ends.
   */
  CompletableFuture<Void> send(Message m) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    Channel c;
    IOException refused;
    synchronized (this) {
      refused = ended;
      if (refused == null) {
        unconfirmed.add(new Pending(m, f));
      }
      c = channel;
      // With the window full (or a refusal holding messages back) the message waits: the answer
      // that frees room drains it, and a publisher ahead of its confirmations does not wake the
      // I/O thread for nothing on every send.
      if (refused != null
          || c == null
          || drainQueued
          || inFlight >= maxUnconfirmed
          || heldFrom != 0) {
        c = null;
      } else {
        drainQueued = true;
      }
    }
    if (refused != null) {
      f.completeExceptionally(refused);
    } else if (c != null) {
      Channel session = c;
      try {
        session.eventLoop().execute(() -> drain(session));
      } catch (RejectedExecutionException e) {
        // the client is being closed: its end fails the message
      }
    }
    return f;
  }

  /**
   * A session opened on {@code c} (its event loop calls this, after the predicate is written):
   * sends every unconfirmed message again, in order, then the ones that waited.
   */
  void opened(Channel c) {
    synchronized (this) {
      channel = c;
      nextToSend = unconfirmed.isEmpty() ? unconfirmed.next() : unconfirmed.first();
      inFlight = 0;
      heldFrom = 0;
      barrierOut = false;
    }
    drain(c);
  }

  /** The session on {@code c} ended: unconfirmed messages wait for the next one. */
  synchronized void closed(Channel c) {
    if (channel == c) {
      channel = null;
    }
  }

  /** No session will come again: fails every unconfirmed message, and every later send. */
  void end(IOException cause) {
    List<Pending> failed;
    synchronized (this) {
      if (ended == null) {
        ended = cause;
      }
      channel = null;
      failed = new ArrayList<>(unconfirmed.size());
      unconfirmed.drainAll(failed::add);
    }
    for (Pending p : failed) {
      settle.execute(() -> p.confirmed.completeExceptionally(cause));
    }
  }

  /**
   * CONFIRM (a run of one) or CONFIRM_RANGE on {@code c} for messages {@code firstSeq} to {@code
   * lastSeq} of {@code publisher}: completes the futures of those still unconfirmed, in one task,
   * and sends what waited for room. Numbers at or above {@link #sentBelow} were never sent: they
   * are ignored and the frame is counted as refused.
   */
  void confirmed(Channel c, long publisher, long firstSeq, long lastSeq) {
    if (publisher != this.publisher) {
      return;
    }
    CompletableFuture<?>[] done;
    boolean ping;
    boolean drain;
    synchronized (this) {
      long last = lastSeq;
      if (last >= sentBelow) {
        refusedFrames.incrementAndGet();
        last = sentBelow - 1;
      }
      done = firstSeq <= last ? answered(firstSeq, last) : null;
      ping = barrierDue(c); // a confirmation frees room: the held messages may go at once
      drain = drainDue();
    }
    if (ping) {
      c.writeAndFlush(new ClientFrame.Ping(BARRIER));
    }
    if (done != null) {
      settle.execute(
          () -> {
            for (CompletableFuture<?> f : done) {
              f.complete(null);
            }
          });
    }
    if (drain) {
      queueDrain(c);
    }
  }

  /**
   * Has {@link #drain} run on {@code c}'s loop once the frames being read are handled: the answers
   * of one read free room together, and what they let out leaves in one write and one flush rather
   * than one per answer.
   */
  private void drainLater(Channel c) {
    boolean due;
    synchronized (this) {
      due = drainDue();
    }
    if (due) {
      queueDrain(c);
    }
  }

  /** Under the lock: whether a {@link #drain} is to be queued (marks it queued). */
  private boolean drainDue() {
    if (drainQueued) {
      return false;
    }
    drainQueued = true;
    return true;
  }

  private void queueDrain(Channel c) {
    try {
      c.eventLoop().execute(() -> drain(c));
    } catch (RejectedExecutionException e) {
      // the client is being closed: its end fails what waits
    }
  }

  /** UNREACHED on {@code c}: fails the message's future with the routers it names. */
  void unreached(Channel c, ClientFrame.Unreached u) {
    if (u.publisher() != publisher) {
      return;
    }
    Pending p;
    synchronized (this) {
      p = answered(u.publisherSeq());
    }
    if (p != null) {
      BdrpClient.UnreachedException e =
          new BdrpClient.UnreachedException(u.publisherSeq(), u.routers());
      settle.execute(() -> p.confirmed.completeExceptionally(e));
    }
    drainLater(c);
  }

  /**
   * ERROR on {@code c} whose correlation id is that of a SEND_RELIABLE: OVERLOADED holds the
   * message and all after it back until a CONFIRM or {@value #OVERLOADED_RETRY_MS} ms; any other
   * code fails the message's future with {@code error} and forgets the message.
   */
  void refused(Channel c, long correlationId, BdrpClient.RouterException error) {
    long seq = correlationId & ~RELIABLE_BIT;
    if (error.code() == ErrorCode.OVERLOADED.number()) {
      synchronized (this) {
        if (channel != c || unconfirmed.get(seq) == null || seq >= nextToSend) {
          return; // answered, or refused as sent before a resend that has not reached it yet
        }
        boolean timerRunning = heldFrom != 0;
        if (heldFrom == 0 || seq < heldFrom) {
          heldFrom = seq;
        }
        if (timerRunning) {
          return;
        }
      }
      c.eventLoop().schedule(() -> retry(c), OVERLOADED_RETRY_MS, TimeUnit.MILLISECONDS);
      return;
    }
    Pending p;
    synchronized (this) {
      p = answered(seq);
    }
    if (p != null) {
      settle.execute(() -> p.confirmed.completeExceptionally(error));
    }
    drainLater(c);
  }

  /**
   * The wait after OVERLOADED is over, or a confirmation came: asks for the PONG after which the
   * held messages go again (on {@code c}'s event loop, where every caller runs).
   */
  private void retry(Channel c) {
    boolean ping;
    synchronized (this) {
      ping = barrierDue(c);
    }
    if (ping) {
      c.writeAndFlush(new ClientFrame.Ping(BARRIER));
    }
  }

  /**
   * Under the lock: whether the PING before a resend is to be written on {@code c} (marks it out).
   */
  private boolean barrierDue(Channel c) {
    if (channel != c || heldFrom == 0 || barrierOut) {
      return false;
    }
    barrierOut = true;
    return true;
  }

  /** The PONG of {@link #BARRIER} on {@code c}: the held messages go again, in order. */
  void barrierPassed(Channel c) {
    synchronized (this) {
      if (channel != c) {
        return;
      }
      barrierOut = false;
      if (heldFrom == 0) {
        return;
      }
      resendFromHeld();
    }
    drain(c);
  }

  /** Under the lock: everything from the first held message on is to be written again. */
  private void resendFromHeld() {
    nextToSend = Math.min(nextToSend, heldFrom);
    heldFrom = 0;
    inFlight = unconfirmed.countBelow(nextToSend);
  }

  /**
   * Under the lock: forgets messages {@code first} to {@code last}, answered; the futures of those
   * that were waiting, in number order, or null if none was.
   */
  private CompletableFuture<?>[] answered(long first, long last) {
    if (first == last) {
      Pending p = answered(first);
      return p == null ? null : new CompletableFuture<?>[] {p.confirmed};
    }
    if (unconfirmed.isEmpty()) {
      return null;
    }
    // Numbers below the lowest held were answered before.
    long from = Math.max(first, unconfirmed.first());
    CompletableFuture<?>[] done =
        new CompletableFuture<?>[(int) Math.max(0, Math.min(last - from + 1, unconfirmed.size()))];
    int n = 0;
    for (long seq = from; seq <= last && n < done.length; seq++) {
      Pending p = answered(seq);
      if (p != null) {
        done[n++] = p.confirmed;
      }
    }
    return n == 0 ? null : n == done.length ? done : Arrays.copyOf(done, n);
  }

  /** Under the lock: forgets message {@code seq}, answered; null if it was not waiting. */
  private Pending answered(long seq) {
    Pending p = unconfirmed.remove(seq);
    if (p != null && seq < nextToSend) {
      inFlight--;
    }
    return p;
  }

  /**
   * On the event loop of {@code c}: writes, in number order, every message that the window lets out
   * and no OVERLOADED holds back, in batches of {@link Outbox#BATCH_BYTES}, with one flush.
   */
  void drain(Channel c) {
    List<ClientFrame.SendReliable> frames = new ArrayList<>();
    synchronized (this) {
      drainQueued = false;
      if (channel != c || heldFrom != 0) {
        return;
      }
      unconfirmed.forEachFrom(
          nextToSend,
          (seq, p) -> {
            if (inFlight >= maxUnconfirmed) {
              return false;
            }
            frames.add(
                new ClientFrame.SendReliable(correlationId(seq), publisher, seq, p.message()));
            nextToSend = seq + 1;
            inFlight++;
            return true;
          });
      sentBelow = Math.max(sentBelow, nextToSend);
    }
    if (frames.isEmpty() || !c.isActive()) {
      return; // an inactive channel's session ends, and the next one sends them again
    }
    ByteBuf out = null;
    for (ClientFrame.SendReliable f : frames) {
      int n = ClientFrameCodec.encodedLength(f);
      if (out != null && out.writableBytes() < n) {
        c.write(out);
        out = null;
      }
      if (out == null) {
        out = c.alloc().heapBuffer(Math.max(n, Outbox.BATCH_BYTES));
      }
      ClientFrameCodec.encodeMeasured(f, out, n);
    }
    c.writeAndFlush(out);
  }
}
