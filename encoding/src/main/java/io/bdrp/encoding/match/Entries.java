package io.bdrp.encoding.match;

/**
 * The entries of each constraint id: in the {@link ExactMatcher}, one per conjunction listing the
 * constraint, {@code conjunction id << 7 | conjunction size}. Tables that count conjunctions
 * directly ({@link IntervalTable}, compact {@link CharTrie.Table}s) copy them when built.
 */
interface Entries {
  /** Number of entries of constraint {@code id}. */
  int count(int id);

  /** Entry {@code j} of constraint {@code id}. */
  int get(int id, int j);

  /** Each constraint is its own only entry (for tests of a table alone). */
  Entries IDS =
      new Entries() {
        @Override
        public int count(int id) {
          return 1;
        }

        @Override
        public int get(int id, int j) {
          return id;
        }
      };
}
