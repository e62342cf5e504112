/**
 * The wire protocol, in one place: the frame layer ({@link io.bdrp.transport.Frames}, {@link
 * io.bdrp.transport.FrameDecoder}), the frame types and error codes, the client-session frames as
 * records with their codec and Netty handlers, the router-link frames ({@link
 * io.bdrp.transport.RouterHello} and its checks, {@link io.bdrp.transport.RouterFrameCodec} and its
 * handlers), the DATA header flyweight ({@link io.bdrp.transport.DataHeader}) and the handler that
 * answers protocol errors. The router-link frames carry the routing module's control records, an
 * optional dependency: the client library uses this module for its sessions and never sees routing.
 * The layouts are in {@code docs/wire-protocol.md}.
 */
package io.bdrp.transport;
