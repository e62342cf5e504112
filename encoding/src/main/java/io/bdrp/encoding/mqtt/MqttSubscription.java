package io.bdrp.encoding.mqtt;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.PredicateSyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A subscription as an MQTT client writes it: a topic filter, optionally followed by {@code ?} and
 * a predicate of the bdrp predicate language, the content filter; for example {@code
 * sensors/+/temp?mqtt.user.value > 25 && mqtt.user.site = "a"}. The text is split at its first
 * {@code ?}: the topic filter is the part before it, exactly as written, and the predicate the part
 * after it (so a topic filter that itself contains {@code ?} cannot be written this way).
 *
 * <p>{@link #predicate} is the topic filter's predicate ({@link MqttTopic#filter}) AND the content
 * filter, in disjunctive normal form: one conjunction per conjunction of the content filter, each
 * within {@link Limits}. It is an ordinary predicate that bdrp tools show and that routers
 * aggregate like any host's. Immutable.
 *
 * @param topicFilter the MQTT topic filter
 * @param content the content filter; {@link Predicate#ALL} when there is none
 * @param predicate the topic filter's predicate and the content filter
 */
public record MqttSubscription(String topicFilter, Predicate content, Predicate predicate) {

  /**
   * Checks that the predicate is the topic filter's and the content filter's; build one with {@link
   * #parse} or {@link #of}.
   *
   * @throws IllegalArgumentException if it is not
   */
  public MqttSubscription {
    Objects.requireNonNull(topicFilter, "topicFilter");
    Objects.requireNonNull(content, "content");
    Objects.requireNonNull(predicate, "predicate");
    if (!predicate.equals(and(topicFilter, content))) {
      throw new IllegalArgumentException(
          "predicate " + predicate + " is not the topic filter's and the content filter's");
    }
  }

  /**
   * Parses {@code filter} or {@code filter?predicate}.
   *
   * @throws PredicateSyntaxException for a content filter that does not parse; its column counts
   *     from the start of {@code text}
   * @throws IllegalArgumentException for an invalid topic filter ({@link MqttTopic#filter}), an
   *     empty content filter, or a combination beyond {@link Limits}, naming why
   */
  public static MqttSubscription parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("subscription is null");
    }
    int q = text.indexOf('?');
    if (q < 0) {
      return of(text, Predicate.ALL);
    }
    String filter = text.substring(0, q);
    String rest = text.substring(q + 1);
    if (rest.isBlank()) {
      throw new IllegalArgumentException(
          "subscription " + text + ": nothing after '?': write a predicate or leave out the '?'");
    }
    Predicate content;
    try {
      content = Predicate.parse(rest);
    } catch (PredicateSyntaxException e) {
      int shift = text.codePointCount(0, q + 1);
      throw new PredicateSyntaxException(
          e.column() + shift, e.token(), e.problem() + " (in the content filter after '?')");
    }
    return of(filter, content);
  }

  /**
   * The subscription of a topic filter and a content filter.
   *
   * @throws IllegalArgumentException for an invalid topic filter, or a combination beyond {@link
   *     Limits}, naming why
   */
  public static MqttSubscription of(String topicFilter, Predicate content) {
    Predicate p = and(topicFilter, content);
    return new MqttSubscription(topicFilter, content, p);
  }

  /** The topic filter's predicate AND {@code content}, in disjunctive normal form. */
  private static Predicate and(String topicFilter, Predicate content) {
    Predicate topic = MqttTopic.filter(topicFilter);
    if (content.isAll()) {
      return topic;
    }
    List<Constraint> topicConstraints = topic.get(0).constraints();
    List<Conjunction> out = new ArrayList<>(content.size());
    for (Conjunction c : content.conjunctions()) {
      List<Constraint> both = new ArrayList<>(topicConstraints.size() + c.size());
      both.addAll(topicConstraints);
      both.addAll(c.constraints());
      try {
        Conjunction.of(both).ifPresent(out::add);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "topic filter "
                + topicFilter
                + " ("
                + topicConstraints.size()
                + " constraints) and the content filter's conjunction "
                + c
                + " ("
                + c.size()
                + ") make more than the "
                + Limits.MAX_CONSTRAINTS
                + " constraints a conjunction may have",
            e);
      }
    }
    return Predicate.ofConjunctions(out);
  }

  /** True when the message's topic matches the topic filter and the message the content filter. */
  public boolean matches(Message m) {
    return predicate.matches(m);
  }

  /**
   * The subscription as text: the topic filter, and {@code ?} and the content filter's canonical
   * form unless it is {@code true}. {@link #parse} reads it back to an equal subscription when the
   * topic filter has no {@code ?}.
   */
  public String text() {
    return content.isAll() ? topicFilter : topicFilter + "?" + content;
  }
}
