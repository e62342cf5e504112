package io.bdrp.router.mqtt.conformance;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The normative statements of the MQTT specifications that a conformance test checks: {@link #v5}
 * those of MQTT 5.0 (OASIS Standard, 7 March 2019), {@link #v311} those of MQTT 3.1.1 (OASIS
 * Standard, 29 October 2014), each written {@code MQTT-x.y.z-n} as the specification numbers it.
 * The two specifications number their statements independently (MQTT 5's [MQTT-3.1.2-22] is the
 * keep-alive rule, 3.1.1's is the password flag's), so each id belongs to one of the two.
 *
 * <p>Every test of this package carries it, with at least one id, and its {@code @DisplayName}
 * starts with the ids ({@link Statements#prefix}); {@link ConformanceSuiteTest} checks both and
 * keeps docs/mqtt-conformance.md, the table of statements and tests, in step with them.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface Normative {
  /** MQTT 5.0 statements checked. */
  String[] v5() default {};

  /** MQTT 3.1.1 statements checked. */
  String[] v311() default {};
}
