package io.bdrp.router;

import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/** Reading a router's frames off a plain socket, for tests that play a misbehaving peer. */
final class RawFrames {
  private RawFrames() {}

  /**
   * Reads up to {@code frames} whole frames and returns the first ERROR among them, or null if none
   * came before the end of the stream.
   */
  static ClientFrame.Error firstError(InputStream stream, int frames) throws IOException {
    DataInputStream in = new DataInputStream(stream);
    for (int i = 0; i < frames; i++) {
      int length;
      try {
        length = in.readInt();
      } catch (EOFException eof) {
        return null;
      }
      byte[] rest = new byte[length];
      in.readFully(rest);
      if ((rest[1] & 0xff) == FrameType.ERROR.number()) {
        ByteBuf f = Unpooled.buffer(4 + length).writeInt(length).writeBytes(rest);
        try {
          return (ClientFrame.Error) ClientFrameCodec.decode(f);
        } finally {
          f.release();
        }
      }
    }
    return null;
  }
}
