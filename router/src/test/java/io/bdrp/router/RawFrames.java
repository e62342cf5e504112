package io.bdrp.router;

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
