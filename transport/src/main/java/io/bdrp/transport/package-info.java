/**
 * The wire protocol shared by routers and clients: the frame layer ({@link
 * io.bdrp.transport.Frames}, {@link io.bdrp.transport.FrameDecoder}), the frame types and error
 * codes, the client-session frames as records with their codec and Netty handlers, the DATA header
 * flyweight ({@link io.bdrp.transport.DataHeader}) and the handler that answers protocol errors.
 * Depends on the encoding module only: the client library uses it and never sees routing. The
 * layouts are in {@code docs/wire-protocol.md}.
 */
package io.bdrp.transport;
