package io.bdrp.routing;

import io.bdrp.encoding.bloom.EncodedIndex;

/**
 * What the forwarding path reads, as one immutable value: UNICAST as a {@link ForwardingTable} and
 * PREDICATES as an {@link EncodedIndex}. The control path publishes a new snapshot when either
 * changes; a forwarding thread takes one reference per packet, so a decision never mixes two
 * versions.
 *
 * @param routes next hops, per-neighbour destination bitmaps, broadcast children
 * @param predicates the index over the other routers' encoded predicates
 */
public record RouteSnapshot(ForwardingTable routes, EncodedIndex predicates) {}
