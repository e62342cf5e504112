package io.bdrp.encoding;

import java.util.Set;

/** Words of the predicate language that cannot be used as bare attribute names. */
final class Keywords {
  private static final Set<String> WORDS =
      Set.of("exists", "prefix", "suffix", "contains", "true", "false");

  private Keywords() {}

  static boolean isKeyword(String s) {
    return WORDS.contains(s);
  }
}
