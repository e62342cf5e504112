package io.bdrp.encoding.match;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;

/**
 * The index of every constraint on one attribute name. Given the message's value for that name, it
 * reports to the matcher the id of each constraint the value satisfies, without looking at the ones
 * it does not satisfy (beyond a binary search, a table lookup or a trie walk):
 *
 * <ul>
 *   <li>{@code exists}: one id, reported for a value of any type;
 *   <li>booleans: one id for {@code = true}, one for {@code = false} ({@code !=} on booleans is
 *       canonicalised to {@code =});
 *   <li>numbers and strings, {@code = != < <= > >=}: one binary search for the value's interval
 *       among all their operands, whose precomputed list holds every satisfied constraint ({@link
 *       IntervalTable}); when that table would be too large, one search per operator in its sorted
 *       operands ({@link SortedOperands}), where the satisfied ones are contiguous ranges. String
 *       equality is an open-addressing table lookup ({@link StringIntMap}) instead;
 *   <li>{@code prefix} and {@code suffix}: tries walked along the value from the front or the back;
 *   <li>{@code contains}: an Aho–Corasick automaton run once over the value.
 * </ul>
 *
 * The three tries are compiled into flat tables ({@link CharTrie.Table}) at the first match after a
 * change, so that a step is one array read; a trie whose table would be too large is walked as it
 * is. Interval tables and compact trie tables hold the entries of the conjunctions listing each
 * constraint ({@link Entries}) and count them directly, without the matcher's per-constraint lists;
 * they are rebuilt also when a conjunction joins or leaves one of their constraints ({@link
 * #conjunctionsChanged}).
 *
 * <p>A constraint whose operand is of another type family than the value is never reported. Owned
 * by the thread that owns the {@link ExactMatcher}.
 */
final class NameIndex {
  private static final int EQ = 0;
  private static final int NE = 1;
  private static final int LT = 2;
  private static final int LE = 3;
  private static final int GT = 4;
  private static final int GE = 5;

  private int count;
  private int existsId = -1;
  private int trueId = -1;
  private int falseId = -1;
  private final SortedOperands[] numbers = new SortedOperands[6];
  private final SortedOperands[] strings = new SortedOperands[6]; // EQ unused: see stringEq
  private StringIntMap stringEq;

  // String equality compiled for matching: each operand maps to where its conjunctions' entries
  // start in eqEntries (their number, then the entries), so that a hit counts them without the
  // matcher's per-constraint lists; rebuilt at the first match after a change, null when tables
  // are off (tests) or there is no operand.
  private StringIntMap eqCompiled;
  private int[] eqEntries;
  private boolean eqDirty;
  private CharTrie prefixes;
  private CharTrie suffixes;
  private CharTrie contains;

  /** True when sorted arrays or automaton links must be rebuilt before the next lookup. */
  private boolean dirty;

  /** True when the numeric (string) ordered operands changed since their table was built. */
  private boolean numbersDirty;

  private boolean stringsDirty;

  /** True when a trie changed since it was compiled. */
  private boolean triesDirty;

  // Interval tables of the ordered operators, rebuilt at the first match after a change; null
  // when there are no such constraints or the table would be too large, in which case each
  // operator's sorted operands are searched.
  private IntervalTable numberTable;
  private IntervalTable stringTable;

  // Compiled copies of the tries, rebuilt at the first match after a change; null when a trie
  // is empty or too large to compile, in which case the trie itself is walked.
  private CharTrie.Table prefixTable;
  private CharTrie.Table suffixTable;
  private CharTrie.Table containsTable;

  /** False when interval tables are never built (for tests of the path without them). */
  private final boolean intervalTables;

  NameIndex(boolean intervalTables) {
    this.intervalTables = intervalTables;
  }

  /** Number of constraints indexed here. */
  int size() {
    return count;
  }

  void add(Constraint k, int id) {
    count++;
    Op op = k.op();
    if (op == Op.EXISTS) {
      existsId = id;
      return;
    }
    Value v = k.value();
    switch (v.type()) {
      case BOOLEAN -> {
        requireEq(k);
        if (v.asBoolean()) {
          trueId = id;
        } else {
          falseId = id;
        }
      }
      case INTEGER, DOUBLE -> {
        int slot = slot(op);
        if (numbers[slot] == null) {
          numbers[slot] = new SortedOperands();
        }
        numbers[slot].add(v, id);
        dirty = true;
        numbersDirty = true;
      }
      case STRING -> {
        String s = v.asString();
        switch (op) {
          case EQ -> {
            if (stringEq == null) {
              stringEq = new StringIntMap();
            }
            stringEq.put(s, id);
            dirty = true;
            eqDirty = true;
          }
          case PREFIX -> {
            if (prefixes == null) {
              prefixes = new CharTrie(false);
            }
            prefixes.put(s, id);
            dirty = true;
            triesDirty = true;
          }
          case SUFFIX -> {
            if (suffixes == null) {
              suffixes = new CharTrie(true);
            }
            suffixes.put(s, id);
            dirty = true;
            triesDirty = true;
          }
          case CONTAINS -> {
            if (contains == null) {
              contains = new CharTrie(false);
            }
            contains.put(s, id);
            dirty = true;
            triesDirty = true;
          }
          default -> {
            int slot = slot(op);
            if (strings[slot] == null) {
              strings[slot] = new SortedOperands();
            }
            strings[slot].add(v, id);
            dirty = true;
            stringsDirty = true;
          }
        }
      }
    }
  }

  void remove(Constraint k) {
    count--;
    Op op = k.op();
    if (op == Op.EXISTS) {
      existsId = -1;
      return;
    }
    Value v = k.value();
    switch (v.type()) {
      case BOOLEAN -> {
        if (v.asBoolean()) {
          trueId = -1;
        } else {
          falseId = -1;
        }
      }
      case INTEGER, DOUBLE -> {
        numbers[slot(op)].remove(v);
        dirty = true;
        numbersDirty = true;
      }
      case STRING -> {
        String s = v.asString();
        switch (op) {
          case EQ -> {
            stringEq.remove(s);
            dirty = true;
            eqDirty = true;
          }
          case PREFIX -> {
            prefixes.remove(s);
            dirty = true;
            triesDirty = true;
          }
          case SUFFIX -> {
            suffixes.remove(s);
            dirty = true;
            triesDirty = true;
          }
          case CONTAINS -> {
            contains.remove(s);
            dirty = true;
            triesDirty = true;
          }
          default -> {
            strings[slot(op)].remove(v);
            dirty = true;
            stringsDirty = true;
          }
        }
      }
    }
  }

  private static void requireEq(Constraint k) {
    if (k.op() != Op.EQ) {
      throw new IllegalArgumentException("boolean constraint is not canonical: " + k);
    }
  }

  private static int slot(Op op) {
    return switch (op) {
      case EQ -> EQ;
      case NE -> NE;
      case LT -> LT;
      case LE -> LE;
      case GT -> GT;
      case GE -> GE;
      default -> throw new IllegalArgumentException("operator " + op.symbol() + " is not ordered");
    };
  }

  /** Rebuilds whatever lags behind the latest changes; allocates only after a change. */
  private void refresh(Entries entries) {
    for (int i = 0; i < 6; i++) {
      if (numbers[i] != null && numbers[i].dirty) {
        numbers[i].flatten();
      }
      if (strings[i] != null && strings[i].dirty) {
        strings[i].flatten();
      }
    }
    if (contains != null && contains.linksDirty) {
      contains.link();
    }
    if (numbersDirty) {
      numberTable = intervalTables ? table(numbers, ValueType.INTEGER, entries) : null;
      numbersDirty = false;
    }
    if (stringsDirty) {
      stringTable = intervalTables ? table(strings, ValueType.STRING, entries) : null;
      stringsDirty = false;
    }
    if (eqDirty) {
      compileEq(entries);
      eqDirty = false;
    }
    if (triesDirty) {
      prefixTable =
          prefixes == null || prefixes.isEmpty() ? null : prefixes.compile(false, entries);
      suffixTable =
          suffixes == null || suffixes.isEmpty() ? null : suffixes.compile(false, entries);
      containsTable =
          contains == null || contains.isEmpty() ? null : contains.compile(true, entries);
      triesDirty = false;
    }
    dirty = false;
  }

  /**
   * The interval table of one family's ordered operators, or null when they have no constraint or
   * the table would pass its cap ({@link IntervalTable#MAX_COPIES_PER_ENTRY} copies of each entry
   * on average, plus {@link IntervalTable#SLACK_ENTRIES}).
   */
  private static IntervalTable table(SortedOperands[] ops, ValueType family, Entries entries) {
    long n = 0;
    for (SortedOperands s : ops) {
      for (int i = 0; s != null && i < s.size; i++) {
        n += entries.count(s.ids[i]);
      }
    }
    if (n == 0) {
      return null;
    }
    return IntervalTable.build(
        ops, family, entries, n * IntervalTable.MAX_COPIES_PER_ENTRY + IntervalTable.SLACK_ENTRIES);
  }

  /**
   * The conjunctions listing constraint {@code k} (indexed here) changed: an interval table holding
   * them must be rebuilt.
   */
  void conjunctionsChanged(Constraint k) {
    Op op = k.op();
    ValueType t = op == Op.EXISTS ? null : k.value().type();
    if (t == ValueType.INTEGER || t == ValueType.DOUBLE) {
      numbersDirty = true; // every numeric operator is in the table
      dirty = true;
    } else if (t == ValueType.STRING && op == Op.EQ) {
      eqDirty = true;
      dirty = true;
    } else if (t == ValueType.STRING
        && (op == Op.NE || op == Op.LT || op == Op.LE || op == Op.GT || op == Op.GE)) {
      stringsDirty = true;
      dirty = true;
    } else if (op == Op.PREFIX || op == Op.SUFFIX || op == Op.CONTAINS) {
      triesDirty = true; // compact tables hold the entries
      dirty = true;
    }
  }

  /** The current interval table of the numeric operators (null if none), for tests. */
  IntervalTable numberTable(ExactMatcher m) {
    if (dirty) {
      refresh(m.entries);
    }
    return numberTable;
  }

  /** Reports to {@code m} every constraint that {@code v} satisfies. Allocates nothing. */
  void collect(Value v, ExactMatcher m) {
    if (dirty) {
      refresh(m.entries);
    }
    if (existsId >= 0) {
      m.satisfied(existsId);
    }
    ValueType t = v.type();
    if (t == ValueType.STRING) {
      collectString(v, m);
    } else if (t == ValueType.BOOLEAN) {
      int id = v.asBoolean() ? trueId : falseId;
      if (id >= 0) {
        m.satisfied(id);
      }
    } else if (numberTable != null) {
      numberTable.report(v, m);
    } else {
      collectOrdered(numbers, v, m);
    }
  }

  /** Rebuilds {@link #eqCompiled} and {@link #eqEntries} from {@link #stringEq}. */
  private void compileEq(Entries entries) {
    if (!intervalTables || stringEq == null || stringEq.size() == 0) {
      eqCompiled = null;
      eqEntries = null;
      return;
    }
    int[] size = {0};
    stringEq.forEach((s, id) -> size[0] += 1 + entries.count(id));
    int[] pool = new int[size[0]];
    StringIntMap compiled = new StringIntMap();
    int[] at = {0};
    stringEq.forEach(
        (s, id) -> {
          int n = entries.count(id);
          compiled.put(s, at[0]);
          pool[at[0]] = n;
          for (int j = 0; j < n; j++) {
            pool[at[0] + 1 + j] = entries.get(id, j);
          }
          at[0] += 1 + n;
        });
    eqCompiled = compiled;
    eqEntries = pool;
  }

  private void collectString(Value v, ExactMatcher m) {
    String s = v.asString();
    if (eqCompiled != null) {
      int e = eqCompiled.get(s);
      if (e >= 0) {
        int[] pool = eqEntries;
        // The operand's conjunctions, in one run of the pool: no constraint list to follow.
        for (int j = e + 1, end = j + pool[e]; j < end; j++) {
          m.count(pool[j]);
        }
      }
    } else if (stringEq != null) {
      int id = stringEq.get(s);
      if (id >= 0) {
        m.satisfied(id);
      }
    }
    if (stringTable != null) {
      stringTable.report(v, m);
    } else {
      collectOrdered(strings, v, m);
    }
    if (prefixTable != null) {
      walk(prefixTable, s, false, m);
    } else if (prefixes != null) {
      CharTrie.Node n = prefixes.root;
      int len = s.length();
      for (int i = 0; ; i++) {
        if (n.id >= 0) {
          m.satisfied(n.id);
        }
        if (i == len || (n = n.child(s.charAt(i))) == null) {
          break;
        }
      }
    }
    if (suffixTable != null) {
      walk(suffixTable, s, true, m);
    } else if (suffixes != null) {
      CharTrie.Node n = suffixes.root;
      for (int i = s.length() - 1; ; i--) {
        if (n.id >= 0) {
          m.satisfied(n.id);
        }
        if (i < 0 || (n = n.child(s.charAt(i))) == null) {
          break;
        }
      }
    }
    if (containsTable != null) {
      scan(containsTable, s, m);
    } else if (contains != null) {
      collectContains(s, m);
    }
  }

  /**
   * Walks a compiled prefix ({@code fromEnd} false) or suffix trie along {@code s}, reporting the
   * constraint of every row passed: each is an operand that {@code s} starts (ends) with.
   */
  private static void walk(CharTrie.Table t, String s, boolean fromEnd, ExactMatcher m) {
    if (t.compact) {
      walkCompact(t, s, fromEnd, m);
      return;
    }
    int[] rows = t.rows;
    int at = 0;
    int len = s.length();
    for (int i = 0; ; i++) {
      int id = rows[at + CharTrie.Table.ID];
      if (id >= 0) {
        m.satisfied(id);
      }
      if (i == len) {
        return;
      }
      int col = t.column(s.charAt(fromEnd ? len - 1 - i : i));
      if (col == 0 || (at = rows[at + 1 + col]) < 0) {
        return;
      }
    }
  }

  /** {@link #walk} over a compact table: the child of a column is found by its rank in the mask. */
  private static void walkCompact(CharTrie.Table t, String s, boolean fromEnd, ExactMatcher m) {
    int[] rows = t.rows;
    int stride = t.stride;
    int at = 0;
    int len = s.length();
    int[] pool = t.entries;
    for (int i = 0; ; i++) {
      int e = rows[at + CharTrie.Table.ID];
      if (e >= 0) {
        // The operand's conjunctions, counted straight from the table's pool.
        for (int j = e + 2, end = j + pool[e + 1]; j < end; j++) {
          m.count(pool[j]);
        }
      }
      if (i == len) {
        return;
      }
      int col = t.column(s.charAt(fromEnd ? len - 1 - i : i));
      int mask = rows[at + CharTrie.Table.MASK];
      int bit = 1 << (col - 1);
      if (col == 0 || (mask & bit) == 0) {
        return;
      }
      at = rows[at + CharTrie.Table.FIRST] + Integer.bitCount(mask & (bit - 1)) * stride;
    }
  }

  /**
   * Runs the compiled {@code contains} automaton over {@code s}: after each character, the row's
   * own operand and those on its output chain occur in {@code s}; each constraint counts once.
   */
  private static void scan(CharTrie.Table t, String s, ExactMatcher m) {
    if (t.compact) {
      scanCompact(t, s, m);
      return;
    }
    int[] rows = t.rows;
    if (rows[CharTrie.Table.ID] >= 0) {
      m.satisfied(rows[CharTrie.Table.ID]); // contains "" holds on every string
    }
    int at = 0;
    for (int i = 0, len = s.length(); i < len; i++) {
      int col = t.column(s.charAt(i));
      at = col == 0 ? 0 : rows[at + 1 + col];
      int hit = at != 0 && rows[at + CharTrie.Table.ID] >= 0 ? at : rows[at + CharTrie.Table.OUT];
      while (hit >= 0 && m.firstTime(rows[hit + CharTrie.Table.ID])) {
        m.satisfied(rows[hit + CharTrie.Table.ID]);
        hit = rows[hit + CharTrie.Table.OUT];
      }
    }
  }

  /**
   * {@link #scan} over a compact table: a character without a child follows failure rows until one
   * has it or the root is reached, as the object automaton does ({@link #collectContains}).
   */
  private static void scanCompact(CharTrie.Table t, String s, ExactMatcher m) {
    int[] rows = t.rows;
    int[] pool = t.entries;
    int stride = t.stride;
    if (rows[CharTrie.Table.ID] >= 0) {
      countAll(pool, rows[CharTrie.Table.ID], m); // contains "" holds on every string
    }
    int at = 0;
    for (int i = 0, len = s.length(); i < len; i++) {
      int col = t.column(s.charAt(i));
      if (col == 0) {
        at = 0; // no operand holds this character
      } else {
        int bit = 1 << (col - 1);
        while (true) {
          int mask = rows[at + CharTrie.Table.MASK];
          if ((mask & bit) != 0) {
            at = rows[at + CharTrie.Table.FIRST] + Integer.bitCount(mask & (bit - 1)) * stride;
            break;
          }
          if (at == 0) {
            break;
          }
          at = rows[at + CharTrie.Table.FAIL];
        }
      }
      int hit =
          at != 0 && rows[at + CharTrie.Table.ID] >= 0 ? at : rows[at + CharTrie.Table.COMPACT_OUT];
      while (hit >= 0 && m.firstTime(pool[rows[hit + CharTrie.Table.ID]])) {
        countAll(pool, rows[hit + CharTrie.Table.ID], m);
        hit = rows[hit + CharTrie.Table.COMPACT_OUT];
      }
    }
  }

  /** Counts the conjunctions of the operand at {@code e} in a compact table's entry pool. */
  private static void countAll(int[] pool, int e, ExactMatcher m) {
    for (int j = e + 2, end = j + pool[e + 1]; j < end; j++) {
      m.count(pool[j]);
    }
  }

  /**
   * Runs the Aho–Corasick automaton over {@code s}. At each position the constraints ending there
   * are the state's node and its output chain. A constraint already reported for this message is
   * not reported again, and neither is the rest of its chain: every node on it is a suffix of the
   * reported one and was reported together with it. So each constraint counts once however often
   * its operand occurs, and the work is linear in the value plus the number of distinct operands
   * found.
   */
  private void collectContains(String s, ExactMatcher m) {
    CharTrie.Node root = contains.root;
    if (root.id >= 0) {
      m.satisfied(root.id); // contains "" holds on every string
    }
    CharTrie.Node state = root;
    int len = s.length();
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      while (true) {
        CharTrie.Node next = state.child(c);
        if (next != null) {
          state = next;
          break;
        }
        if (state == root) {
          break;
        }
        state = state.fail;
      }
      CharTrie.Node hit = state != root && state.id >= 0 ? state : state.out;
      while (hit != null && m.firstTime(hit.id)) {
        m.satisfied(hit.id);
        hit = hit.out;
      }
    }
  }

  /**
   * The ordered operators over one family's sorted operands. For value {@code x}: {@code x = v} and
   * {@code x != v} split the array at the (at most one) operand equal to {@code x}; {@code x < v}
   * and {@code x <= v} hold for a suffix of the array, {@code x > v} and {@code x >= v} for a
   * prefix.
   */
  private static void collectOrdered(SortedOperands[] ops, Value x, ExactMatcher m) {
    SortedOperands s = ops[EQ];
    if (s != null && s.size > 0) {
      int i = s.lowerBound(x);
      if (i < s.size && s.equalAt(i, x)) {
        m.satisfied(s.ids[i]);
      }
    }
    s = ops[NE];
    if (s != null && s.size > 0) {
      int lo = s.lowerBound(x);
      int hi = s.upperBound(x);
      report(s, 0, lo, m);
      report(s, hi, s.size, m);
    }
    s = ops[LT];
    if (s != null) {
      report(s, s.upperBound(x), s.size, m);
    }
    s = ops[LE];
    if (s != null) {
      report(s, s.lowerBound(x), s.size, m);
    }
    s = ops[GT];
    if (s != null) {
      report(s, 0, s.lowerBound(x), m);
    }
    s = ops[GE];
    if (s != null) {
      report(s, 0, s.upperBound(x), m);
    }
  }

  private static void report(SortedOperands s, int from, int to, ExactMatcher m) {
    int[] ids = s.ids;
    for (int i = from; i < to; i++) {
      m.satisfied(ids[i]);
    }
  }
}
