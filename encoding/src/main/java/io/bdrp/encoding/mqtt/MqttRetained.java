package io.bdrp.encoding.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import java.nio.ByteBuffer;

/**
 * The attributes that make an MQTT message a retained one, and the form in which a router hands its
 * retained messages to another (docs/mqtt.md, "Retained messages"). They are set by routers only: a
 * router refuses a client's message that carries {@link #RETAINED} or {@link #FOR}.
 *
 * <ul>
 *   <li>A retained PUBLISH becomes a message with {@value #RETAINED} {@code = true}, its version
 *       {@value #VERSION} and the number of the router where it entered, {@value #ORIGIN}. Every
 *       router that keeps retained messages holds a predicate on {@value #RETAINED}, so the message
 *       reaches all of them, besides the subscribers it matches. Of two retained messages of one
 *       topic, the one with the greater (version, origin) is kept, at every router alike.
 *   <li>A retained message handed to router {@code r} alone (when {@code r} starts or comes back
 *       from a partition) travels wrapped: a message whose only attribute is {@value #FOR} {@code =
 *       r} and whose body is the retained message encoded. No subscription's topic filter matches
 *       it, so it reaches no subscriber as a live message.
 * </ul>
 *
 * <p>Stateless.
 */
public final class MqttRetained {
  /** Boolean attribute: the message is retained. */
  public static final String RETAINED = "mqtt.store.retained";

  /** Integer attribute: the version of a retained message, from its ingress router's clock. */
  public static final String VERSION = "mqtt.store.version";

  /** Integer attribute: the router where a retained message entered the federation. */
  public static final String ORIGIN = "mqtt.store.origin";

  /** Integer attribute: the router a wrapped retained message is for. */
  public static final String FOR = "mqtt.store.for";

  private MqttRetained() {}

  /** Whether {@code m} carries either attribute that only routers set. */
  public static boolean reserved(Message m) {
    return m.indexOf(RETAINED) >= 0 || m.indexOf(FOR) >= 0;
  }

  /** Whether {@code m} is a retained message with its version and origin. */
  public static boolean isRetained(Message m) {
    Value r = m.get(RETAINED);
    return r != null
        && r.type() == ValueType.BOOLEAN
        && r.asBoolean()
        && integer(m, VERSION) != null
        && integer(m, ORIGIN) != null;
  }

  /** The version of a retained message (see {@link #isRetained}). */
  public static long version(Message m) {
    return integer(m, VERSION);
  }

  /** The origin of a retained message (see {@link #isRetained}). */
  public static int origin(Message m) {
    return (int) (long) integer(m, ORIGIN);
  }

  /**
   * Whether a retained message of version {@code v} from {@code origin} replaces one of version
   * {@code heldVersion} from {@code heldOrigin}: the greater version, then the greater origin.
   */
  public static boolean newer(long v, int origin, long heldVersion, int heldOrigin) {
    return v != heldVersion ? v > heldVersion : origin > heldOrigin;
  }

  /**
   * {@code m} as a retained message of {@code version} from router {@code origin}.
   *
   * @throws IllegalArgumentException if {@code m} has too many attributes to take three more
   */
  public static Message stamp(Message m, long version, int origin) {
    Message.Builder b = copy(m);
    b.put(RETAINED, true).put(VERSION, version).put(ORIGIN, (long) origin);
    return b.build();
  }

  /**
   * The retained message {@code m} wrapped for router {@code target}.
   *
   * @throws IllegalArgumentException if the encoded message is larger than a body
   */
  public static Message wrap(Message m, int target) {
    return Message.builder().put(FOR, (long) target).body(MessageCodec.toBytes(m)).build();
  }

  /**
   * The retained message that {@code m} wraps if it is wrapped for router {@code self}, else null
   * (not wrapped, for another router, or a body that is not a retained message).
   */
  public static Message unwrap(Message m, int self) {
    Long target = integer(m, FOR);
    if (target == null || target != self) {
      return null;
    }
    try {
      Message inner = MessageCodec.decode(ByteBuffer.wrap(m.body()));
      return isRetained(inner) ? inner : null;
    } catch (CodecException e) {
      return null;
    }
  }

  private static Long integer(Message m, String name) {
    Value v = m.get(name);
    return v != null && v.type() == ValueType.INTEGER ? v.asLong() : null;
  }

  private static Message.Builder copy(Message m) {
    Message.Builder b = Message.builder();
    for (int i = 0; i < m.size(); i++) {
      b.put(m.name(i), m.value(i));
    }
    return b.body(m.bodyBuffer());
  }
}
