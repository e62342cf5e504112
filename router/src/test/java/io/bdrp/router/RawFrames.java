package io.bdrp.router;

import io.bdrp.routing.ControlMessage;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.RouterFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Writing frames to and reading a router's frames off a plain socket, for tests that play a
 * misbehaving peer.
 */
final class RawFrames {
  private RawFrames() {}

  /** The bytes of a client frame, length field included. */
  static byte[] client(ClientFrame f) {
    return bytes(ClientFrameCodec.encode(Unpooled.buffer().alloc(), f));
  }

  /** The bytes of a router frame, length field included. */
  static byte[] router(Object frame) {
    return bytes(RouterFrameCodec.encode(Unpooled.buffer().alloc(), frame));
  }

  private static byte[] bytes(ByteBuf b) {
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** Reads one whole frame, length field included, or returns null at the end of the stream. */
  static ByteBuf readFrame(InputStream stream) throws IOException {
    DataInputStream in = new DataInputStream(stream);
    int length;
    try {
      length = in.readInt();
    } catch (EOFException eof) {
      return null;
    }
    byte[] rest = new byte[length];
    in.readFully(rest);
    return Unpooled.buffer(4 + length).writeInt(length).writeBytes(rest);
  }

  /**
   * Plays the distance-vector side of neighbour {@code self} (incarnation {@code epoch}) on a raw
   * router session that has sent its ROUTER_HELLO: answers the router's hello with the echo of its
   * epoch (the adjacency comes up) and advertises a route to itself, so that the router has a route
   * to it. The data plane refuses DATA whose source it has no route to. Frames the router sends
   * meanwhile are read and discarded up to its hello. Returns the router's epoch.
   */
  static long becomeReachable(java.net.Socket s, int self, long epoch) throws IOException {
    java.io.OutputStream out = s.getOutputStream();
    out.write(router(new ControlMessage.Hello(self, epoch, 0)));
    out.flush();
    long theirs = 0;
    while (theirs == 0) {
      ByteBuf f = readFrame(s.getInputStream());
      if (f == null) {
        throw new EOFException("the stream ended before the router's hello");
      }
      try {
        if (RouterFrameCodec.decode(f) instanceof ControlMessage.Hello h) {
          theirs = h.epoch();
        }
      } finally {
        f.release();
      }
    }
    out.write(router(new ControlMessage.Hello(self, epoch, theirs)));
    out.write(
        router(
            new ControlMessage.RouteUpdate(
                self, java.util.List.of(new ControlMessage.Route(self, epoch, 0, 0, false)))));
    out.flush();
    return theirs;
  }

  /** Reads one frame and decodes it as a client-session frame. */
  static ClientFrame readClientFrame(InputStream stream) throws IOException {
    ByteBuf f = readFrame(stream);
    if (f == null) {
      throw new EOFException("the stream ended before a frame");
    }
    try {
      return ClientFrameCodec.decode(f);
    } finally {
      f.release();
    }
  }

  /**
   * Reads up to {@code frames} whole frames and returns the first ERROR among them, or null if none
   * came before the end of the stream.
   */
  static ClientFrame.Error firstError(InputStream stream, int frames) throws IOException {
    for (int i = 0; i < frames; i++) {
      ByteBuf f = readFrame(stream);
      if (f == null) {
        return null;
      }
      try {
        if (f.getUnsignedByte(Frames.TYPE_OFFSET) == FrameType.ERROR.number()) {
          return (ClientFrame.Error) ClientFrameCodec.decode(f);
        }
      } finally {
        f.release();
      }
    }
    return null;
  }
}
