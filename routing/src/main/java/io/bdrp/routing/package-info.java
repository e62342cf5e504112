/**
 * The routing state of a B-DRP router, as pure state machines: UNICAST by a loop-free distance
 * vector ({@link io.bdrp.routing.DistanceVector}), PREDICATES by flooding ({@link
 * io.bdrp.routing.PredicateTable}), LOCAL-PREDICATES ({@link io.bdrp.routing.LocalPredicates}), and
 * the data plane ({@link io.bdrp.routing.DataPlane}): the match once at the ingress router and
 * dynamic receiver partitioning over immutable snapshots ({@link io.bdrp.routing.ForwardingTable}).
 *
 * <p>Nothing here opens a socket or starts a thread: neighbours are {@link io.bdrp.routing.Face}s
 * for control and a {@link io.bdrp.routing.DataPlane.Output} for data, and time is a {@link
 * io.bdrp.routing.Clock}, so the same code runs in the router daemon, in the discrete-event
 * simulator and in the in-memory tests.
 */
package io.bdrp.routing;
