package io.bdrp.topologies;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes topologies in the layout of the Java BRITE: a {@code Topology: ( N Nodes, E Edges )} line,
 * the model lines, {@code Nodes: ( N )} with tab-separated node lines, two blank lines, {@code
 * Edges: ( E )} with tab-separated edge lines, and {@code \n} line ends.
 *
 * <p>Numbers are written with {@link Double#toString(double)}, the shortest decimal that reads back
 * to the same double, so {@link BriteReader} reads a written topology back to an equal one. Nodes
 * are written in router order (ascending file id), edges in list order; an edge's direction field
 * is written only if it has one.
 *
 * <p>Stateless: all methods are static and may be called from any thread.
 */
public final class BriteWriter {
  private BriteWriter() {}

  /** The text of {@code topology} as a BRITE file. */
  public static String toText(Topology topology) {
    StringBuilder out = new StringBuilder(64 + 48 * (topology.nodeCount() + topology.edgeCount()));
    try {
      write(topology, out);
    } catch (IOException e) {
      throw new UncheckedIOException("appending to a StringBuilder cannot fail", e);
    }
    return out.toString();
  }

  /**
   * Writes {@code topology} to {@code file} (UTF-8; the content is ASCII unless a model line or
   * type holds other characters), replacing it.
   *
   * @throws IOException if the file cannot be written
   */
  public static void write(Topology topology, Path file) throws IOException {
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      write(topology, w);
    }
  }

  /**
   * Appends the text of {@code topology} to {@code out}, which is neither flushed nor closed.
   *
   * @throws IOException if {@code out} fails
   */
  public static void write(Topology topology, Appendable out) throws IOException {
    out.append("Topology: ( ")
        .append(Integer.toString(topology.nodeCount()))
        .append(" Nodes, ")
        .append(Integer.toString(topology.edgeCount()))
        .append(" Edges )\n");
    for (String model : topology.modelLines()) {
      out.append(model).append('\n');
    }
    out.append("\nNodes: ( ").append(Integer.toString(topology.nodeCount())).append(" )\n");
    for (Node n : topology.nodes()) {
      out.append(Integer.toString(n.id()))
          .append('\t')
          .append(Double.toString(n.x()))
          .append('\t')
          .append(Double.toString(n.y()))
          .append('\t')
          .append(Integer.toString(n.inDegree()))
          .append('\t')
          .append(Integer.toString(n.outDegree()))
          .append('\t')
          .append(Integer.toString(n.asId()))
          .append('\t')
          .append(n.type())
          .append('\n');
    }
    out.append("\n\nEdges: ( ").append(Integer.toString(topology.edgeCount())).append(" )\n");
    for (Edge e : topology.edges()) {
      out.append(Integer.toString(e.id()))
          .append('\t')
          .append(Integer.toString(e.from()))
          .append('\t')
          .append(Integer.toString(e.to()))
          .append('\t')
          .append(Double.toString(e.length()))
          .append('\t')
          .append(Double.toString(e.delay()))
          .append('\t')
          .append(Double.toString(e.bandwidth()))
          .append('\t')
          .append(Integer.toString(e.asFrom()))
          .append('\t')
          .append(Integer.toString(e.asTo()))
          .append('\t')
          .append(e.type());
      if (e.direction() != Edge.Direction.ABSENT) {
        out.append('\t').append(e.direction().token());
      }
      out.append('\n');
    }
  }
}
