package io.bdrp.transport;

import java.net.Inet4Address;
import java.nio.ByteBuffer;

/**
 * A UDP datagram as a whole Ethernet frame (IPv4, no options, don't-fragment, TTL 64, both
 * checksums computed), for tools and tests that put DATA datagrams on a wire themselves: the kernel
 * fast path's packet tests and the testbed's transit benchmark.
 */
public final class EthernetFrames {
  private EthernetFrames() {}

  /** Bytes of the Ethernet, IPv4 and UDP headers before the payload. */
  public static final int HEADERS = 14 + 20 + 8;

  /**
   * The frame of a UDP datagram.
   *
   * @param dstMac the destination Ethernet address (6 bytes)
   * @param srcMac the source Ethernet address (6 bytes)
   */
  public static byte[] udp(
      byte[] dstMac,
      byte[] srcMac,
      Inet4Address src,
      int srcPort,
      Inet4Address dst,
      int dstPort,
      byte[] payload) {
    if (dstMac.length != 6 || srcMac.length != 6) {
      throw new IllegalArgumentException("Ethernet addresses have 6 bytes");
    }
    int udpLen = 8 + payload.length;
    if (20 + udpLen > 0xffff) {
      throw new IllegalArgumentException("payload of " + payload.length + " bytes is too large");
    }
    ByteBuffer b = ByteBuffer.allocate(14 + 20 + udpLen);
    b.put(dstMac).put(srcMac).putShort((short) 0x0800);
    byte[] s = src.getAddress();
    byte[] d = dst.getAddress();
    int ip = b.position();
    b.put((byte) 0x45)
        .put((byte) 0)
        .putShort((short) (20 + udpLen))
        .putShort((short) 1)
        .putShort((short) 0x4000)
        .put((byte) 64)
        .put((byte) 17)
        .putShort((short) 0)
        .put(s)
        .put(d);
    b.putShort(ip + 10, (short) checksum(b.array(), ip, 20, 0));
    int udp = b.position();
    b.putShort((short) srcPort)
        .putShort((short) dstPort)
        .putShort((short) udpLen)
        .putShort((short) 0)
        .put(payload);
    long pseudo = sum(s, 0, 4) + sum(d, 0, 4) + 17 + udpLen;
    int c = checksum(b.array(), udp, udpLen, pseudo);
    b.putShort(udp + 6, (short) (c == 0 ? 0xffff : c));
    return b.array();
  }

  /** An Ethernet address written as six hex pairs separated by colons. */
  public static byte[] mac(String text) {
    String[] parts = text.split(":");
    if (parts.length != 6) {
      throw new IllegalArgumentException("not an Ethernet address: " + text);
    }
    byte[] m = new byte[6];
    for (int i = 0; i < 6; i++) {
      m[i] = (byte) Integer.parseInt(parts[i], 16);
    }
    return m;
  }

  private static long sum(byte[] b, int at, int len) {
    long s = 0;
    for (int i = 0; i < len; i += 2) {
      s += ((b[at + i] & 0xff) << 8) | (i + 1 < len ? b[at + i + 1] & 0xff : 0);
    }
    return s;
  }

  private static int checksum(byte[] b, int at, int len, long seed) {
    long s = seed + sum(b, at, len);
    while ((s >> 16) != 0) {
      s = (s & 0xffff) + (s >> 16);
    }
    return (int) (~s & 0xffff);
  }
}
