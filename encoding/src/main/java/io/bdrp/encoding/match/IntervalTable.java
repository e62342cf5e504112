package io.bdrp.encoding.match;

import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.TreeSet;

/**
 * The ordered constraints ({@code = != < <= > >=}) of one attribute name and one type family
 * (numbers or strings), answered by one binary search. The distinct operands p<sub>0</sub> &lt; …
 * &lt; p<sub>m-1</sub> of all six operators split the line into 2m + 1 elementary intervals:
 * interval 2i is the open gap just below p<sub>i</sub> (interval 2m the gap above p<sub>m-1</sub>)
 * and interval 2i + 1 is the point p<sub>i</sub>. Every value of one interval satisfies the same
 * constraints, so each interval keeps, contiguous in one array, the entries of the conjunctions
 * listing those constraints (the matcher's {@code id << 7 | size}, one per conjunction and
 * constraint): matching a value is a search for its interval and a walk along that list, which
 * counts conjunctions directly, instead of one search per operator and a look at each constraint's
 * list of conjunctions.
 *
 * <p>The lists overlap (a {@code <} constraint is in every interval below its operand), so the
 * table can grow with the square of the operands; {@link #build} declines, returning null, when it
 * would hold each of its constraints' entries more than {@link #MAX_COPIES_PER_ENTRY} times on
 * average, beyond {@link #SLACK_ENTRIES}, and the caller then searches each operator's {@link
 * SortedOperands} instead. The table must be rebuilt when a conjunction joins or leaves one of its
 * constraints.
 *
 * <p>Numbers compare exactly, integers with doubles, as in {@link Value#compareTo}: when every
 * operand and the value are integers the search compares longs; otherwise it compares doubles and
 * settles ties of magnitude 2<sup>53</sup> and above, where a double may stand for several longs,
 * with {@link Value#compareTo}. Strings compare by code point. Immutable: rebuilt by {@link
 * NameIndex} at the first match after a change; owned by the thread that owns the {@link
 * ExactMatcher}.
 */
final class IntervalTable {
  /** Copies a table may hold of each entry of its constraints, on average, beyond the slack. */
  static final int MAX_COPIES_PER_ENTRY = 64;

  /** Entries any table may hold, whatever its number of constraints. */
  static final int SLACK_ENTRIES = 4096;

  /** 2^53: below it in magnitude every long is exactly a double. */
  private static final double EXACT = 9.007199254740992E15;

  private final ValueType family; // STRING, or INTEGER for numbers
  private final Value[] keys; // the distinct operands, ascending
  private final long[] longs; // the operands as longs when all are integers, else null
  private final double[] approx; // numbers: the operands as doubles (rounded)
  private final String[] strings; // strings: the operands
  // The entries of interval k are list[start[k]] to list[start[k + 1] - 1].
  private final int[] start;
  private final int[] list;

  private IntervalTable(ValueType family, Value[] keys, int[] start, int[] list) {
    this.family = family;
    this.keys = keys;
    this.start = start;
    this.list = list;
    int m = keys.length;
    if (family == ValueType.STRING) {
      strings = new String[m];
      for (int i = 0; i < m; i++) {
        strings[i] = keys[i].asString();
      }
      approx = null;
      longs = null;
    } else {
      strings = null;
      approx = new double[m];
      boolean allLongs = true;
      for (int i = 0; i < m; i++) {
        approx[i] = keys[i].toDouble();
        allLongs &= keys[i].type() == ValueType.INTEGER;
      }
      if (allLongs) {
        longs = new long[m];
        for (int i = 0; i < m; i++) {
          longs[i] = keys[i].asLong();
        }
      } else {
        longs = null;
      }
    }
  }

  /**
   * The table of the constraints in {@code ops} (indexed EQ, NE, LT, LE, GT, GE as in {@link
   * NameIndex}; null or empty entries allowed; each flattened), all of one type family, holding
   * {@code entries} of each; or null when the table would hold more than {@code maxIds} entries.
   */
  static IntervalTable build(SortedOperands[] ops, ValueType family, Entries entries, long maxIds) {
    TreeSet<Value> all = new TreeSet<>(); // Value.compareTo: numerically equal operands merge
    int constraints = 0;
    for (SortedOperands s : ops) {
      if (s != null) {
        for (int i = 0; i < s.size; i++) {
          all.add(s.keys[i]);
        }
        constraints += s.size;
      }
    }
    Value[] keys = all.toArray(new Value[0]);
    int m = keys.length;
    int intervals = 2 * m + 1;
    // Each constraint covers at most two runs of intervals, [from, to) pairs; count them first.
    int[] from = new int[2 * constraints];
    int[] to = new int[2 * constraints];
    int[] owner = new int[2 * constraints];
    int runs = 0;
    long total = 0;
    for (int op = 0; op < ops.length; op++) {
      SortedOperands s = ops[op];
      if (s == null) {
        continue;
      }
      int r = 0; // rank of s.keys[i] among keys: both are ascending, so walk them together
      for (int i = 0; i < s.size; i++) {
        while (keys[r].compareTo(s.keys[i]) < 0) {
          r++;
        }
        int point = 2 * r + 1;
        int id = s.ids[i];
        switch (op) {
          case EQ -> runs = run(from, to, owner, runs, point, point + 1, id);
          case NE -> {
            runs = run(from, to, owner, runs, 0, point, id);
            runs = run(from, to, owner, runs, point + 1, intervals, id);
          }
          case LT -> runs = run(from, to, owner, runs, 0, point, id);
          case LE -> runs = run(from, to, owner, runs, 0, point + 1, id);
          case GT -> runs = run(from, to, owner, runs, point + 1, intervals, id);
          case GE -> runs = run(from, to, owner, runs, point, intervals, id);
          default -> throw new IllegalArgumentException("operator slot " + op);
        }
      }
    }
    int[] weight = new int[runs]; // entries of the run's constraint
    for (int j = 0; j < runs; j++) {
      weight[j] = entries.count(owner[j]);
      total += (long) (to[j] - from[j]) * weight[j];
    }
    if (total > maxIds) {
      return null;
    }
    // Lengths by a difference array, then starts by prefix sums, then fill run by run.
    int[] start = new int[intervals + 1];
    for (int j = 0; j < runs; j++) {
      start[from[j]] += weight[j];
      start[to[j]] -= weight[j];
    }
    int len = 0;
    int offset = 0;
    for (int k = 0; k < intervals; k++) {
      len += start[k];
      start[k] = offset;
      offset += len;
    }
    start[intervals] = offset;
    int[] list = new int[offset];
    int[] fill = java.util.Arrays.copyOf(start, intervals);
    for (int j = 0; j < runs; j++) {
      for (int k = from[j]; k < to[j]; k++) {
        for (int e = 0; e < weight[j]; e++) {
          list[fill[k]++] = entries.get(owner[j], e);
        }
      }
    }
    return new IntervalTable(family, keys, start, list);
  }

  private static final int EQ = 0;
  private static final int NE = 1;
  private static final int LT = 2;
  private static final int LE = 3;
  private static final int GT = 4;
  private static final int GE = 5;

  private static int run(int[] from, int[] to, int[] owner, int runs, int f, int t, int id) {
    if (f < t) {
      from[runs] = f;
      to[runs] = t;
      owner[runs] = id;
      return runs + 1;
    }
    return runs;
  }

  /** Number of entries held, over all intervals. */
  int entryCount() {
    return list.length;
  }

  /** Number of distinct operands. */
  int operandCount() {
    return keys.length;
  }

  /** The interval of {@code x}, a value of this table's type family. */
  int interval(Value x) {
    int m = keys.length;
    int lo = 0;
    int hi = m;
    if (family == ValueType.STRING) {
      String xs = x.asString();
      String[] a = strings;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        int c = Strings.compareCodePoints(a[mid], xs);
        if (c < 0) {
          lo = mid + 1;
        } else if (c > 0) {
          hi = mid;
        } else {
          return 2 * mid + 1;
        }
      }
      return 2 * lo;
    }
    long[] ls = longs;
    if (ls != null && x.type() == ValueType.INTEGER) {
      long xl = x.asLong();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        long k = ls[mid];
        if (k < xl) {
          lo = mid + 1;
        } else if (k > xl) {
          hi = mid;
        } else {
          return 2 * mid + 1;
        }
      }
      return 2 * lo;
    }
    double xd = x.toDouble();
    boolean exact = Math.abs(xd) < EXACT;
    double[] a = approx;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      double k = a[mid];
      // Rounding to double keeps order, so unequal doubles decide; equal ones below 2^53 are
      // equal numbers, above they may differ in the low bits of a long.
      int c = k < xd ? -1 : (k > xd ? 1 : (exact ? 0 : keys[mid].compareTo(x)));
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid;
      } else {
        return 2 * mid + 1;
      }
    }
    return 2 * lo;
  }

  /**
   * Counts in {@code m} every conjunction of every constraint that {@code x} satisfies. Allocates
   * nothing.
   */
  void report(Value x, ExactMatcher m) {
    int k = interval(x);
    int[] a = list;
    // One contiguous run: the loop reads entries in order and only the counters are scattered.
    for (int i = start[k], end = start[k + 1]; i < end; i++) {
      m.count(a[i]);
    }
  }

  /** The entries of interval {@code k}, for tests. */
  int[] entriesOf(int k) {
    return java.util.Arrays.copyOfRange(list, start[k], start[k + 1]);
  }
}
