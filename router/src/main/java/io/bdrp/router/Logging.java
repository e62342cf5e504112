package io.bdrp.router;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The router process's logging: Logback configured by {@code io/bdrp/router/logback.xml} (lines to
 * stderr; {@code BDRP_LOG_LEVEL} the level, {@code BDRP_LOG_FORMAT} text or json). The
 * configuration is a named resource, not a {@code logback.xml} at the root of the jar, so that a
 * program embedding the router keeps its own; a process's main method calls {@link #configure(Map)}
 * before anything logs.
 */
public final class Logging {
  private Logging() {}

  /** The Logback configuration of a router process (a class-path resource). */
  public static final String CONFIGURATION = "io/bdrp/router/logback.xml";

  /** The levels {@code BDRP_LOG_LEVEL} may name (Logback's, in any case). */
  public static final List<String> LEVELS =
      List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  /** The formats {@code BDRP_LOG_FORMAT} may name (logback.xml includes logback-FORMAT.xml). */
  public static final List<String> FORMATS = List.of("text", "json");

  /**
   * Why {@code env}'s {@code BDRP_LOG_LEVEL} or {@code BDRP_LOG_FORMAT} is refused (one line for
   * stderr), or null when both are unset or valid.
   */
  private static String refusal(Map<String, String> env) {
    String level = env.get("BDRP_LOG_LEVEL");
    String refused =
        refused(
            "BDRP_LOG_LEVEL",
            level,
            level == null ? null : level.strip().toUpperCase(Locale.ROOT),
            LEVELS,
            "a log level");
    if (refused == null) {
      String format = env.get("BDRP_LOG_FORMAT");
      refused = refused("BDRP_LOG_FORMAT", format, format, FORMATS, "a log format");
    }
    return refused;
  }

  /**
   * Checks {@code env}'s {@code BDRP_LOG_*} settings and, when they are valid, makes Logback read
   * {@link #CONFIGURATION} when it starts, unless {@code -Dlogback.configurationFile} names
   * another. Call before the first logger is made.
   *
   * @return null, or the line refusing a setting (nothing is configured then)
   */
  public static String configure(Map<String, String> env) {
    String refused = refusal(env);
    if (refused == null && System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", CONFIGURATION);
    }
    return refused;
  }

  /** Null when {@code value} is unset or, as {@code normalised}, one of {@code allowed}. */
  private static String refused(
      String variable, String value, String normalised, List<String> allowed, String what) {
    if (value == null || allowed.contains(normalised)) {
      return null;
    }
    return "bdrp: "
        + variable
        + "="
        + value
        + " is not "
        + what
        + " (one of "
        + String.join(", ", allowed)
        + ")";
  }
}
