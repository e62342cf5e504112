package io.bdrp.encoding.mqtt;

import java.util.Objects;

/**
 * A shared subscription as an MQTT client writes it (MQTT 5 §4.8.2): {@code $share/}, the share
 * name, {@code /}, and a subscription ({@link MqttSubscription}: a topic filter, optionally
 * followed by {@code ?} and a content filter). For example {@code
 * $share/workers/jobs/+?mqtt.user.size > 10} has the share name {@code workers} and the
 * subscription {@code jobs/+?mqtt.user.size > 10}. The share name is everything between {@code
 * $share/} and the next {@code /}; it has at least one character [MQTT-4.8.2-1] and no {@code +} or
 * {@code #} [MQTT-4.8.2-2]. Immutable.
 *
 * @param shareName the share name
 * @param subscription the topic filter and content filter after the share name
 */
public record MqttShared(String shareName, MqttSubscription subscription) {
  /** What every shared subscription starts with. */
  public static final String PREFIX = "$share/";

  public MqttShared {
    Objects.requireNonNull(shareName, "shareName");
    Objects.requireNonNull(subscription, "subscription");
    checkShareName(shareName);
  }

  /** Whether {@code text} is written as a shared subscription (starts with {@value #PREFIX}). */
  public static boolean isShared(String text) {
    return text != null && text.startsWith(PREFIX);
  }

  /**
   * Parses {@code $share/ShareName/filter} or {@code $share/ShareName/filter?predicate}.
   *
   * @throws IllegalArgumentException for text that does not start with {@value #PREFIX}, a share
   *     name that is empty or has {@code +} or {@code #}, no {@code /} after the share name, or a
   *     subscription that {@link MqttSubscription#parse} refuses; naming why
   */
  public static MqttShared parse(String text) {
    if (!isShared(text)) {
      throw new IllegalArgumentException("a shared subscription starts with " + PREFIX);
    }
    int slash = text.indexOf('/', PREFIX.length());
    if (slash < 0) {
      throw new IllegalArgumentException(
          "a shared subscription has a topic filter after its share name: "
              + PREFIX
              + "ShareName/filter");
    }
    String shareName = text.substring(PREFIX.length(), slash);
    checkShareName(shareName);
    return new MqttShared(shareName, MqttSubscription.parse(text.substring(slash + 1)));
  }

  /** The text of the shared subscription, as {@link #parse} reads it. */
  public String text() {
    return PREFIX + shareName + '/' + subscription.text();
  }

  private static void checkShareName(String shareName) {
    if (shareName.isEmpty()) {
      throw new IllegalArgumentException("empty share name [MQTT-4.8.2-1]");
    }
    for (int i = 0; i < shareName.length(); i++) {
      char c = shareName.charAt(i);
      if (c == '/' || c == '+' || c == '#') {
        throw new IllegalArgumentException(
            "share name " + shareName + " has '" + c + "' [MQTT-4.8.2-2]");
      }
    }
  }
}
