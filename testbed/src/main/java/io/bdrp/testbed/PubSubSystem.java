package io.bdrp.testbed;

import java.nio.file.Path;
import java.util.List;

/**
 * One publish/subscribe system under test, deployed for a run: a line of servers on loopback (one
 * router or broker per server, each linked to the next), clients attached to any of them. The
 * benchmarks drive bdrp and its peers through this interface only, with the same client-side
 * layout, so that they differ only in the system.
 *
 * <p>Every message carries an integer {@code bucket} and a body whose first {@link #HEADER} bytes
 * are the sender's {@link System#nanoTime()} and a phase byte; a subscription either takes every
 * message ({@link #ALL}) or only one bucket, expressed in the system's own terms (a bdrp predicate,
 * a NATS subject, a JMS selector).
 */
public interface PubSubSystem extends AutoCloseable {
  /** The bucket of a subscription that takes every message. */
  int ALL = -1;

  /** Bytes at the start of every body that the harness uses: send time (8) and phase (1). */
  int HEADER = 9;

  /** Receives the messages delivered to one subscription, on a thread of the system's client. */
  interface Receiver {
    /** A message was delivered: its send time and phase, read from its body's header. */
    void received(long sentNanos, byte phase);

    /** Reads the header from a body. */
    default void received(byte[] body) {
      long t = 0;
      for (int i = 0; i < 8; i++) {
        t = (t << 8) | (body[i] & 0xFF);
      }
      received(t, body[8]);
    }
  }

  /** Writes the header into {@code body}: the send time now, then {@code phase}. */
  static void stamp(byte[] body, byte phase) {
    long now = System.nanoTime();
    for (int i = 0; i < 8; i++) {
      body[i] = (byte) (now >>> (56 - 8 * i));
    }
    body[8] = phase;
  }

  /** Sends messages from one client. */
  interface Publisher extends AutoCloseable {
    /** Publishes one message (asynchronously where the client allows it). */
    void publish(int bucket, byte[] body) throws Exception;

    /** Pushes out anything the client buffered. */
    void flush() throws Exception;

    @Override
    void close();
  }

  /**
   * Client authentication for a run: the servers name one publisher user, allowed to send only
   * buckets 0 to {@code buckets - 1}, and {@code subscribers} subscriber users, each allowed to
   * receive only those buckets, every user with a secret made for the run; anonymous clients are
   * refused. Every publishing client signs in as the publisher user, the k-th subscribing client as
   * subscriber user k.
   */
  record Auth(int subscribers, int buckets) {
    public Auth {
      if (subscribers < 1 || buckets < 1) {
        throw new IllegalArgumentException("auth needs at least one subscriber and one bucket");
      }
    }

    /** The name of the publisher user. */
    public static final String PUBLISHER = "publisher";

    /** The name of subscriber user {@code k}. */
    public static String subscriber(int k) {
      return "subscriber-" + k;
    }
  }

  /**
   * Requests of this system's clients that a server refused and reported to the client (a message
   * or subscription outside the client's permissions, say), since it started.
   */
  default long refused() {
    return 0;
  }

  /**
   * Deliveries that reached a subscribing client a second time (redelivered by an at-least-once
   * system), since it started. The system does not pass them to the {@link Receiver}, so that no
   * benchmark counts one message twice; it counts them here instead.
   */
  default long duplicates() {
    return 0;
  }

  /** A short lower-case name for tables ("bdrp", "nats", "activemq"). */
  String name();

  /** Starts {@code servers} servers in a line, with logs and configuration under {@code dir}. */
  void start(int servers, Path dir) throws Exception;

  /** Subscribes a new client attached to server {@code server}. */
  AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver) throws Exception;

  /** A new publishing client attached to server {@code server}. */
  Publisher publisher(int server, String name) throws Exception;

  /** The server processes, for CPU accounting. */
  List<ChildProcess> processes();

  /** Closes every client and ends every server process this system started. */
  @Override
  void close();
}
