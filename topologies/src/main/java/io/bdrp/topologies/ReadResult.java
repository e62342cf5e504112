package io.bdrp.topologies;

import java.util.List;

/**
 * What {@link BriteReader} made of a file: the topology and the warnings about things it tolerated
 * (header counts that disagree with the body, self-loops and duplicate edges it skipped).
 *
 * <p>Immutable and safe to share between threads.
 *
 * @param topology the topology read
 * @param warnings one message per tolerated problem, each starting with the source name and line
 *     number; empty for a clean file
 */
public record ReadResult(Topology topology, List<String> warnings) {
  /** Copies the warnings into an unmodifiable list. */
  public ReadResult {
    warnings = List.copyOf(warnings);
  }
}
