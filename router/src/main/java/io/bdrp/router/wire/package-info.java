/**
 * The router-link side of the wire protocol: {@link io.bdrp.router.wire.RouterHello}, the routing
 * module's control messages as frames ({@link io.bdrp.router.wire.RouterFrameCodec}) and the Netty
 * handlers that read and write them. Lives in the router module because it needs {@code
 * io.bdrp.routing.ControlMessage}; the transport module, which clients use too, never sees routing.
 * The layouts are in {@code docs/wire-protocol.md}.
 */
package io.bdrp.router.wire;
