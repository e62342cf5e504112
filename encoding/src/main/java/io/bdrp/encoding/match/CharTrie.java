package io.bdrp.encoding.match;

import java.util.Arrays;

/**
 * A trie over UTF-16 units holding the string operands of one attribute name and one operator
 * ({@code prefix}, {@code suffix} or {@code contains}); each operand's last node carries the id of
 * its constraint. Suffix operands are inserted back to front, so that the trie is walked from the
 * end of the value.
 *
 * <p>Working on UTF-16 units rather than code points gives exactly {@link String#startsWith},
 * {@link String#endsWith} and {@link String#contains}, which define the operators: operands and
 * values are well-formed, so a unit-level match of a well-formed operand never splits a surrogate
 * pair in a way that code points would see differently.
 *
 * <p>For {@code contains} the trie is also an Aho–Corasick automaton: {@link #link()} computes the
 * failure links and output links after changes. Owned by the thread that owns the {@link
 * ExactMatcher}.
 */
final class CharTrie {
  private static final char[] NO_KEYS = new char[0];
  private static final Node[] NO_KIDS = new Node[0];

  /** A trie node; children are kept sorted by unit for binary search. */
  static final class Node {
    final Node parent;
    final char unit;
    private char[] keys = NO_KEYS;
    private Node[] kids = NO_KIDS;
    private int size;

    /** Id of the constraint whose operand ends here, or -1. */
    int id = -1;

    /**
     * Aho–Corasick: node of the longest proper suffix of this node's string that is in the trie.
     */
    Node fail;

    /**
     * Aho–Corasick: the nearest node on the failure chain (root excluded) that carries an id, or
     * null.
     */
    Node out;

    Node(Node parent, char unit) {
      this.parent = parent;
      this.unit = unit;
    }

    /** The child reached by {@code c}, or null. */
    Node child(char c) {
      int lo = 0;
      int hi = size - 1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        char k = keys[mid];
        if (k < c) {
          lo = mid + 1;
        } else if (k > c) {
          hi = mid - 1;
        } else {
          return kids[mid];
        }
      }
      return null;
    }

    private int find(char c) {
      return Arrays.binarySearch(keys, 0, size, c);
    }

    private Node addChild(char c) {
      int at = -find(c) - 1;
      if (size == keys.length) {
        int n = Math.max(2, size * 2);
        keys = Arrays.copyOf(keys, n);
        kids = Arrays.copyOf(kids, n);
      }
      System.arraycopy(keys, at, keys, at + 1, size - at);
      System.arraycopy(kids, at, kids, at + 1, size - at);
      Node child = new Node(this, c);
      keys[at] = c;
      kids[at] = child;
      size++;
      return child;
    }

    private void removeChild(char c) {
      int at = find(c);
      System.arraycopy(keys, at + 1, keys, at, size - at - 1);
      System.arraycopy(kids, at + 1, kids, at, size - at - 1);
      size--;
      kids[size] = null;
      if (size == 0) {
        keys = NO_KEYS;
        kids = NO_KIDS;
      }
    }
  }

  final Node root = new Node(null, '\0');
  private final boolean reversed;
  private int nodes = 1;
  private Node[] queue = NO_KIDS;

  /** True when nodes were added or removed since the last {@link #link()}. */
  boolean linksDirty;

  /** A trie whose operands are stored front to back, or back to front when {@code reversed}. */
  CharTrie(boolean reversed) {
    this.reversed = reversed;
  }

  /** Adds {@code operand} with the given constraint id. */
  void put(String operand, int id) {
    Node n = root;
    int len = operand.length();
    for (int i = 0; i < len; i++) {
      char c = operand.charAt(reversed ? len - 1 - i : i);
      Node k = n.child(c);
      if (k == null) {
        k = n.addChild(c);
        nodes++;
      }
      n = k;
    }
    n.id = id;
    linksDirty = true;
  }

  /** Removes {@code operand}, which must be present, and prunes the nodes nothing needs. */
  void remove(String operand) {
    Node n = root;
    int len = operand.length();
    for (int i = 0; i < len; i++) {
      n = n.child(operand.charAt(reversed ? len - 1 - i : i));
    }
    n.id = -1;
    while (n != root && n.id < 0 && n.size == 0) {
      Node p = n.parent;
      p.removeChild(n.unit);
      nodes--;
      n = p;
    }
    linksDirty = true;
  }

  boolean isEmpty() {
    return root.size == 0 && root.id < 0;
  }

  /** Number of nodes, root included. */
  int nodeCount() {
    return nodes;
  }

  /**
   * Computes the Aho–Corasick failure and output links breadth first. Runs at the first match after
   * a change; reuses its queue between runs.
   */
  void link() {
    if (queue.length < nodes) {
      queue = new Node[Math.max(nodes, 2 * queue.length)];
    }
    int head = 0;
    int tail = 0;
    root.fail = null;
    root.out = null;
    for (int i = 0; i < root.size; i++) {
      Node k = root.kids[i];
      k.fail = root;
      k.out = null; // the root's own id (the empty operand) is handled apart by the caller
      queue[tail++] = k;
    }
    while (head < tail) {
      Node u = queue[head++];
      for (int i = 0; i < u.size; i++) {
        Node v = u.kids[i];
        char c = u.keys[i];
        Node f = u.fail;
        Node target;
        while (true) {
          Node next = f.child(c);
          if (next != null) {
            target = next;
            break;
          }
          if (f == root) {
            target = root;
            break;
          }
          f = f.fail;
        }
        v.fail = target;
        v.out = target != root && target.id >= 0 ? target : target.out;
        queue[tail++] = v;
      }
    }
    Arrays.fill(queue, 0, tail, null);
    linksDirty = false;
  }

  /** The entry pool of a compact table: per operand in row order, id, n, then its n entries. */
  private static int[] pool(Node[] order, int n, Entries entries) {
    int size = 0;
    for (int r = 0; r < n; r++) {
      if (order[r].id >= 0) {
        size += 2 + entries.count(order[r].id);
      }
    }
    int[] pool = new int[size];
    int at = 0;
    for (int r = 0; r < n; r++) {
      int id = order[r].id;
      if (id >= 0) {
        int k = entries.count(id);
        pool[at] = id;
        pool[at + 1] = k;
        for (int j = 0; j < k; j++) {
          pool[at + 2 + j] = entries.get(id, j);
        }
        at += 2 + k;
      }
    }
    return pool;
  }

  /** Largest compiled table, in ints; a trie that would need more is walked as objects. */
  static final int MAX_TABLE_INTS = 1 << 20;

  /**
   * A compiled copy of a trie for matching: one row per node (breadth-first, row 0 the root), so
   * that a step is one read in one array instead of a search among a node's children. A row is
   * {@link #stride} ints: the id of the constraint whose operand ends there (or -1), then, for
   * automata, the start of the nearest row on the failure chain that has an id (or -1), then one
   * entry per character of the trie's alphabet holding the start of the next row (or -1 in a plain
   * trie). Characters outside the alphabet have column 0 and no entry: a trie stops there and an
   * automaton returns to the root. For an automaton ({@code contains}) every missing transition is
   * resolved in advance along the failure links, so a step never backtracks.
   *
   * <p>A trie whose alphabet has at most 32 characters is compiled {@link #compact} instead, in
   * rows of 3 ints (5 for an automaton): where the operand ending there starts in {@link #entries}
   * (or -1), a bit mask of the columns that have a child, the start of the first child's row
   * (breadth-first order puts a node's children in consecutive rows, in the order of their
   * characters, so the child of column c is the first child plus the number of mask bits below c),
   * then for an automaton the start of the failure row and of the output row (or -1). A row of 12
   * or 20 bytes instead of 4 per alphabet character keeps the tables of every name in the core's
   * caches, which the walk, one dependent read per character, waits on; the price is that an
   * automaton follows failure rows where the wide table jumps directly. Immutable.
   */
  static final class Table {
    static final int ID = 0;
    static final int OUT = 1;

    // Columns of a compact row.
    static final int MASK = 1;
    static final int FIRST = 2;
    static final int FAIL = 3;
    static final int COMPACT_OUT = 4;

    /** Most alphabet characters of a compact table: one bit each in an int mask. */
    static final int MAX_COMPACT_ALPHABET = 32;

    final boolean compact;
    final int stride; // ints per row: id, out, one per alphabet character; or 3 or 5 if compact
    final int[] rows; // row r starts at r * stride

    /**
     * Compact tables: for each operand, its constraint id, the number n of its conjunctions and
     * their n entries ({@link Entries}), so that a walk counts conjunctions without looking up the
     * constraint. Rebuilt when a conjunction joins or leaves one of these constraints.
     */
    final int[] entries;

    private final int[] ascii; // column of each ASCII character, 0 when outside the alphabet
    private final char[] otherChars; // the other characters of the alphabet, sorted
    private final int[] otherColumns;

    private Table(
        boolean compact,
        int stride,
        int[] rows,
        int[] ascii,
        char[] otherChars,
        int[] otherColumns,
        int[] entries) {
      this.compact = compact;
      this.entries = entries;
      this.stride = stride;
      this.rows = rows;
      this.ascii = ascii;
      this.otherChars = otherChars;
      this.otherColumns = otherColumns;
    }

    /** The column of a character, 1 and up; 0 when no operand contains it. */
    int column(char c) {
      if (c < 128) {
        return ascii[c];
      }
      int i = Arrays.binarySearch(otherChars, c);
      return i >= 0 ? otherColumns[i] : 0;
    }
  }

  /**
   * Compiles this trie ({@code automaton}: with failure transitions, for {@code contains}), or
   * returns null when the table would pass {@link #MAX_TABLE_INTS}. A compact table copies the
   * {@code entries} of its constraints.
   */
  Table compile(boolean automaton, Entries entries) {
    if (automaton && linksDirty) {
      link();
    }
    Node[] order = new Node[nodes];
    java.util.IdentityHashMap<Node, Integer> row = new java.util.IdentityHashMap<>();
    java.util.TreeSet<Character> alphabet = new java.util.TreeSet<>();
    order[0] = root;
    row.put(root, 0);
    int n = 1;
    for (int h = 0; h < n; h++) {
      Node u = order[h];
      for (int i = 0; i < u.size; i++) {
        row.put(u.kids[i], n);
        order[n++] = u.kids[i];
        alphabet.add(u.keys[i]);
      }
    }
    boolean compact = alphabet.size() <= Table.MAX_COMPACT_ALPHABET;
    // Wide: id, out, one entry per character (column c at 1 + c).
    int stride = compact ? (automaton ? 5 : 3) : alphabet.size() + 2;
    if ((long) n * stride > MAX_TABLE_INTS) {
      return null;
    }
    int[] ascii = new int[128];
    char[] otherChars = new char[alphabet.size()];
    int[] otherColumns = new int[alphabet.size()];
    int others = 0;
    int col = 1;
    for (char c : alphabet) {
      if (c < 128) {
        ascii[c] = col;
      } else {
        otherChars[others] = c;
        otherColumns[others++] = col;
      }
      col++;
    }
    Table t =
        new Table(
            compact,
            stride,
            new int[n * stride],
            ascii,
            Arrays.copyOf(otherChars, others),
            Arrays.copyOf(otherColumns, others),
            compact ? pool(order, n, entries) : null);
    int[] rows = t.rows;
    if (compact) {
      int next = 1; // row of the first child of the node being laid out, in breadth-first order
      int at = 0; // where the next operand's entries start in t.entries, as pool() laid them
      for (int r = 0; r < n; r++) {
        Node u = order[r];
        int base = r * stride;
        int mask = 0;
        for (int i = 0; i < u.size; i++) {
          mask |= 1 << (t.column(u.keys[i]) - 1);
        }
        rows[base + Table.ID] = u.id < 0 ? -1 : at;
        if (u.id >= 0) {
          at += 2 + entries.count(u.id);
        }
        rows[base + Table.MASK] = mask;
        rows[base + Table.FIRST] = next * stride;
        next += u.size;
        if (automaton) {
          rows[base + Table.FAIL] = r == 0 ? 0 : row.get(u.fail) * stride;
          rows[base + Table.COMPACT_OUT] = u.out == null ? -1 : row.get(u.out) * stride;
        }
      }
      return t;
    }
    Arrays.fill(rows, -1);
    for (int r = 0; r < n; r++) {
      Node u = order[r];
      int base = r * stride;
      rows[base + Table.ID] = u.id;
      rows[base + Table.OUT] = u.out == null ? -1 : row.get(u.out) * stride;
      for (int i = 0; i < u.size; i++) {
        rows[base + 1 + t.column(u.keys[i])] = row.get(u.kids[i]) * stride;
      }
    }
    if (automaton) {
      // Breadth-first order puts every node's failure target (a shorter string) before it, so
      // its row is already complete when it is copied from.
      for (int r = 0; r < n; r++) {
        int base = r * stride;
        int fail = r == 0 ? 0 : row.get(order[r].fail) * stride;
        for (int c = 1; c < stride - 1; c++) {
          if (rows[base + 1 + c] < 0) {
            rows[base + 1 + c] = r == 0 ? 0 : rows[fail + 1 + c];
          }
        }
      }
    }
    return t;
  }
}
