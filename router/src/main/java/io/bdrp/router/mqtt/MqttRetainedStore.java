package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttRetained;
import io.bdrp.encoding.mqtt.MqttTopic;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntPredicate;

/**
 * This router's copy of the federation's retained messages, one per topic (docs/mqtt.md, "Retained
 * messages"). Every router with an MQTT port keeps one; a retained message reaches all of them (see
 * {@link MqttRetained}), and each keeps, per topic, the message with the greatest (version,
 * origin), so that copies that arrive in different orders at different routers end the same.
 *
 * <p>A retained message with an empty payload removes the topic's message (MQTT-3.3.1-6): it is
 * kept as a <em>deletion</em> (its version, no payload, never delivered) for {@link
 * #DELETION_KEEP_MS}, so that an older copy that arrives later, from a router coming back from a
 * partition, does not bring the message back.
 *
 * <p><b>Bounds.</b> At most {@link #MAX_ENTRIES} topics (messages and deletions) and {@link
 * #MAX_BYTES} of encoded messages. A retained PUBLISH that would go beyond them at its ingress
 * router is refused there (0x97, Quota exceeded); a copy from another router that does not fit is
 * dropped and counted.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttRetainedStore {
  /** Most topics held, messages and deletions together. */
  static final int MAX_ENTRIES = 10_000;

  /** Most bytes of encoded retained messages held. */
  static final long MAX_BYTES = 64L << 20;

  /** How long a deletion is kept, in milliseconds: an hour. */
  static final long DELETION_KEEP_MS = 3_600_000;

  /** A topic's retained message (or its deletion: an empty payload), and when it was stored. */
  record Entry(Message message, long version, int origin, int bytes, long storedAtMs) {
    boolean deleted() {
      return message.bodyLength() == 0;
    }
  }

  /** What became of a retained message offered to the store. */
  enum Offer {
    /** Stored: the topic's message now. */
    STORED,
    /** A deletion, stored. */
    DELETED,
    /** Not newer than what is held for its topic: nothing changed. */
    STALE,
    /** Beyond the store's bounds: dropped. */
    FULL,
    /** Not a retained message with a topic. */
    INVALID
  }

  private final int self;
  private final Map<String, Entry> byTopic = new HashMap<>();
  private long bytes;
  private int messages; // entries that are not deletions
  private long lastVersion;

  /**
   * @param self this router's number, the origin of the retained messages published here
   * @param floorMs the lowest version to give: the router's epoch, so that a router restarted after
   *     its clock went back still gives versions above those of its earlier run
   */
  MqttRetainedStore(int self, long floorMs) {
    this.self = self;
    this.lastVersion = floorMs - 1;
  }

  /** Retained messages held (deletions not counted). */
  int messages() {
    return messages;
  }

  /** Topics held, messages and deletions. */
  int entries() {
    return byTopic.size();
  }

  /** Bytes of encoded messages held. */
  long bytes() {
    return bytes;
  }

  /**
   * {@code m}, a message published here with the retain flag, stamped as retained with the next
   * version of this router's clock; null if the store could not take it (a new topic beyond {@link
   * #MAX_ENTRIES}, or beyond {@link #MAX_BYTES}).
   *
   * @throws IllegalArgumentException if {@code m} has too many attributes to take the stamp
   */
  Message stamp(Message m, long nowMs) {
    String topic = MqttTopic.of(m);
    int n = MessageCodec.encodedLength(m) + 48; // the stamp's attributes, generously
    if (topic == null || !fits(topic, m.bodyLength() == 0 ? 0 : n)) {
      return null;
    }
    lastVersion = Math.max(nowMs, lastVersion + 1);
    return MqttRetained.stamp(m, lastVersion, self);
  }

  private boolean fits(String topic, int n) {
    Entry held = byTopic.get(topic);
    if (held == null && byTopic.size() >= MAX_ENTRIES) {
      return false;
    }
    return bytes - (held == null ? 0 : held.bytes) + n <= MAX_BYTES;
  }

  /** A retained message (from any router, this one included): kept if newer than the topic's. */
  Offer offer(Message m, long nowMs) {
    String topic = MqttTopic.of(m);
    if (topic == null || !MqttRetained.isRetained(m)) {
      return Offer.INVALID;
    }
    long version = MqttRetained.version(m);
    int origin = MqttRetained.origin(m);
    Entry held = byTopic.get(topic);
    if (held != null && !MqttRetained.newer(version, origin, held.version, held.origin)) {
      return Offer.STALE;
    }
    boolean deletion = m.bodyLength() == 0;
    int n = deletion ? 0 : MessageCodec.encodedLength(m);
    if (!fits(topic, n)) {
      return Offer.FULL;
    }
    if (origin == self) {
      lastVersion = Math.max(lastVersion, version); // versions stay increasing after a restart
    }
    remove(topic);
    byTopic.put(topic, new Entry(m, version, origin, n, nowMs));
    bytes += n;
    if (!deletion) {
      messages++;
    }
    return deletion ? Offer.DELETED : Offer.STORED;
  }

  private void remove(String topic) {
    Entry e = byTopic.remove(topic);
    if (e != null) {
      bytes -= e.bytes;
      if (!e.deleted()) {
        messages--;
      }
    }
  }

  /**
   * Calls {@code sink} with each retained message that {@code filter} matches, that is not expired
   * at {@code nowMs} and that {@code subscribe} (a subscribe permission, null for every message)
   * allows, in no particular order. Expired messages met are removed (MQTT-3.3.2-5).
   */
  void forEachMatching(Predicate filter, Predicate subscribe, long nowMs, Consumer<Message> sink) {
    List<String> expired = null;
    for (Map.Entry<String, Entry> e : byTopic.entrySet()) {
      Entry entry = e.getValue();
      if (entry.deleted()) {
        continue;
      }
      Message m = entry.message;
      if (MqttPublish.expiresAt(m) <= nowMs) {
        if (expired == null) {
          expired = new ArrayList<>();
        }
        expired.add(e.getKey());
        continue;
      }
      if (filter.matches(m) && (subscribe == null || subscribe.matches(m))) {
        sink.accept(m);
      }
    }
    if (expired != null) {
      expired.forEach(this::remove);
    }
  }

  /**
   * The messages and deletions to hand to a router that starts or comes back: those that entered
   * the federation here, and those whose origin {@code reachable} says this router cannot reach (so
   * that another copy must stand in for the origin's).
   */
  List<Message> toHandOver(IntPredicate reachable) {
    List<Message> out = new ArrayList<>();
    for (Entry e : byTopic.values()) {
      if (e.origin == self || !reachable.test(e.origin)) {
        out.add(e.message);
      }
    }
    return out;
  }

  /** Removes deletions older than {@link #DELETION_KEEP_MS} and expired messages. */
  void purge(long nowMs) {
    Iterator<Entry> it = byTopic.values().iterator();
    while (it.hasNext()) {
      Entry e = it.next();
      boolean old =
          e.deleted()
              ? nowMs - e.storedAtMs > DELETION_KEEP_MS
              : MqttPublish.expiresAt(e.message) <= nowMs;
      if (old) {
        it.remove();
        bytes -= e.bytes;
        if (!e.deleted()) {
          messages--;
        }
      }
    }
  }
}
