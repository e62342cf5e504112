package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Keys, layouts and replay windows of authenticated UDP links.
 *
 * <p><b>Keys.</b> Each ROUTER_HELLO carries a fresh random nonce of {@value #NONCE_BYTES} bytes.
 * Datagrams from router A to router B on that session use the 16-byte key {@link #key}: the first
 * 16 bytes of HMAC-SHA256 keyed with {@code "bdrp-udp"} and the network's router token (if any)
 * over {@code "bdrp udp v1"}, A and B (u16 each) and A's then B's nonce. A new session means new
 * nonces, new keys, sequence numbers from the start and empty replay windows. Over mutual TLS the
 * nonces are secret, so only the two routers know the keys; without TLS but with a router token,
 * only holders of the token; with neither, anyone who can read the TCP session (but not a blind
 * spoofer).
 *
 * <p><b>{@link UdpProtection#MAC}</b>: the DATA frame as on TCP, then the sequence number (u64,
 * big-endian), then an 8-byte tag: SipHash-2-4 under the key of everything before it, written
 * little-endian. The frame's length field counts the frame only.
 *
 * <p><b>{@link UdpProtection#ENCRYPT}</b>: the sequence number (u64, big-endian), the frame
 * encrypted with AES-128-GCM under the key (nonce: four zero bytes and the sequence number; the
 * sequence number's bytes as associated data), then the 16-byte GCM tag.
 *
 * <p><b>Sequence numbers</b> count from 1 per session and direction for datagrams the JVM sends;
 * copies the kernel fast path sends count from 2<sup>63</sup> + 1 (the top bit set). The receiver
 * keeps a {@link ReplayWindow} for each of the two, and takes a datagram once: one whose sequence
 * number is more than 64 behind the highest seen, or seen already, is dropped as a replay.
 */
public final class DatagramAuth {
  /** Bytes of a hello's nonce. */
  public static final int NONCE_BYTES = 16;

  /** Bytes of a key. */
  public static final int KEY_BYTES = 16;

  /** Bytes a {@link UdpProtection#MAC} datagram adds after the frame: sequence number and tag. */
  public static final int MAC_TRAILER_BYTES = 16;

  /** Bytes {@link UdpProtection#ENCRYPT} adds to a frame: sequence number and GCM tag. */
  public static final int ENCRYPT_OVERHEAD_BYTES = 8 + 16;

  /** The top bit of a sequence number: set on copies the kernel fast path sends. */
  public static final long KERNEL_DOMAIN = Long.MIN_VALUE;

  /**
   * A DRBG, seeded once when the class loads: drawing a nonce reads no file (the platform's default
   * generator reads {@code /dev/urandom} at each draw, on the router's loop for a hello).
   */
  private static final SecureRandom RANDOM = seeded();

  private static SecureRandom seeded() {
    try {
      SecureRandom r = SecureRandom.getInstance("DRBG");
      r.nextBytes(new byte[1]);
      return r;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("DRBG is part of every JDK", e);
    }
  }

  private static final byte[] LABEL = "bdrp udp v1".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] KEY_PREFIX = "bdrp-udp".getBytes(StandardCharsets.US_ASCII);

  private DatagramAuth() {}

  /** A fresh nonce for a hello. */
  public static byte[] newNonce() {
    byte[] n = new byte[NONCE_BYTES];
    RANDOM.nextBytes(n);
    return n;
  }

  /**
   * The key of datagrams from router {@code from} to router {@code to} on the session whose hellos
   * carried {@code fromNonce} (from's) and {@code toNonce} (to's).
   *
   * @param token the network's router token ({@code auth.routerToken}), empty for none
   */
  public static byte[] key(byte[] token, int from, int to, byte[] fromNonce, byte[] toNonce) {
    if (fromNonce.length != NONCE_BYTES || toNonce.length != NONCE_BYTES) {
      throw new IllegalArgumentException("nonces have " + NONCE_BYTES + " bytes");
    }
    try {
      byte[] k = Arrays.copyOf(KEY_PREFIX, KEY_PREFIX.length + token.length);
      System.arraycopy(token, 0, k, KEY_PREFIX.length, token.length);
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(k, "HmacSHA256"));
      mac.update(LABEL);
      mac.update(new byte[] {(byte) (from >>> 8), (byte) from, (byte) (to >>> 8), (byte) to});
      mac.update(fromNonce);
      mac.update(toNonce);
      return Arrays.copyOf(mac.doFinal(), KEY_BYTES);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  /** Bytes {@code p} adds to a frame. */
  public static int overhead(UdpProtection p) {
    return switch (p) {
      case NONE -> 0;
      case MAC -> MAC_TRAILER_BYTES;
      case ENCRYPT -> ENCRYPT_OVERHEAD_BYTES;
    };
  }

  /** The SipHash tag of a MAC datagram's first {@code len} bytes (frame and sequence number). */
  public static long tag(long k0, long k1, ByteBuf datagram, int off, int len) {
    return SipHash.hash(k0, k1, datagram, off, len);
  }

  /** A protection and one direction's key, as SipHash words and, to encrypt, as an AES key. */
  private abstract static class Keyed {
    final UdpProtection protection;
    final long k0;
    final long k1;
    final SecretKeySpec aes;
    final Cipher cipher;

    Keyed(UdpProtection protection, byte[] key) {
      this.protection = protection;
      this.k0 = SipHash.k0(key);
      this.k1 = SipHash.k1(key);
      this.aes =
          protection == UdpProtection.ENCRYPT ? new SecretKeySpec(key, 0, KEY_BYTES, "AES") : null;
      this.cipher = protection == UdpProtection.ENCRYPT ? gcm() : null;
    }
  }

  /**
   * Datagrams to one neighbour on one session: numbers and protects each frame. Not thread-safe
   * (the router's event loop owns it).
   */
  public static final class Sealer extends Keyed {
    private long seq;

    public Sealer(UdpProtection protection, byte[] key) {
      super(protection, key);
    }

    /** The sequence number of the last datagram sealed (0: none yet). */
    public long lastSequence() {
      return seq;
    }

    /**
     * The datagram that carries {@code frame} (its readable bytes); takes over {@code frame}. Under
     * {@link UdpProtection#MAC} the trailer is written after the frame, in place when the buffer
     * has room for it; otherwise (and under {@link UdpProtection#ENCRYPT}) the datagram is a new
     * buffer from {@code alloc} and {@code frame} is released.
     */
    public ByteBuf seal(ByteBufAllocator alloc, ByteBuf frame) {
      if (protection == UdpProtection.NONE) {
        return frame;
      }
      long s = ++seq;
      int len = frame.readableBytes();
      if (protection == UdpProtection.MAC && frame.writableBytes() >= MAC_TRAILER_BYTES) {
        frame.writeLong(s);
        frame.writeLongLE(SipHash.hash(k0, k1, frame, frame.readerIndex(), len + 8));
        return frame;
      }
      try {
        if (protection == UdpProtection.MAC) {
          ByteBuf out = alloc.directBuffer(len + MAC_TRAILER_BYTES);
          out.writeBytes(frame, frame.readerIndex(), len);
          out.writeLong(s);
          out.writeLongLE(SipHash.hash(k0, k1, out, out.readerIndex(), len + 8));
          return out;
        }
        ByteBuf out = alloc.directBuffer(len + ENCRYPT_OVERHEAD_BYTES);
        out.writeLong(s);
        try {
          cipher.init(Cipher.ENCRYPT_MODE, aes, new GCMParameterSpec(128, iv(s)));
          cipher.updateAAD(seqBytes(s));
          int n =
              cipher.doFinal(frame.nioBuffer(frame.readerIndex(), len), out.nioBuffer(8, len + 16));
          out.writerIndex(8 + n);
          return out;
        } catch (GeneralSecurityException e) {
          out.release();
          throw new IllegalStateException("AES-GCM refused a datagram: " + e.getMessage(), e);
        }
      } finally {
        frame.release();
      }
    }
  }

  /** Why {@link Opener#open} refused a datagram. */
  public enum Refusal {
    /** Too short to hold a sequence number and a tag. */
    SHORT,
    /** The tag does not match: forged, altered or under another session's key. */
    MAC,
    /** A sequence number already taken, or too far behind the newest. */
    REPLAY
  }

  /**
   * Datagrams from one neighbour on one session: checks each and takes it once. Not thread-safe.
   */
  public static final class Opener extends Keyed {
    private final ReplayWindow jvm = new ReplayWindow();
    private final ReplayWindow kernel = new ReplayWindow();
    private Refusal refusal;

    public Opener(UdpProtection protection, byte[] key) {
      super(protection, key);
    }

    /** Why the last {@link #open} returned null. */
    public Refusal refusal() {
      return refusal;
    }

    /**
     * The frame {@code datagram} carries, or null (see {@link #refusal()}). Under {@link
     * UdpProtection#MAC} the frame is a slice of {@code datagram}; under {@link
     * UdpProtection#ENCRYPT} a new buffer from {@code alloc} that the caller releases. {@code
     * datagram} itself stays the caller's.
     */
    public ByteBuf open(ByteBufAllocator alloc, ByteBuf datagram) {
      int at = datagram.readerIndex();
      int len = datagram.readableBytes();
      switch (protection) {
        case NONE -> {
          return datagram.slice();
        }
        case MAC -> {
          if (len < MAC_TRAILER_BYTES + Frames.PREFIX_BYTES) {
            refusal = Refusal.SHORT;
            return null;
          }
          long seq = datagram.getLong(at + len - 16);
          long tag = datagram.getLongLE(at + len - 8);
          if (SipHash.hash(k0, k1, datagram, at, len - 8) != tag) {
            refusal = Refusal.MAC;
            return null;
          }
          if (!window(seq).accept(seq)) {
            refusal = Refusal.REPLAY;
            return null;
          }
          return datagram.slice(at, len - MAC_TRAILER_BYTES);
        }
        default -> {
          if (len < ENCRYPT_OVERHEAD_BYTES + Frames.PREFIX_BYTES) {
            refusal = Refusal.SHORT;
            return null;
          }
          long seq = datagram.getLong(at);
          ByteBuf out = alloc.heapBuffer(len - ENCRYPT_OVERHEAD_BYTES);
          try {
            cipher.init(Cipher.DECRYPT_MODE, aes, new GCMParameterSpec(128, iv(seq)));
            cipher.updateAAD(seqBytes(seq));
            ByteBuffer dst = out.nioBuffer(0, len - ENCRYPT_OVERHEAD_BYTES);
            int n = cipher.doFinal(datagram.nioBuffer(at + 8, len - 8), dst);
            out.writerIndex(n);
          } catch (AEADBadTagException e) {
            out.release();
            refusal = Refusal.MAC;
            return null;
          } catch (GeneralSecurityException e) {
            out.release();
            refusal = Refusal.MAC;
            return null;
          }
          if (!window(seq).accept(seq)) {
            out.release();
            refusal = Refusal.REPLAY;
            return null;
          }
          return out;
        }
      }
    }

    /**
     * The highest sequence number taken in the JVM's domain ({@code kernel} false) or the kernel's
     * (true, with {@link #KERNEL_DOMAIN} set), 0 / {@link #KERNEL_DOMAIN} when none yet.
     */
    public long highest(boolean kernelDomain) {
      return kernelDomain ? KERNEL_DOMAIN | kernel.highest() : jvm.highest();
    }

    private ReplayWindow window(long seq) {
      return seq < 0 ? kernel : jvm;
    }
  }

  /**
   * The sequence numbers of one sender domain taken so far: the highest and the 63 below it. Not
   * thread-safe.
   */
  public static final class ReplayWindow {
    private long highest; // of the 63 low bits; 0: none yet
    private long seen; // bit i: highest - i taken

    /** The highest number taken (without the domain bit), 0 if none. */
    public long highest() {
      return highest;
    }

    /** Takes {@code seq} (its domain bit ignored) if it is new and recent enough. */
    public boolean accept(long seq) {
      long v = seq & Long.MAX_VALUE;
      if (v == 0) {
        return false;
      }
      if (v > highest) {
        long shift = v - highest;
        seen = shift >= 64 ? 1L : (seen << shift) | 1L;
        highest = v;
        return true;
      }
      long back = highest - v;
      if (back >= 64 || (seen >>> back & 1L) != 0) {
        return false;
      }
      seen |= 1L << back;
      return true;
    }
  }

  private static Cipher gcm() {
    try {
      return Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is part of every JDK", e);
    }
  }

  private static byte[] iv(long seq) {
    byte[] iv = new byte[12];
    for (int i = 0; i < 8; i++) {
      iv[4 + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return iv;
  }

  private static byte[] seqBytes(long seq) {
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (seq >>> (56 - 8 * i));
    }
    return b;
  }
}
