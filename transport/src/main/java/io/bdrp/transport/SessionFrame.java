package io.bdrp.transport;

/**
 * The frames that are valid on every link, client session or router link alike: ERROR, PING, PONG
 * and BYE. Router links decode them with the same code as client sessions ({@link
 * ClientFrameCodec#decodeSession}), so that {@link ProtocolErrorHandler} serves both.
 */
public sealed interface SessionFrame extends ClientFrame
    permits ClientFrame.Error, ClientFrame.Ping, ClientFrame.Pong, ClientFrame.Bye {}
