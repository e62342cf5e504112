package io.bdrp.encoding.match;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Objects;
import java.util.function.IntConsumer;

/**
 * The exact matcher of a router's LOCAL-PREDICATES table: it holds each local host's predicate and
 * finds, for a message, every host whose predicate the message satisfies, without evaluating every
 * predicate. Its answer is always the one of {@link Predicate#matches(Message)} on each host.
 *
 * <p><b>Algorithm</b> (the counting algorithm of Carzaniga and Wolf's fast forwarding). Every
 * distinct constraint gets an id; equal constraints of different conjunctions and hosts share one.
 * Every conjunction of every host gets an id, knows its size and its host, and is listed under each
 * of its constraints. For each attribute of the message, the index of that attribute name yields
 * the constraints the value satisfies (one binary search in a table of precomputed answers per
 * interval for the ordered operators, hash lookups, trie walks and an Aho–Corasick scan: see {@code
 * NameIndex}); each satisfied constraint increments the counters of the conjunctions listing it,
 * and a conjunction whose counter reaches its size matches its host. Hosts already matched are
 * skipped. Counters are not cleared between messages: each one carries the number of the message
 * that last wrote it (an epoch stamp), and a stale stamp means zero.
 *
 * <p><b>Changes</b> are incremental: {@link #put} and {@link #remove} touch only the host's own
 * conjunctions and the constraints they use; a constraint leaves the index when its last
 * conjunction goes. Sorted operand arrays, interval tables, compiled tries and Aho–Corasick links
 * of an attribute name are rebuilt at the first match after a change to that name. Freed host
 * slots, conjunction ids and constraint ids are reused.
 *
 * <p><b>Allocation.</b> After warm-up (every attribute name changed since the last match has been
 * seen once), {@link #match(Attributes, IntConsumer)} allocates nothing.
 *
 * <p><b>Threads.</b> Not thread-safe: one thread owns an instance (the router's forwarding thread)
 * and makes every call. A sink must not call back into the matcher it is called from; such a call
 * fails with {@link IllegalStateException}.
 */
public final class ExactMatcher {
  /** A host's entry: its predicate, its slot and the ids of its conjunctions. */
  private static final class HostEntry {
    final int slot;
    Predicate predicate;
    int[] conjunctions;

    HostEntry(int slot, Predicate predicate, int[] conjunctions) {
      this.slot = slot;
      this.predicate = predicate;
      this.conjunctions = conjunctions;
    }
  }

  private static final int[] NO_INTS = new int[0];

  private final HashMap<Integer, HostEntry> hosts = new HashMap<>();
  // Per attribute name, its index: nameSlots maps the name to a slot of nameIndexes. The
  // matching loop looks up every attribute of every message here, so the lookup is the
  // open-addressing table, which follows no node object.
  private final StringIntMap nameSlots = new StringIntMap();
  private NameIndex[] nameIndexes = new NameIndex[8];
  private final IdPool nameSlotPool = new IdPool();
  private final HashMap<Constraint, Integer> constraintIds = new HashMap<>();

  // Host slots: dense numbers for hosts, so that per-host state is array-indexed even when host
  // ids are large.
  private final IdPool slots = new IdPool();
  private int[] slotHost = new int[16];
  private int[] slotEpoch = new int[16];

  // Conjunctions, indexed by conjunction id.
  private final IdPool conjIds = new IdPool();
  // conjCount[c] = epoch << 8 | number of constraints of conjunction c satisfied in that message.
  // Its size travels with every reference to it (see constraintHead) and its host slot, read
  // only when it completes, lives apart in conjSlot: four bytes a conjunction keep the counters
  // of a large router in the core's L2 cache, which is what the counting loop waits on.
  private int[] conjCount = new int[16];
  private int[] conjSlot = new int[16];
  private int[][] conjConstraints = new int[16][];
  // conjPositions[c][k]: where conjunction c sits in the list of its k-th constraint, so that
  // removal from that list is a swap with its last element.
  private int[][] conjPositions = new int[16][];

  // Constraints, indexed by constraint id.
  private final IdPool constraintPool = new IdPool();
  private Constraint[] constraints = new Constraint[16];
  // constraintConjs[id]: the entries of the conjunctions listing constraint id, an entry being
  // conjunction id << 7 | its size, so that counting needs no second read to know when a
  // conjunction is complete.
  private int[][] constraintConjs = new int[16][];
  private int[] constraintConjCount = new int[16];
  // constraintHead[id]: the entry of the only conjunction that lists constraint id (>= 0), or the
  // complement (~n) of the number of entries in constraintConjs[id]. Most constraints belong to
  // one conjunction, so counting them reads one int and skips the list object.
  private int[] constraintHead = new int[16];
  private int[] constraintEpoch = new int[16];

  // Host slots whose predicate is true (a conjunction of no constraints): they match every message
  // without counting, and are reported first.
  private int[] allSlots = new int[4];
  private int allCount;

  // Per-message state.
  private int epoch;
  private IntConsumer sink;
  private int matchedCount;
  private boolean matching;

  // Scratch for match(Attributes, IntConsumer): the name slot of each attribute of the message.
  private final int[] attributeSlots = new int[Limits.MAX_ATTRIBUTES];

  // Scratch for match(Message).
  private int[] collected = new int[16];
  private int collectedCount;
  private final IntConsumer collector = this::collect;

  // False only in tests: no interval tables nor compiled string equality, so that every name takes
  // the paths through each constraint's list (and the per-operator searches of a name whose
  // interval table would be too large).
  private final boolean intervalTables;

  /** An empty matcher. */
  public ExactMatcher() {
    this(true);
  }

  /**
   * An empty matcher; {@code intervalTables} false makes every name search each operator's sorted
   * operands, the path taken when an interval table would be too large, and count string equality
   * through each constraint's list (for tests).
   */
  ExactMatcher(boolean intervalTables) {
    this.intervalTables = intervalTables;
  }

  /**
   * Sets the predicate of {@code host}, replacing the one it had; {@link Predicate#NONE} removes
   * the host. Setting the predicate a host already has changes nothing.
   *
   * @throws IllegalArgumentException if {@code host} is negative
   * @throws NullPointerException if {@code p} is null
   * @throws IllegalStateException if the matcher would hold more than 2^24 hosts or 2^24
   *     conjunctions
   */
  public void put(int host, Predicate p) {
    checkIdle();
    if (host < 0) {
      throw new IllegalArgumentException("host id " + host + " is negative");
    }
    Objects.requireNonNull(p, "predicate");
    if (p.isEmpty()) {
      remove(host);
      return;
    }
    HostEntry e = hosts.get(host);
    if (e != null && e.predicate.equals(p)) {
      return;
    }
    if ((long) conjIds.live() + p.size() > MAX_CONJUNCTIONS) {
      // Checked before any change: the new conjunctions are added before the old ones go.
      throw new IllegalStateException(
          "an exact matcher holds at most " + MAX_CONJUNCTIONS + " conjunctions");
    }
    int slot;
    if (e != null) {
      slot = e.slot;
    } else {
      slot = slots.allocate();
      if (slot >= MAX_HOSTS) {
        slots.release(slot);
        throw new IllegalStateException("an exact matcher holds at most " + MAX_HOSTS + " hosts");
      }
      if (slot >= slotHost.length) {
        slotHost = Arrays.copyOf(slotHost, 2 * slotHost.length);
        slotEpoch = Arrays.copyOf(slotEpoch, slotHost.length);
      }
      slotHost[slot] = host;
      slotEpoch[slot] = 0;
    }
    // Add the new conjunctions before removing the old ones, so that constraints they share stay
    // indexed instead of leaving and coming back.
    int[] fresh = new int[p.size()];
    for (int i = 0; i < fresh.length; i++) {
      fresh[i] = addConjunction(p.get(i), slot);
    }
    if (e != null) {
      for (int c : e.conjunctions) {
        removeConjunction(c);
      }
      e.predicate = p;
      e.conjunctions = fresh;
    } else {
      hosts.put(host, new HostEntry(slot, p, fresh));
    }
  }

  /** Removes {@code host} and its predicate; returns false if it had none. */
  public boolean remove(int host) {
    checkIdle();
    HostEntry e = hosts.remove(host);
    if (e == null) {
      return false;
    }
    for (int c : e.conjunctions) {
      removeConjunction(c);
    }
    slots.release(e.slot);
    return true;
  }

  /** The predicate of {@code host}, or null if it has none. */
  public Predicate predicate(int host) {
    HostEntry e = hosts.get(host);
    return e == null ? null : e.predicate;
  }

  /** Number of hosts with a predicate. */
  public int hostCount() {
    return hosts.size();
  }

  /**
   * Number of indexed conjunctions, over all hosts (equal conjunctions of two hosts count twice).
   */
  public int conjunctionCount() {
    return conjIds.live();
  }

  /**
   * Number of distinct indexed constraints (equal constraints of several conjunctions count once).
   */
  public int constraintCount() {
    return constraintIds.size();
  }

  /**
   * Calls {@code sink} once for each host whose predicate {@code m} satisfies, in no particular
   * order. Allocates nothing after warm-up. The sink must not call back into this matcher.
   *
   * @throws IllegalStateException if called from a sink of this matcher
   */
  public void match(Attributes m, IntConsumer sink) {
    checkIdle();
    Objects.requireNonNull(sink, "sink");
    matching = true;
    try {
      nextEpoch();
      this.sink = sink;
      matchedCount = 0;
      int live = hosts.size();
      int n = m.size();
      int[] found = attributeSlots;
      // Every name first, then every value: the names of a message just received are rarely in
      // the cache, and looking them up back to back lets the processor wait for several misses
      // at once instead of one per attribute between the much longer collects.
      for (int j = 0; j < allCount; j++) {
        int slot = allSlots[j];
        slotEpoch[slot] = epoch;
        matchedCount++;
        sink.accept(slotHost[slot]);
      }
      for (int i = 0; i < n; i++) {
        found[i] = nameSlots.get(m.name(i));
      }
      for (int i = 0; i < n && matchedCount < live; i++) {
        int slot = found[i];
        if (slot >= 0) {
          nameIndexes[slot].collect(m.value(i), this);
        }
      }
    } finally {
      this.sink = null;
      matching = false;
    }
  }

  /** The hosts whose predicate {@code m} satisfies, sorted ascending. */
  public int[] match(Message m) {
    collectedCount = 0;
    match(m, collector);
    int[] out = collectedCount == 0 ? NO_INTS : Arrays.copyOf(collected, collectedCount);
    Arrays.sort(out);
    return out;
  }

  private void collect(int host) {
    if (collectedCount == collected.length) {
      collected = Arrays.copyOf(collected, 2 * collected.length);
    }
    collected[collectedCount++] = host;
  }

  private void checkIdle() {
    if (matching) {
      throw new IllegalStateException("the exact matcher was called from one of its own sinks");
    }
  }

  private void nextEpoch() {
    if (epoch == MAX_EPOCH) {
      // Stamps from 2^23 messages ago could look current again: start over from clean arrays.
      Arrays.fill(slotEpoch, 0);
      Arrays.fill(conjCount, 0);
      Arrays.fill(constraintEpoch, 0);
      epoch = 0;
    }
    epoch++;
  }

  /**
   * Counts constraint {@code id} as satisfied by the current message: one more satisfied constraint
   * for each conjunction that lists it, and a match for each host whose conjunction becomes
   * complete. The index reports each constraint at most once per message.
   */
  void satisfied(int id) {
    int h = constraintHead[id];
    if (h >= 0) {
      count(h);
      return;
    }
    int[] list = constraintConjs[id];
    for (int j = 0, n = ~h; j < n; j++) {
      count(list[j]);
    }
  }

  /**
   * One more satisfied constraint for the conjunction of {@code entry} (id << 7 | size); reports
   * its host when the conjunction is complete.
   */
  void count(int entry) {
    int[] counts = conjCount;
    int e = epoch;
    int c = entry >>> 7;
    int state = counts[c];
    int n = (state >>> 8) == e ? (state & 0xFF) + 1 : 1;
    counts[c] = e << 8 | n;
    if (n == (entry & 0x7F)) {
      int slot = conjSlot[c];
      // The host is looked at only when a conjunction completes, not on every count.
      if (slotEpoch[slot] != e) {
        slotEpoch[slot] = e;
        matchedCount++;
        sink.accept(slotHost[slot]);
      }
    }
  }

  /** The conjunctions of each constraint, as entries, for the interval tables. */
  final Entries entries =
      new Entries() {
        @Override
        public int count(int id) {
          return constraintConjCount[id];
        }

        @Override
        public int get(int id, int j) {
          return constraintConjs[id][j];
        }
      };

  /**
   * Tells the index of constraint {@code id}'s name that the conjunctions listing it changed, so
   * that tables holding them are rebuilt before the next match.
   */
  private void conjunctionsChanged(int id) {
    nameIndexes[nameSlots.get(constraints[id].name())].conjunctionsChanged(constraints[id]);
  }

  /**
   * True the first time it is called for constraint {@code id} during the current message, false
   * afterwards; used where one value can satisfy a constraint several times ({@code contains}).
   */
  boolean firstTime(int id) {
    if (constraintEpoch[id] == epoch) {
      return false;
    }
    constraintEpoch[id] = epoch;
    return true;
  }

  private int addConjunction(Conjunction conj, int slot) {
    int c = conjIds.allocate();
    if (c >= conjConstraints.length) {
      int cap = 2 * conjConstraints.length;
      conjCount = Arrays.copyOf(conjCount, cap);
      conjSlot = Arrays.copyOf(conjSlot, cap);
      conjConstraints = Arrays.copyOf(conjConstraints, cap);
      conjPositions = Arrays.copyOf(conjPositions, cap);
    }
    int n = conj.size();
    if (n == 0) {
      // true: the host matches every message; listed apart, under no constraint.
      if (allCount == allSlots.length) {
        allSlots = Arrays.copyOf(allSlots, 2 * allCount);
      }
      allSlots[allCount++] = slot;
    }
    int entry = c << 7 | n; // n <= Limits.MAX_CONSTRAINTS = 64 < 128; c < MAX_CONJUNCTIONS
    int[] ks = new int[n];
    int[] positions = new int[n];
    for (int k = 0; k < n; k++) {
      int id = intern(conj.get(k));
      ks[k] = id;
      positions[k] = append(id, entry);
    }
    conjCount[c] = 0;
    conjSlot[c] = slot;
    conjConstraints[c] = ks;
    conjPositions[c] = positions;
    return c;
  }

  private void removeConjunction(int c) {
    int[] ks = conjConstraints[c];
    int[] positions = conjPositions[c];
    if (ks.length == 0) {
      int slot = conjSlot[c];
      for (int j = 0; j < allCount; j++) {
        if (allSlots[j] == slot) {
          allSlots[j] = allSlots[--allCount];
          break;
        }
      }
    }
    for (int k = 0; k < ks.length; k++) {
      int id = ks[k];
      int[] list = constraintConjs[id];
      int last = --constraintConjCount[id];
      int at = positions[k];
      int movedEntry = list[last];
      int moved = movedEntry >>> 7;
      if (moved != c) {
        // Swap the last conjunction of the list into the freed place and tell it where it went.
        list[at] = movedEntry;
        int[] movedKs = conjConstraints[moved];
        for (int j = 0; j < movedKs.length; j++) {
          if (movedKs[j] == id) {
            conjPositions[moved][j] = at;
            break;
          }
        }
      }
      if (last == 0) {
        unintern(id);
      } else {
        conjunctionsChanged(id);
        constraintHead[id] = last == 1 ? list[0] : ~last;
        if (list.length > 16 && last < list.length / 4) {
          constraintConjs[id] = Arrays.copyOf(list, list.length / 2);
        }
      }
    }
    conjConstraints[c] = null;
    conjPositions[c] = null;
    conjIds.release(c);
  }

  /** The id of constraint {@code k}, indexing it if it is new. */
  private int intern(Constraint k) {
    Integer known = constraintIds.get(k);
    if (known != null) {
      return known;
    }
    int id = constraintPool.allocate();
    if (id >= constraints.length) {
      int cap = 2 * constraints.length;
      constraints = Arrays.copyOf(constraints, cap);
      constraintConjs = Arrays.copyOf(constraintConjs, cap);
      constraintHead = Arrays.copyOf(constraintHead, cap);
      constraintConjCount = Arrays.copyOf(constraintConjCount, cap);
      constraintEpoch = Arrays.copyOf(constraintEpoch, cap);
    }
    constraints[id] = k;
    constraintConjs[id] = new int[4];
    constraintHead[id] = ~0;
    constraintConjCount[id] = 0;
    constraintEpoch[id] = 0;
    constraintIds.put(k, id);
    int slot = nameSlots.get(k.name());
    if (slot < 0) {
      slot = nameSlotPool.allocate();
      if (slot >= nameIndexes.length) {
        nameIndexes = Arrays.copyOf(nameIndexes, 2 * nameIndexes.length);
      }
      nameIndexes[slot] = new NameIndex(intervalTables);
      nameSlots.put(k.name(), slot);
    }
    nameIndexes[slot].add(k, id);
    return id;
  }

  private void unintern(int id) {
    Constraint k = constraints[id];
    int slot = nameSlots.get(k.name());
    NameIndex index = nameIndexes[slot];
    index.remove(k);
    if (index.size() == 0) {
      nameSlots.remove(k.name());
      nameIndexes[slot] = null;
      nameSlotPool.release(slot);
    }
    constraintIds.remove(k);
    constraints[id] = null;
    constraintConjs[id] = null;
    constraintPool.release(id);
  }

  /**
   * Appends the entry of a conjunction to the list of constraint {@code id}; returns its position.
   */
  private int append(int id, int entry) {
    int[] list = constraintConjs[id];
    int n = constraintConjCount[id];
    if (n == list.length) {
      list = Arrays.copyOf(list, 2 * n);
      constraintConjs[id] = list;
    }
    list[n] = entry;
    constraintConjCount[id] = n + 1;
    constraintHead[id] = n == 0 ? entry : ~(n + 1);
    conjunctionsChanged(id);
    return n;
  }

  /** Largest conjunction id ever used, plus one (for tests of id reuse). */
  int conjunctionIdLimit() {
    return conjIds.limit();
  }

  /** Largest constraint id ever used, plus one (for tests of id reuse). */
  int constraintIdLimit() {
    return constraintPool.limit();
  }

  /** Most hosts one matcher holds (each has a conjunction, see {@link #MAX_CONJUNCTIONS}). */
  static final int MAX_HOSTS = 1 << 24;

  /**
   * Most conjunctions one matcher holds, over all hosts: an entry keeps the conjunction id in 24
   * bits above its size, and stays non-negative.
   */
  static final int MAX_CONJUNCTIONS = 1 << 24;

  /** Largest message number; after it the stamps are cleared (they keep 24 bits of it). */
  static final int MAX_EPOCH = (1 << 23) - 1;

  /**
   * The interval table of the numeric constraints on {@code name} as the next match would use it
   * (null when there is none or it passed its cap), for tests.
   */
  IntervalTable numberTableForTest(String name) {
    int slot = nameSlots.get(name);
    return slot < 0 ? null : nameIndexes[slot].numberTable(this);
  }

  /** Jumps the message counter, so that tests can cross its wrap-around. */
  void setEpochForTest(int value) {
    epoch = value;
  }
}
