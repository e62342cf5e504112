package io.bdrp.encoding.codec;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The attributes of an encoded message ({@link MessageCodec}'s layout), decoded in place for
 * matching, into arrays this object reuses: the forwarding path matches each message it receives
 * without building a {@link io.bdrp.encoding.Message}. The body is checked for its length only.
 *
 * <p><b>What it allocates.</b> Nothing for an attribute whose name and value it has decoded before
 * and still holds: names and values (up to {@value #MAX_KEPT_BYTES} bytes of encoding) are kept
 * apart, each under its encoding byte for byte, in a table of {@value #SLOTS} slots, in buckets of
 * four indexed by a hash of the bytes, a bucket's slots replaced in turn. A network's messages
 * repeat their names and most of their values (symbols, states, small numbers), so most attributes
 * are found there. An attribute not found is decoded by {@link MessageCodec}'s own reader and costs
 * its name's and value's objects, as a whole decode would. The table holds at most {@value #SLOTS}
 * names and values of at most {@value #MAX_KEPT_BYTES} bytes, whatever the input.
 *
 * <p><b>What it takes.</b> {@link #wrap} takes exactly the messages that {@link
 * MessageCodec#decode} decodes, fill their bytes and list their attributes in name order (as every
 * encoder does: {@link MessageCodec#encode} writes them so), and gives the attributes that decode
 * would give. For anything else (a fault, trailing bytes, attributes out of order) it answers
 * false, and the caller decodes with {@link MessageCodec#decode}, which settles the outcome: so
 * taking a message here never changes whether it is accepted.
 *
 * <p>Owned by one thread (the router's event loop); the table is this object's.
 */
public final class MessageView implements Attributes {
  /** Slots of the table of decoded attributes (a power of two). */
  static final int SLOTS = 4096;

  /** Attributes with a longer encoding are decoded each time, not kept. */
  static final int MAX_KEPT_BYTES = 256;

  private byte[] bytes = new byte[512];
  private ByteBuffer wrapped = ByteBuffer.wrap(bytes);
  private String[] names = new String[16];
  private Value[] values = new Value[16];
  private int size;

  /** Slots of a bucket: a new encoding replaces the bucket's slots in turn. */
  private static final int WAYS = 4;

  private final byte[][] keys = new byte[SLOTS][];
  private final int[] keyTags = new int[SLOTS];
  private final String[] keptNames = new String[SLOTS]; // for a name's encoding
  private final Value[] keptValues = new Value[SLOTS]; // for a value's
  private final byte[] victims = new byte[SLOTS / WAYS];

  /**
   * The buffer to copy an encoded message into, from index 0, before {@link #wrap}: at least {@code
   * length} bytes, reused from one message to the next.
   */
  public byte[] buffer(int length) {
    if (bytes.length < length) {
      bytes = new byte[Math.max(length, 2 * bytes.length)];
      wrapped = ByteBuffer.wrap(bytes);
    }
    return bytes;
  }

  /**
   * Decodes the attributes of the message in {@code buffer()[0..length)}; false if it is not taken
   * here (see "What it takes"), and then this view is empty.
   */
  public boolean wrap(int length) {
    size = 0;
    byte[] b = bytes;
    if (length < 2 || length > b.length) {
      return false;
    }
    int count = u16(b, 0);
    if (count > Limits.MAX_ATTRIBUTES) {
      return false;
    }
    if (names.length < count) {
      names = new String[Math.max(count, 2 * names.length)];
      values = new Value[names.length];
    }
    int p = 2;
    for (int i = 0; i < count; i++) {
      int start = p;
      if (p + 2 > length) {
        return false;
      }
      ValueType type = ValueType.fromWireTag(b[p]);
      if (type == null) {
        return false;
      }
      p += 2 + (b[p + 1] & 0xff);
      switch (type) {
        case STRING -> {
          if (p + 2 > length) {
            return false;
          }
          p += 2 + u16(b, p);
        }
        case INTEGER, DOUBLE -> p += 8;
        case BOOLEAN -> p += 1;
      }
      if (p > length) {
        return false;
      }
      // Names and values are kept apart, each by its encoding: a network has few names and,
      // per name, few values, but far more pairs of them.
      int nameAt = start + 1; // name length and name
      int valueAt = nameAt + 1 + (b[nameAt] & 0xff); // tag at start, then the value
      int ns = find(b, nameAt, valueAt, -1);
      int vs = find(b, valueAt, p, b[start]);
      String name;
      Value value;
      if (ns >= 0 && vs >= 0) {
        name = keptNames[ns];
        value = keptValues[vs];
      } else {
        // Not held: decoded, with every check, by the reader MessageCodec.decode uses.
        try {
          WireReader r = new WireReader(wrapped.limit(p).position(start));
          ValueType t = r.typeTag();
          name = r.name();
          value = r.value(t);
        } catch (CodecException | IllegalArgumentException e) {
          return false;
        } finally {
          wrapped.clear();
        }
        if (ns < 0) {
          keptNames[keep(b, nameAt, valueAt, -1)] = name;
        }
        if (vs < 0 && p - valueAt <= MAX_KEPT_BYTES) {
          keptValues[keep(b, valueAt, p, b[start])] = value;
        }
      }
      // Out of name order or a name repeated: MessageCodec.decode sorts, or refuses, those.
      if (i > 0 && names[i - 1].compareTo(name) >= 0) {
        return false;
      }
      names[i] = name;
      values[i] = value;
    }
    if (p + 4 > length) {
      return false;
    }
    long body = ((long) u16(b, p) << 16) | u16(b, p + 2);
    if (body > Limits.MAX_BODY_BYTES || p + 4 + body != length) {
      return false;
    }
    size = count;
    return true;
  }

  private static int u16(byte[] b, int at) {
    return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
  }

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INTS =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * The first slot of the bucket of the encoding {@code b[from..to)}, with {@code tag} (a value's
   * type tag, or -1 for a name) hashed in. Most encodings are a name or a small value of 4 to 16
   * bytes: those are read as two words that together cover every byte (they overlap below 8 or 16
   * bytes); others byte by byte.
   */
  private static int bucket(byte[] b, int from, int to, int tag) {
    int n = to - from;
    long x;
    if (n >= 8 && n <= 16) {
      x = (long) LONGS.get(b, from) * 0x9E37_79B9_7F4A_7C15L ^ (long) LONGS.get(b, to - 8);
    } else if (n >= 4 && n < 8) {
      x = ((long) (int) INTS.get(b, from) << 32) ^ ((int) INTS.get(b, to - 4) & 0xFFFF_FFFFL);
    } else {
      x = 0;
      for (int i = from; i < to; i++) {
        x = 31 * x + b[i];
      }
    }
    x = (x + 31L * tag + n) * 0xC2B2_AE3D_27D4_EB4FL;
    int h = (int) (x >>> 32) ^ (int) x;
    return ((h ^ (h >>> 16)) & (SLOTS - 1)) & ~(WAYS - 1);
  }

  /** The slot holding the encoding {@code b[from..to)} with {@code tag}, or -1. */
  private int find(byte[] b, int from, int to, int tag) {
    int first = bucket(b, from, to, tag);
    for (int s = first; s < first + WAYS; s++) {
      byte[] k = keys[s];
      if (k != null && keyTags[s] == tag && same(k, b, from, to)) {
        return s;
      }
    }
    return -1;
  }

  /**
   * Whether {@code k} holds the bytes {@code b[from..to)}. Names and most values are a few bytes:
   * from 4 to 16, two words that together cover every byte are compared, sooner than {@link
   * Arrays#equals(byte[], int, int, byte[], int, int)} with its range checks and vectorised set-up.
   */
  private static boolean same(byte[] k, byte[] b, int from, int to) {
    int n = k.length;
    if (n != to - from) {
      return false;
    }
    if (n >= 8 && n <= 16) {
      return (long) LONGS.get(k, 0) == (long) LONGS.get(b, from)
          && (long) LONGS.get(k, n - 8) == (long) LONGS.get(b, to - 8);
    }
    if (n >= 4 && n < 8) {
      return (int) INTS.get(k, 0) == (int) INTS.get(b, from)
          && (int) INTS.get(k, n - 4) == (int) INTS.get(b, to - 4);
    }
    if (n > 16) {
      return Arrays.equals(k, 0, n, b, from, to);
    }
    for (int i = 0; i < n; i++) {
      if (k[i] != b[from + i]) {
        return false;
      }
    }
    return true;
  }

  /** A slot for the encoding {@code b[from..to)} with {@code tag}: its bucket's next, in turn. */
  private int keep(byte[] b, int from, int to, int tag) {
    int first = bucket(b, from, to, tag);
    int s = first + (victims[first / WAYS]++ & (WAYS - 1));
    keys[s] = Arrays.copyOfRange(b, from, to);
    keyTags[s] = tag;
    keptNames[s] = null;
    keptValues[s] = null;
    return s;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public String name(int i) {
    return names[i];
  }

  @Override
  public Value value(int i) {
    return values[i];
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < size; i++) {
      sb.append(i > 0 ? ", " : "").append(names[i]).append('=').append(values[i]);
    }
    return sb.append(']').toString();
  }
}
