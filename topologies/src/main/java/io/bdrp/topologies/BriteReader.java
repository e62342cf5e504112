package io.bdrp.topologies;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads BRITE topology files as written by the Java BRITE and by the C++ BRITE, and by hand.
 *
 * <p>A file has a header ({@code Topology: ( N Nodes, E Edges )} and one or two {@code Model ...}
 * lines), a {@code Nodes: ( N )} section with one line per node ({@code id x y indegree outdegree
 * ASid type}) and an {@code Edges: ( E )} section with one line per edge ({@code id from to length
 * delay bandwidth ASfrom ASto type [U|D]}).
 *
 * <p><b>Tolerated</b>: fields separated by tabs or spaces, several in a row (a hand-edited file's
 * "empty fields"), trailing white space, NUL bytes (C++ BRITE ends its model line with one), CR LF
 * line ends, a byte-order mark, {@code ( N )} or {@code (N)} with an optional trailing colon, a
 * missing direction field, node ids that start anywhere and have gaps, several model lines. Header
 * counts that disagree with the body, self-loops and duplicate edges (same two nodes, either
 * direction; the first one is kept) are reported in {@link ReadResult#warnings()}; the last two are
 * skipped.
 *
 * <p><b>Rejected</b> with a {@link BriteFormatException} naming the line: non-numeric or
 * out-of-range numbers, missing or extra fields, duplicate node or edge ids, edges to unknown
 * nodes, unexpected lines in the header, and a missing or empty section.
 *
 * <p>Stateless: all methods are static and may be called from any thread.
 */
public final class BriteReader {
  private static final Pattern TOPOLOGY =
      Pattern.compile(
          "Topology:\\s*\\(\\s*(\\d+)\\s*Nodes\\s*,\\s*(\\d+)\\s*Edges\\s*\\)\\s*:?",
          Pattern.CASE_INSENSITIVE);
  private static final Pattern SECTION =
      Pattern.compile("(Nodes|Edges):\\s*\\(\\s*(\\d+)\\s*\\)\\s*:?", Pattern.CASE_INSENSITIVE);
  private static final Pattern DECIMAL =
      Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");
  private static final String NODE_FIELDS = "id x y indegree outdegree ASid type";
  private static final String EDGE_FIELDS =
      "id from to length delay bandwidth ASfrom ASto type [direction]";

  private BriteReader() {}

  /**
   * Reads a file; messages name it by its file name.
   *
   * @throws IOException if the file cannot be read
   * @throws BriteFormatException if the file is malformed
   */
  public static ReadResult read(Path file) throws IOException {
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return read(reader, String.valueOf(file.getFileName()));
    }
  }

  /**
   * Reads UTF-8 (in practice ASCII) text from a stream, which is not closed.
   *
   * @param source the name used in messages
   * @throws IOException if the stream cannot be read
   * @throws BriteFormatException if the text is malformed
   */
  public static ReadResult read(InputStream in, String source) throws IOException {
    return read(new InputStreamReader(in, StandardCharsets.UTF_8), source);
  }

  /**
   * Reads the text of a BRITE file.
   *
   * @param source the name used in messages
   * @throws BriteFormatException if the text is malformed
   */
  public static ReadResult parse(String text, String source) {
    try {
      return read(new StringReader(text), source);
    } catch (IOException e) {
      throw new UncheckedIOException("reading a string cannot fail", e);
    }
  }

  /**
   * Reads BRITE text from a reader, which is not closed.
   *
   * @param source the name used in messages
   * @throws IOException if the reader fails
   * @throws BriteFormatException if the text is malformed
   */
  public static ReadResult read(Reader reader, String source) throws IOException {
    BufferedReader in = reader instanceof BufferedReader b ? b : new BufferedReader(reader);
    return new Parse(source).run(in);
  }

  private enum Section {
    HEADER,
    NODES,
    EDGES
  }

  /** The state of one read; confined to the calling thread. */
  private static final class Parse {
    private final String source;
    private final List<String> warnings = new ArrayList<>();
    private final List<String> modelLines = new ArrayList<>();
    private final List<Node> nodes = new ArrayList<>();
    private final List<Edge> edges = new ArrayList<>();
    private final Map<Integer, Integer> nodeLine = new HashMap<>();
    private final Map<Integer, Integer> edgeLine = new HashMap<>();
    private final Map<Long, Edge> edgeOfPair = new HashMap<>();
    private Section section = Section.HEADER;
    private int lineNumber;
    private int topologyLine;
    private int headerNodes = -1;
    private int headerEdges = -1;
    private int nodesLine;
    private int sectionNodes = -1;
    private int edgesLine;
    private int sectionEdges = -1;
    private int edgeLines;

    Parse(String source) {
      this.source = source;
    }

    ReadResult run(BufferedReader in) throws IOException {
      String raw;
      while ((raw = in.readLine()) != null) {
        lineNumber++;
        String line = clean(raw);
        if (!line.isEmpty()) {
          line(line);
        }
      }
      int end = lineNumber;
      if (section == Section.HEADER) {
        throw error(end, "end of file before the Nodes section (no \"Nodes: ( N )\" line)");
      }
      if (section == Section.NODES) {
        throw error(end, "end of file before the Edges section (no \"Edges: ( E )\" line)");
      }
      checkCounts();
      return new ReadResult(Topology.of(modelLines, nodes, edges), warnings);
    }

    /** Drops NUL bytes and a byte-order mark, then surrounding white space. */
    private String clean(String raw) {
      String s = raw.indexOf('\0') >= 0 ? raw.replace("\0", "") : raw;
      if (lineNumber == 1 && s.startsWith("\uFEFF")) {
        s = s.substring(1);
      }
      return s.strip();
    }

    private void line(String line) {
      switch (section) {
        case HEADER -> header(line);
        case NODES -> {
          if (startsWithWord(line, "Edges:")) {
            edgesLine = lineNumber;
            sectionEdges = sectionCount(line, "Edges");
            section = Section.EDGES;
          } else if (startsWithWord(line, "Nodes:")) {
            throw error(lineNumber, "second Nodes section header: \"" + line + "\"");
          } else {
            node(line);
          }
        }
        case EDGES -> edge(line);
      }
    }

    private void header(String line) {
      if (startsWithWord(line, "Topology:")) {
        Matcher m = TOPOLOGY.matcher(line);
        if (!m.matches()) {
          throw error(
              lineNumber, "expected \"Topology: ( N Nodes, E Edges )\", got \"" + line + "\"");
        }
        topologyLine = lineNumber;
        headerNodes = count(m.group(1), "Topology node count");
        headerEdges = count(m.group(2), "Topology edge count");
      } else if (line.startsWith("Model")) {
        try {
          Topology.checkModelLine(line);
        } catch (IllegalArgumentException e) {
          throw error(lineNumber, e.getMessage());
        }
        modelLines.add(line);
      } else if (startsWithWord(line, "Nodes:")) {
        nodesLine = lineNumber;
        sectionNodes = sectionCount(line, "Nodes");
        section = Section.NODES;
      } else {
        throw error(
            lineNumber,
            "unexpected line before the Nodes section (expected \"Topology:\", \"Model\" or"
                + " \"Nodes:\"): \""
                + line
                + "\"");
      }
    }

    private static boolean startsWithWord(String line, String word) {
      return line.regionMatches(true, 0, word, 0, word.length());
    }

    private int sectionCount(String line, String name) {
      Matcher m = SECTION.matcher(line);
      if (!m.matches() || !m.group(1).equalsIgnoreCase(name)) {
        throw error(lineNumber, "expected \"" + name + ": ( N )\", got \"" + line + "\"");
      }
      return count(m.group(2), name + " count");
    }

    private int count(String digits, String what) {
      try {
        return Integer.parseInt(digits);
      } catch (NumberFormatException e) {
        throw error(lineNumber, what + " is out of range: " + digits);
      }
    }

    private void node(String line) {
      String[] f = fields(line);
      if (f.length != 7) {
        throw error(
            lineNumber, "node line has " + f.length + " fields, expected 7 (" + NODE_FIELDS + ")");
      }
      int id = integer(f[0], "node", "id");
      Node node;
      try {
        node =
            new Node(
                id,
                decimal(f[1], "node", "x"),
                decimal(f[2], "node", "y"),
                integer(f[3], "node", "indegree"),
                integer(f[4], "node", "outdegree"),
                integer(f[5], "node", "ASid"),
                f[6]);
      } catch (IllegalArgumentException e) {
        throw error(lineNumber, e.getMessage());
      }
      Integer first = nodeLine.putIfAbsent(id, lineNumber);
      if (first != null) {
        throw error(
            lineNumber, "duplicate node id " + id + " (first defined on line " + first + ")");
      }
      nodes.add(node);
    }

    private void edge(String line) {
      if (startsWithWord(line, "Edges:") || startsWithWord(line, "Nodes:")) {
        throw error(lineNumber, "section header inside the Edges section: \"" + line + "\"");
      }
      edgeLines++;
      String[] f = fields(line);
      if (f.length != 9 && f.length != 10) {
        throw error(
            lineNumber,
            "edge line has " + f.length + " fields, expected 9 or 10 (" + EDGE_FIELDS + ")");
      }
      int id = integer(f[0], "edge", "id");
      int from = integer(f[1], "edge", "from");
      int to = integer(f[2], "edge", "to");
      Edge.Direction direction = Edge.Direction.ABSENT;
      if (f.length == 10) {
        try {
          direction = Edge.Direction.ofToken(f[9]);
        } catch (IllegalArgumentException e) {
          throw error(lineNumber, "edge line: field 'direction': " + e.getMessage());
        }
      }
      Edge edge;
      try {
        edge =
            new Edge(
                id,
                from,
                to,
                decimal(f[3], "edge", "length"),
                decimal(f[4], "edge", "delay"),
                decimal(f[5], "edge", "bandwidth"),
                integer(f[6], "edge", "ASfrom"),
                integer(f[7], "edge", "ASto"),
                f[8],
                direction);
      } catch (IllegalArgumentException e) {
        throw error(lineNumber, e.getMessage());
      }
      for (int end : new int[] {from, to}) {
        if (!nodeLine.containsKey(end)) {
          throw error(lineNumber, "edge " + id + " refers to unknown node " + end);
        }
      }
      Integer first = edgeLine.putIfAbsent(id, lineNumber);
      if (first != null) {
        throw error(
            lineNumber, "duplicate edge id " + id + " (first defined on line " + first + ")");
      }
      if (from == to) {
        warn(lineNumber, "edge " + id + " is a self-loop on node " + from + "; skipped");
        return;
      }
      Edge earlier = edgeOfPair.putIfAbsent(Topology.pairKey(from, to), edge);
      if (earlier != null) {
        warn(
            lineNumber,
            "edge "
                + id
                + " duplicates edge "
                + earlier.id()
                + " between nodes "
                + from
                + " and "
                + to
                + "; skipped");
        return;
      }
      edges.add(edge);
    }

    private void checkCounts() {
      if (nodes.isEmpty()) {
        throw error(nodesLine, "the Nodes section is empty");
      }
      int n = nodes.size();
      if (headerNodes >= 0 && headerNodes != n) {
        warn(topologyLine, "Topology line says " + headerNodes + " nodes, the file has " + n);
      }
      if (headerEdges >= 0 && headerEdges != edgeLines) {
        warn(
            topologyLine,
            "Topology line says " + headerEdges + " edges, the file has " + edgeLines);
      }
      if (sectionNodes != n) {
        warn(nodesLine, "Nodes line says " + sectionNodes + " nodes, the file has " + n);
      }
      if (sectionEdges != edgeLines) {
        warn(edgesLine, "Edges line says " + sectionEdges + " edges, the file has " + edgeLines);
      }
    }

    private static String[] fields(String line) {
      List<String> out = new ArrayList<>();
      int i = 0;
      int n = line.length();
      while (i < n) {
        while (i < n && Character.isWhitespace(line.charAt(i))) {
          i++;
        }
        int start = i;
        while (i < n && !Character.isWhitespace(line.charAt(i))) {
          i++;
        }
        if (i > start) {
          out.add(line.substring(start, i));
        }
      }
      return out.toArray(String[]::new);
    }

    private int integer(String token, String kind, String field) {
      try {
        return Integer.parseInt(token);
      } catch (NumberFormatException e) {
        throw error(
            lineNumber, kind + " line: field '" + field + "' is not an integer: \"" + token + "\"");
      }
    }

    private double decimal(String token, String kind, String field) {
      if (!DECIMAL.matcher(token).matches()) {
        throw error(
            lineNumber,
            kind + " line: field '" + field + "' is not a decimal number: \"" + token + "\"");
      }
      double value = Double.parseDouble(token);
      if (!Double.isFinite(value)) {
        throw error(
            lineNumber, kind + " line: field '" + field + "' is out of range: \"" + token + "\"");
      }
      return value;
    }

    private void warn(int line, String message) {
      warnings.add(source + ":" + line + ": " + message);
    }

    private BriteFormatException error(int line, String problem) {
      return new BriteFormatException(source, line, problem);
    }
  }
}
