package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.mqtt.MqttShared;
import io.bdrp.encoding.mqtt.MqttSubscription;
import io.bdrp.router.hosts.PredicateChanges;
import io.bdrp.transport.ProtocolException;
import io.netty.channel.Channel;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttUnsubAckMessage;
import io.netty.handler.codec.mqtt.MqttUnsubAckPayload;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An MQTT session's subscriptions and their changes. The session's predicate is the OR of its
 * subscriptions' predicates ({@link MqttSubscription}: the topic filter, and the content filter
 * after a '?'), set through the router's one path for predicate changes ({@link PredicateChanges}),
 * so that the limits, the user's filter count, the subscribe permission and the router's aggregate
 * apply as to a bdrp client. The filters are parsed, and the OR made, on the control thread; the
 * SUBACK goes out once the predicate is set.
 *
 * <p>One change is prepared at a time; the SUBSCRIBEs and UNSUBSCRIBEs that arrive meanwhile wait
 * and then go together as the next change (each still answered on its own, in order), so a client
 * that subscribes filter by filter makes few changes. At most {@link #MAX_WAITING} wait.
 *
 * <p><b>Shared subscriptions</b> ({@code $share/ShareName/filter}) are kept apart ({@link
 * Set#shared}) and are not in the session's predicate: once a change is made, the session leaves
 * the groups of those it dropped and joins those of its new ones ({@link MqttSharedGroups}), and
 * the SUBACK waits until every group it joined has a predicate that covers it. They get no retained
 * messages (MQTT 5 §4.8.2).
 *
 * <p>Owned by the router's event loop.
 */
final class MqttSubscriptions {
  /** Most SUBSCRIBE and UNSUBSCRIBE packets waiting behind the change being prepared. */
  static final int MAX_WAITING = 1024;

  /** Most shared subscriptions ({@code $share/...}) a session holds at once. */
  static final int MAX_SHARED = 64;

  private static final int FILTER_INVALID = 0x8F;
  private static final int NOT_AUTHORIZED = 0x87;
  private static final int QUOTA_EXCEEDED = 0x97;
  private static final int UNSPECIFIED = 0x80;
  private static final int NO_SUBSCRIPTION = 0x11;

  /**
   * A subscription as it is set: its text as the client wrote it, what was granted, and its MQTT 5
   * Subscription Identifier (0 for none).
   */
  record Sub(
      String text,
      Predicate predicate,
      int granted,
      boolean noLocal,
      int subscriptionId,
      boolean retainAsPublished) {}

  /**
   * What a message is to a session: the best QoS granted, the subscription identifiers, and whether
   * a matching subscription keeps the RETAIN flag of a retained message (Retain As Published).
   */
  record Match(int granted, int[] subscriptionIds, boolean retainAsPublished) {
    static final int[] NO_IDS = new int[0];
    static final Match NONE = new Match(-1, NO_IDS, false);
  }

  /**
   * The subscriptions of a session at one time, by their text: its own ({@link #byText}, whose OR
   * is the session's predicate) and its shared ones ({@link #shared}, {@code $share/...}, delivered
   * through their groups, {@link MqttSharedGroup}). Immutable.
   */
  static final class Set {
    static final Set EMPTY = new Set(Map.of());

    final Map<String, Sub> byText;

    /** The shared subscriptions, by their whole text ({@code $share/ShareName/filter}). */
    final Map<String, Sub> shared;

    /**
     * What every message the session gets matches if the QoS granted to every subscription is the
     * same, none is No Local and none has an identifier (the data plane matched the OR already),
     * else null.
     */
    private final Match uniform;

    Set(Map<String, Sub> byText) {
      this(byText, Map.of());
    }

    Set(Map<String, Sub> byText, Map<String, Sub> shared) {
      this.byText = Collections.unmodifiableMap(new LinkedHashMap<>(byText));
      this.shared = Collections.unmodifiableMap(new LinkedHashMap<>(shared));
      int u = -1;
      for (Sub s : byText.values()) {
        if (s.noLocal
            || s.subscriptionId != 0
            || s.retainAsPublished
            || (u != -1 && u != s.granted)) {
          u = -1;
          break;
        }
        u = s.granted;
      }
      this.uniform = u >= 0 ? new Match(u, Match.NO_IDS, false) : null;
    }

    /**
     * The best QoS granted to a subscription that {@code m} matches (-1 if none does) and the
     * distinct identifiers of the matching subscriptions that have one (MQTT-3.3.4-4); with {@code
     * own} (the session's own message), No Local subscriptions do not count.
     */
    Match match(Message m, boolean own) {
      if (uniform != null) {
        return uniform;
      }
      int best = -1;
      int[] ids = Match.NO_IDS;
      boolean keepRetain = false;
      for (Sub s : byText.values()) {
        if ((s.granted > best || s.subscriptionId != 0 || (s.retainAsPublished && !keepRetain))
            && !(own && s.noLocal)
            && s.predicate.matches(m)) {
          best = Math.max(best, s.granted);
          keepRetain |= s.retainAsPublished;
          if (s.subscriptionId != 0 && !contains(ids, s.subscriptionId)) {
            ids = Arrays.copyOf(ids, ids.length + 1);
            ids[ids.length - 1] = s.subscriptionId;
          }
        }
      }
      return best < 0 ? Match.NONE : new Match(best, ids, keepRetain);
    }

    private static boolean contains(int[] a, int v) {
      for (int x : a) {
        if (x == v) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * A topic filter of a SUBSCRIBE as asked, with its Retain Handling (0: send the retained messages
   * it matches; 1: only if the subscription is new; 2: none) and Retain As Published.
   */
  record Asked(
      String text,
      int qos,
      boolean noLocal,
      int subscriptionId,
      int retainHandling,
      boolean retainAsPublished,
      List<String> content) {
    Asked(String text, int qos, boolean noLocal, int subscriptionId) {
      this(text, qos, noLocal, subscriptionId, 0, false, List.of());
    }

    /**
     * The subscription to parse (on the control thread): the text as written, with each of {@code
     * content} (the SUBSCRIBE's {@value MqttInbound#FILTER_PROPERTY} user properties) ANDed to its
     * content filter.
     *
     * @throws IllegalArgumentException if one of {@code content} is not a predicate
     */
    String subscription() {
      if (content.isEmpty()) {
        return text;
      }
      StringBuilder b = new StringBuilder();
      int q = text.indexOf('?');
      if (q < 0) {
        b.append(text).append('?');
      } else {
        b.append(text, 0, q).append("?(").append(text, q + 1, text.length()).append(") && ");
      }
      for (int i = 0; i < content.size(); i++) {
        Predicate p;
        try {
          p = Predicate.parse(content.get(i));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "the " + MqttInbound.FILTER_PROPERTY + " user property: " + e.getMessage(), e);
        }
        b.append(i > 0 ? " && (" : "(").append(p).append(')');
      }
      return b.toString();
    }
  }

  /** A SUBSCRIBE ({@code asked}) or an UNSUBSCRIBE ({@code removed}), and a code per filter. */
  private static final class Op {
    final int packetId;
    final List<Asked> asked; // null for an UNSUBSCRIBE
    final List<String> removed;
    final int[] codes;

    Op(int packetId, List<Asked> asked, List<String> removed) {
      this.packetId = packetId;
      this.asked = asked;
      this.removed = removed;
      this.codes = new int[asked != null ? asked.size() : removed.size()];
    }
  }

  private final MqttHost host;
  private final Channel channel;
  private final boolean v5;
  private final PredicateChanges predicates;
  private final MqttSharedGroups groups;
  private final MqttMetrics.Protocol counters;
  private final MqttRetainedStore retained;
  private final ArrayDeque<Op> waiting = new ArrayDeque<>();
  private boolean changing;

  MqttSubscriptions(
      MqttHost host,
      Channel channel,
      boolean v5,
      PredicateChanges predicates,
      MqttSharedGroups groups,
      MqttMetrics.Protocol counters,
      MqttRetainedStore retained) {
    this.retained = retained;
    this.groups = groups;
    this.host = host;
    this.channel = channel;
    this.v5 = v5;
    this.predicates = predicates;
    this.counters = counters;
  }

  /**
   * A SUBSCRIBE: answered with a SUBACK once its change is made. No Local on a shared subscription
   * is a protocol error [MQTT-3.8.3-4].
   */
  void subscribe(int packetId, List<Asked> asked) {
    for (Asked a : asked) {
      if (a.noLocal && MqttShared.isShared(a.text)) {
        throw new MqttFault(
            MqttFault.PROTOCOL_ERROR,
            "No Local on shared subscription " + a.text + " [MQTT-3.8.3-4]");
      }
    }
    enqueue(new Op(packetId, List.copyOf(asked), null));
  }

  /** An UNSUBSCRIBE: answered with an UNSUBACK once its change is made. */
  void unsubscribe(int packetId, List<String> filters) {
    enqueue(new Op(packetId, null, List.copyOf(filters)));
  }

  private void enqueue(Op op) {
    if (waiting.size() >= MAX_WAITING) {
      throw new MqttFault(
          MqttFault.QUOTA_EXCEEDED,
          "more than " + MAX_WAITING + " SUBSCRIBE and UNSUBSCRIBE packets unanswered");
    }
    waiting.add(op);
    if (!changing) {
      next();
    }
  }

  /** Starts the next change with every packet waiting. */
  private void next() {
    if (waiting.isEmpty()) {
      return;
    }
    changing = true;
    List<Op> ops = new ArrayList<>(waiting);
    waiting.clear();
    Set base = host.subscriptions;
    Set[] made = new Set[1];
    predicates.change(
        host,
        () -> {
          made[0] = plan(base, ops);
          List<Predicate> all = new ArrayList<>(made[0].byText.size());
          for (Sub s : made[0].byText.values()) {
            all.add(s.predicate);
          }
          return Predicate.or(all);
        },
        () -> !host.ended, // a kept session takes the change though its connection ended
        refused -> done(ops, base, made[0], refused));
  }

  /**
   * On the control thread: the subscriptions after {@code ops}, each filter's code set in its op:
   * the QoS granted, or why the filter is refused.
   */
  private Set plan(Set base, List<Op> ops) {
    Map<String, Sub> next = new LinkedHashMap<>(base.byText);
    Map<String, Sub> shared = new LinkedHashMap<>(base.shared);
    for (Op op : ops) {
      if (op.asked == null) {
        for (int i = 0; i < op.removed.size(); i++) {
          String t = op.removed.get(i);
          op.codes[i] = next.remove(t) != null || shared.remove(t) != null ? 0 : NO_SUBSCRIPTION;
        }
        continue;
      }
      for (int i = 0; i < op.asked.size(); i++) {
        Asked a = op.asked.get(i);
        if (MqttShared.isShared(a.text)) {
          op.codes[i] = planShared(a, shared);
          continue;
        }
        Predicate p = null;
        try {
          p = MqttSubscription.parse(a.subscription()).predicate();
          // Refused if nothing of it is within the user's subscribe permission.
          op.codes[i] = host.permissions.restrict(p).isEmpty() ? NOT_AUTHORIZED : 0;
        } catch (IllegalArgumentException e) {
          op.codes[i] = p == null ? FILTER_INVALID : QUOTA_EXCEEDED;
        }
        if (op.codes[i] == 0) {
          int granted = a.qos; // QoS 0, 1 and 2 are offered
          next.put(
              a.text,
              new Sub(a.text, p, granted, a.noLocal, a.subscriptionId, a.retainAsPublished));
          op.codes[i] = granted;
        }
      }
    }
    return new Set(next, shared);
  }

  /**
   * On the control thread: a shared subscription asked for, into {@code shared} if it is taken;
   * returns the QoS granted or why it is refused: a share name or filter that is not valid (0x8F,
   * [MQTT-4.8.2-1], [MQTT-4.8.2-2]), nothing of the filter within the subscribe permission (0x87),
   * more than {@link #MAX_SHARED} shared subscriptions (0x97). The predicate kept is the filter's
   * (with its content filter, and the SUBSCRIBE's {@value MqttInbound#FILTER_PROPERTY}): its
   * group's, which the session's own predicate does not include.
   */
  private int planShared(Asked a, Map<String, Sub> shared) {
    Predicate p;
    try {
      p = MqttShared.parse(a.subscription()).subscription().predicate();
    } catch (IllegalArgumentException e) {
      return FILTER_INVALID;
    }
    try {
      if (host.permissions.restrict(p).isEmpty()) {
        return NOT_AUTHORIZED;
      }
    } catch (IllegalArgumentException e) {
      return QUOTA_EXCEEDED;
    }
    if (!shared.containsKey(a.text) && shared.size() >= MAX_SHARED) {
      return QUOTA_EXCEEDED;
    }
    int granted = a.qos;
    shared.put(a.text, new Sub(a.text, p, granted, false, a.subscriptionId, a.retainAsPublished));
    return granted;
  }

  /**
   * On the loop: the change is made (or refused). Once it is made, the session leaves the groups of
   * the shared subscriptions it no longer has and joins those of its new ones ({@link
   * MqttSharedGroups}); the packets are answered, in order, once every group it joined has a
   * predicate that covers the session (a group refused by a limit of the router's predicates makes
   * that subscription's code 0x97, and it is not kept); then the retained messages are sent.
   */
  private void done(List<Op> ops, Set base, Set made, ProtocolException refused) {
    if (refused != null) {
      answer(ops, base, null, refused);
      return;
    }
    Set before = host.subscriptions;
    host.subscriptions = made;
    for (String t : before.shared.keySet()) {
      if (!made.shared.containsKey(t)) {
        groups.leave(host, t);
      }
    }
    List<Sub> joining = new ArrayList<>();
    for (Sub s : made.shared.values()) {
      if (before.shared.get(s.text()) != s) {
        joining.add(s);
      }
    }
    if (joining.isEmpty()) {
      answer(ops, base, made, null);
      return;
    }
    int[] pending = {joining.size()};
    for (Sub s : joining) {
      groups.join(
          host,
          s,
          failed -> {
            if (failed) {
              refuseShared(ops, s);
            }
            if (--pending[0] == 0) {
              answer(ops, base, made, null);
            }
          });
    }
  }

  /** A shared subscription whose group was refused: not kept, and its filter's code is 0x97. */
  private void refuseShared(List<Op> ops, Sub s) {
    Set now = host.subscriptions;
    if (now.shared.get(s.text()) == s) {
      Map<String, Sub> shared = new LinkedHashMap<>(now.shared);
      shared.remove(s.text());
      host.subscriptions = new Set(now.byText, shared);
    }
    for (Op op : ops) {
      for (int i = 0; op.asked != null && i < op.codes.length; i++) {
        if (op.asked.get(i).text.equals(s.text()) && op.codes[i] < 0x80) {
          op.codes[i] = QUOTA_EXCEEDED;
        }
      }
    }
  }

  /**
   * On the loop: every packet of a change answered, in order; the retained messages of the
   * subscriptions it made ({@code made}, null if refused); then the next change.
   */
  private void answer(List<Op> ops, Set base, Set made, ProtocolException refused) {
    for (Op op : ops) {
      for (int i = 0; i < op.codes.length; i++) {
        if (refused != null && op.codes[i] < 0x80 && op.codes[i] != NO_SUBSCRIPTION) {
          op.codes[i] = op.asked != null ? QUOTA_EXCEEDED : UNSPECIFIED;
        }
        if (op.asked != null && op.codes[i] >= 0x80) {
          counters.subscriptionRefused(reason(op.codes[i])).inc();
        }
      }
      channel.write(op.asked != null ? subAck(op) : unsubAck(op), channel.voidPromise());
    }
    channel.flush();
    if (made != null) {
      sendRetained(ops, base, made);
    }
    changing = false;
    next();
  }

  /**
   * After the SUBACKs: the retained messages each filter granted matches, as its Retain Handling
   * asks (MQTT-3.3.1-9, -10, -11; a 3.1.1 subscription always gets them, MQTT-3.3.1-6 of 3.1.1),
   * within the session's subscribe permission; none for a shared subscription (MQTT 5 §4.8.2).
   */
  private void sendRetained(List<Op> ops, Set base, Set made) {
    long now = System.currentTimeMillis();
    for (Op op : ops) {
      if (op.asked == null) {
        continue;
      }
      for (int i = 0; i < op.codes.length; i++) {
        Asked a = op.asked.get(i);
        Sub s = made.byText.get(a.text);
        if (op.codes[i] >= 0x80
            || s == null
            || a.retainHandling == 2
            || (a.retainHandling == 1 && base.byText.containsKey(a.text))
            || MqttShared.isShared(a.text)) {
          continue;
        }
        List<Message> matching = new ArrayList<>();
        retained.forEachMatching(s.predicate, host.permissions.subscribe(), now, matching::add);
        if (!matching.isEmpty()) {
          host.deliverRetained(matching, s);
        }
      }
    }
  }

  private static String reason(int code) {
    return switch (code) {
      case NOT_AUTHORIZED -> "subscribe_permission";
      case FILTER_INVALID -> "invalid_filter";
      default -> "quota";
    };
  }

  private MqttSubAckMessage subAck(Op op) {
    int[] codes = op.codes.clone();
    if (!v5) {
      for (int i = 0; i < codes.length; i++) {
        codes[i] = codes[i] >= 0x80 ? 0x80 : codes[i]; // 3.1.1 has one failure code
      }
    }
    return new MqttSubAckMessage(
        new MqttFixedHeader(MqttMessageType.SUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
        new MqttMessageIdAndPropertiesVariableHeader(op.packetId, MqttProperties.NO_PROPERTIES),
        new MqttSubAckPayload(codes));
  }

  private MqttUnsubAckMessage unsubAck(Op op) {
    short[] codes = new short[op.codes.length];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = (short) op.codes[i];
    }
    return new MqttUnsubAckMessage(
        new MqttFixedHeader(MqttMessageType.UNSUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
        new MqttMessageIdAndPropertiesVariableHeader(op.packetId, MqttProperties.NO_PROPERTIES),
        v5 ? new MqttUnsubAckPayload(codes) : null);
  }
}
