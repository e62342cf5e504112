/**
 * BRITE topology files for bdrp: an immutable {@link io.bdrp.topologies.Topology} model with an
 * undirected routing view, a tolerant {@link io.bdrp.topologies.BriteReader} for files written by
 * both the Java and the C++ BRITE, a {@link io.bdrp.topologies.BriteWriter} that writes Java-BRITE
 * style files, seeded router-level Waxman and Barabási–Albert generators ({@link
 * io.bdrp.topologies.BriteGenerator}), and the topologies bundled with bdrp ({@link
 * io.bdrp.topologies.Bundled}).
 *
 * <p>The module depends on the JDK only.
 */
package io.bdrp.topologies;
