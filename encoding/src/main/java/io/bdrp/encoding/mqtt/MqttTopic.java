package io.bdrp.encoding.mqtt;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * MQTT topic names and topic filters in bdrp terms (docs/mqtt.md, "The mapping").
 *
 * <p>A topic name becomes attributes of the message ({@link #put}): the whole name ({@value
 * #TOPIC}), its number of levels ({@value #LEVELS}), whether it starts with {@code $} ({@value
 * #DOLLAR}) and each of its first {@link #MAX_LEVELS} levels ({@value #LEVEL}{@code 0}, {@value
 * #LEVEL}{@code 1}, ...). A topic filter becomes a predicate over those attributes ({@link
 * #filter}) that matches exactly the topics MQTT's matching rules (MQTT 3.1.1 and 5 §4.7) let the
 * filter match, so that the routers' content-based matching is MQTT's topic matching.
 *
 * <p>Levels are the parts between {@code /} separators, empty ones included: {@code "a/b"} has 2,
 * {@code "a/"} has 2 ({@code "a"} and {@code ""}), {@code "/"} has 2, {@code "a"} has 1. Names and
 * filters are compared as they are, with no normalisation [MQTT-4.7.3-4]. Stateless.
 */
public final class MqttTopic {
  /**
   * Levels a filter with wildcards may name (a trailing {@code #} not counted); the first this many
   * levels of a topic are attributes.
   */
  public static final int MAX_LEVELS = 64;

  /** String attribute: the whole topic name. */
  public static final String TOPIC = "mqtt.topic";

  /** Integer attribute: the number of levels ({@code "a/b"} 2, {@code "a/"} 2, {@code "/"} 2). */
  public static final String LEVELS = "mqtt.levels";

  /** Boolean attribute: the topic name starts with {@code $}. */
  public static final String DOLLAR = "mqtt.dollar";

  /**
   * Prefix of the string attributes that hold the levels: {@code mqtt.level.0} is the first level,
   * {@code ""} for an empty level; only the first {@link #MAX_LEVELS} levels have one.
   */
  public static final String LEVEL = "mqtt.level.";

  /** Most UTF-8 bytes in a topic name or filter [MQTT-4.7.3-3]. */
  public static final int MAX_BYTES = 65_535;

  private static final String[] LEVEL_NAMES = new String[MAX_LEVELS];

  static {
    for (int i = 0; i < MAX_LEVELS; i++) {
      LEVEL_NAMES[i] = LEVEL + i;
    }
  }

  private MqttTopic() {}

  /** The attribute name of level {@code i} (0-based, below {@link #MAX_LEVELS}). */
  public static String levelName(int i) {
    return LEVEL_NAMES[i];
  }

  /**
   * Checks a PUBLISH topic name as MQTT does: non-empty [MQTT-4.7.3-1], no wildcard {@code +} or
   * {@code #} [MQTT-4.7.0-1] (3.1.1: [MQTT-4.7.1-1]), no U+0000 [MQTT-4.7.3-2], well-formed UTF-16
   * so that it is well-formed UTF-8 [MQTT-1.5.4-1], at most 65,535 UTF-8 bytes [MQTT-4.7.3-3].
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static void checkName(String topic) {
    checkCommon(topic, "topic name");
    int plus = topic.indexOf('+');
    int hash = topic.indexOf('#');
    if (plus >= 0 || hash >= 0) {
      int at = plus < 0 ? hash : (hash < 0 ? plus : Math.min(plus, hash));
      throw new IllegalArgumentException(
          "topic name has the wildcard '"
              + topic.charAt(at)
              + "' at index "
              + at
              + ": wildcards are only for topic filters");
    }
  }

  /** Checks what names and filters share: present, non-empty, no U+0000, well-formed, size. */
  private static void checkCommon(String s, String what) {
    if (s == null) {
      throw new IllegalArgumentException(what + " is null");
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException(what + " is empty: it must be at least one character");
    }
    int nul = s.indexOf('\u0000');
    if (nul >= 0) {
      throw new IllegalArgumentException(what + " has the null character U+0000 at index " + nul);
    }
    int bad = Strings.firstUnpairedSurrogate(s);
    if (bad >= 0) {
      throw new IllegalArgumentException(
          what + " has an unpaired surrogate at index " + bad + " (not well-formed UTF-8)");
    }
    int bytes = Strings.utf8Length(s);
    if (bytes > MAX_BYTES) {
      throw new IllegalArgumentException(
          what + " is " + bytes + " bytes of UTF-8, more than the limit of " + MAX_BYTES);
    }
  }

  /**
   * Adds the topic's attributes to {@code b}: {@value #TOPIC}, {@value #LEVELS}, {@value #DOLLAR}
   * and {@value #LEVEL}{@code i} for each of the first {@link #MAX_LEVELS} levels.
   *
   * @return {@code b}
   * @throws IllegalArgumentException if the topic is not a valid topic name ({@link #checkName}) or
   *     {@code b} already has one of these attributes
   */
  public static Message.Builder put(Message.Builder b, String topic) {
    checkName(topic);
    b.put(TOPIC, topic);
    b.put(DOLLAR, topic.charAt(0) == '$');
    int levels = 0;
    int start = 0;
    while (true) {
      int slash = topic.indexOf('/', start);
      int end = slash < 0 ? topic.length() : slash;
      if (levels < MAX_LEVELS) {
        b.put(LEVEL_NAMES[levels], topic.substring(start, end));
      }
      levels++;
      if (slash < 0) {
        break;
      }
      start = slash + 1;
    }
    b.put(LEVELS, levels);
    return b;
  }

  /** The topic of a message: its {@value #TOPIC} attribute if that is a string, else null. */
  public static String of(Message m) {
    Value v = m.get(TOPIC);
    return v != null && v.type() == ValueType.STRING ? v.asString() : null;
  }

  /**
   * The predicate that matches exactly the messages whose topic (as {@link #put} wrote it) the MQTT
   * topic filter {@code filter} matches:
   *
   * <ul>
   *   <li>a filter without wildcards matches that one topic: {@code mqtt.topic = filter};
   *   <li>{@code +} matches any one level, empty included; every other level must be equal: {@code
   *       mqtt.level.i = "level"} [MQTT-4.7.1-2];
   *   <li>without {@code #} the topic has the filter's number of levels ({@code mqtt.levels = n});
   *       with a trailing {@code #} at least the levels before it ({@code mqtt.levels >= k}),
   *       because {@code #} matches its parent level and any number of child levels [MQTT-4.7.1-1];
   *       that bound is left out where an equality on level {@code k-1} already implies it, and for
   *       {@code #} alone;
   *   <li>a filter that starts with {@code +} or {@code #} does not match a topic starting with
   *       {@code $}: {@code mqtt.dollar = false} [MQTT-4.7.2-1].
   * </ul>
   *
   * @throws IllegalArgumentException for an invalid filter, naming why: empty [MQTT-4.7.3-1], with
   *     U+0000 [MQTT-4.7.3-2], over 65,535 UTF-8 bytes [MQTT-4.7.3-3], a {@code #} that is not a
   *     whole last level [MQTT-4.7.1-1], a {@code +} that is not a whole level [MQTT-4.7.1-2]; or
   *     for a filter with wildcards that names more than {@link #MAX_LEVELS} levels, or whose
   *     predicate would have more than {@link Limits#MAX_CONSTRAINTS} constraints
   */
  public static Predicate filter(String filter) {
    checkCommon(filter, "topic filter");
    List<String> levels = split(filter);
    int n = levels.size();
    boolean multi = false;
    boolean wildcard = false;
    for (int i = 0; i < n; i++) {
      String level = levels.get(i);
      int hash = level.indexOf('#');
      if (hash >= 0) {
        if (!level.equals("#")) {
          throw new IllegalArgumentException(
              "topic filter "
                  + Strings.quote(filter)
                  + ": '#' must be a whole level, on its own or after '/', not in level "
                  + Strings.quote(level));
        }
        if (i != n - 1) {
          throw new IllegalArgumentException(
              "topic filter " + Strings.quote(filter) + ": '#' must be the last level");
        }
        multi = true;
        wildcard = true;
      }
      int plus = level.indexOf('+');
      if (plus >= 0) {
        if (!level.equals("+")) {
          throw new IllegalArgumentException(
              "topic filter "
                  + Strings.quote(filter)
                  + ": '+' must be a whole level, not part of level "
                  + Strings.quote(level));
        }
        wildcard = true;
      }
    }
    if (!wildcard) {
      return Predicate.ofConstraints(Constraint.of(TOPIC, Op.EQ, Value.of(filter)));
    }
    int named = multi ? n - 1 : n;
    if (named > MAX_LEVELS) {
      throw new IllegalArgumentException(
          "topic filter names "
              + named
              + " levels before its end or '#', more than the "
              + MAX_LEVELS
              + " a filter with wildcards may name");
    }
    List<Constraint> cs = new ArrayList<>(named + 2);
    String first = levels.get(0);
    if (first.equals("+") || first.equals("#")) {
      cs.add(Constraint.of(DOLLAR, Op.EQ, Value.FALSE));
    }
    for (int i = 0; i < named; i++) {
      String level = levels.get(i);
      if (!level.equals("+")) {
        cs.add(Constraint.of(LEVEL_NAMES[i], Op.EQ, Value.of(level)));
      }
    }
    if (!multi) {
      cs.add(Constraint.of(LEVELS, Op.EQ, Value.of((long) n)));
    } else if (named > 0 && levels.get(named - 1).equals("+")) {
      cs.add(Constraint.of(LEVELS, Op.GE, Value.of((long) named)));
    }
    if (cs.size() > Limits.MAX_CONSTRAINTS) {
      throw new IllegalArgumentException(
          "topic filter "
              + Strings.quote(filter)
              + " needs "
              + cs.size()
              + " constraints, more than the limit of "
              + Limits.MAX_CONSTRAINTS);
    }
    return Predicate.ofConstraints(cs.toArray(new Constraint[0]));
  }

  /** The levels of a topic name or filter, empty ones included. */
  static List<String> split(String s) {
    List<String> out = new ArrayList<>();
    int start = 0;
    while (true) {
      int slash = s.indexOf('/', start);
      if (slash < 0) {
        out.add(s.substring(start));
        return out;
      }
      out.add(s.substring(start, slash));
      start = slash + 1;
    }
  }
}
