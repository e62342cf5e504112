package io.bdrp.encoding;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * An immutable message: a set of typed attributes, each with a unique non-empty name, plus an
 * opaque body that is carried but never matched.
 *
 * <p>Attributes are held sorted by name in parallel arrays, so lookup by name is a binary search
 * and iteration allocates nothing. Build one with {@link #builder()}.
 */
public final class Message implements Attributes {
  private static final byte[] EMPTY = new byte[0];

  private final String[] names;
  private final Value[] values;
  private final byte[] body;

  private Message(String[] names, Value[] values, byte[] body) {
    this.names = names;
    this.values = values;
    this.body = body;
  }

  public static Builder builder() {
    return new Builder(8);
  }

  /**
   * A builder with room for {@code attributes} attributes (a hint: it takes more if given more). A
   * message of exactly that many is built without copying them: a decoder that reads the count
   * first builds each message with no array but the message's own.
   *
   * @throws IllegalArgumentException if {@code attributes} is negative or above {@link
   *     Limits#MAX_ATTRIBUTES}
   */
  public static Builder builder(int attributes) {
    if (attributes < 0 || attributes > Limits.MAX_ATTRIBUTES) {
      throw new IllegalArgumentException(
          "room for " + attributes + " attributes: outside 0.." + Limits.MAX_ATTRIBUTES);
    }
    return new Builder(attributes);
  }

  /**
   * A message with this message's attribute names, {@code values} (value {@code i} for {@link
   * #name(int) name(i)}) and {@code body}. For a decoder of a stream of messages with the same
   * names: they were checked and sorted once, and the new message shares them. Both arrays become
   * the new message's own: the caller must not change them afterwards.
   *
   * @throws IllegalArgumentException if {@code values} does not have one value for each name, a
   *     value is null, or the body is longer than {@link Limits#MAX_BODY_BYTES}
   */
  public Message withValues(Value[] values, byte[] body) {
    if (values.length != names.length) {
      throw new IllegalArgumentException(
          values.length + " values for a message of " + names.length + " attributes");
    }
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        throw new IllegalArgumentException(
            "attribute " + Strings.quote(names[i]) + " has no value");
      }
    }
    if (body.length > Limits.MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          "body is " + body.length + " bytes, more than the limit of " + Limits.MAX_BODY_BYTES);
    }
    return new Message(names, values, body.length == 0 ? EMPTY : body);
  }

  /** Number of attributes. */
  @Override
  public int size() {
    return names.length;
  }

  /** Name of the i-th attribute in name order. */
  @Override
  public String name(int i) {
    return names[i];
  }

  /** Value of the i-th attribute in name order. */
  @Override
  public Value value(int i) {
    return values[i];
  }

  /** Index of the attribute with this name, or a negative number if there is none. */
  @Override
  public int indexOf(String name) {
    return Arrays.binarySearch(names, name);
  }

  /** The value of the named attribute, or {@code null}. */
  public Value get(String name) {
    int i = indexOf(name);
    return i >= 0 ? values[i] : null;
  }

  /** The body; the returned array is a copy. */
  public byte[] body() {
    return body.length == 0 ? EMPTY : body.clone();
  }

  /** Length of the body in bytes. */
  public int bodyLength() {
    return body.length;
  }

  /** Copies the body into {@code dst} at {@code offset}. */
  public void copyBody(byte[] dst, int offset) {
    System.arraycopy(body, 0, dst, offset, body.length);
  }

  /** Writes the body into {@code dst} at its position, which it advances. */
  public void copyBody(java.nio.ByteBuffer dst) {
    dst.put(body);
  }

  /** The body as a read-only buffer over the message's own bytes (no copy). */
  public java.nio.ByteBuffer bodyBuffer() {
    return java.nio.ByteBuffer.wrap(body).asReadOnlyBuffer();
  }

  /** The attributes as an ordered map (a copy). */
  public Map<String, Value> attributes() {
    TreeMap<String, Value> m = new TreeMap<>();
    for (int i = 0; i < names.length; i++) {
      m.put(names[i], values[i]);
    }
    return m;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Message m
        && Arrays.equals(names, m.names)
        && Arrays.equals(values, m.values)
        && Arrays.equals(body, m.body);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(names) * 31 + Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < names.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(names[i]).append('=').append(values[i]);
    }
    if (body.length > 0) {
      sb.append(" | ").append(body.length).append(" body bytes");
    }
    return sb.append(']').toString();
  }

  /** Collects attributes; rejects bad names, duplicates and oversize values with a reason. */
  public static final class Builder {
    // Sorted by name; messages arrive from the wire already in name order, so a put is an append.
    private String[] names;
    private Value[] values;
    private int count;
    private byte[] body = EMPTY;

    /** Whether a built message holds {@link #names} and {@link #values}: copied before a put. */
    private boolean shared;

    private Builder(int room) {
      names = new String[room];
      values = new Value[room];
    }

    /** Adds an attribute; fails if the name is bad or already present. */
    public Builder put(String name, Value value) {
      Strings.checkName(name);
      if (value == null) {
        throw new IllegalArgumentException("attribute " + Strings.quote(name) + " has no value");
      }
      int at =
          count > 0 && names[count - 1].compareTo(name) < 0
              ? -count - 1
              : Arrays.binarySearch(names, 0, count, name);
      if (at >= 0) {
        throw new IllegalArgumentException("duplicate attribute name " + Strings.quote(name));
      }
      if (count >= Limits.MAX_ATTRIBUTES) {
        throw new IllegalArgumentException(
            "message has more than " + Limits.MAX_ATTRIBUTES + " attributes");
      }
      int i = -at - 1;
      if (count == names.length || shared) {
        int room = count == names.length ? Math.max(4, count * 2) : names.length;
        names = Arrays.copyOf(names, room);
        values = Arrays.copyOf(values, room);
        shared = false;
      }
      System.arraycopy(names, i, names, i + 1, count - i);
      System.arraycopy(values, i, values, i + 1, count - i);
      names[i] = name;
      values[i] = value;
      count++;
      return this;
    }

    public Builder put(String name, String value) {
      return put(name, Value.of(value));
    }

    public Builder put(String name, long value) {
      return put(name, Value.of(value));
    }

    public Builder put(String name, double value) {
      return put(name, Value.of(value));
    }

    public Builder put(String name, boolean value) {
      return put(name, Value.of(value));
    }

    /** Sets the body (copied); at most {@link Limits#MAX_BODY_BYTES}. */
    public Builder body(byte[] body) {
      if (body.length > Limits.MAX_BODY_BYTES) {
        throw new IllegalArgumentException(
            "body is " + body.length + " bytes, more than the limit of " + Limits.MAX_BODY_BYTES);
      }
      this.body = body.length == 0 ? EMPTY : body.clone();
      return this;
    }

    /** Sets the body to the remaining bytes of {@code src} (copied; its position is unchanged). */
    public Builder body(java.nio.ByteBuffer src) {
      int n = src.remaining();
      if (n > Limits.MAX_BODY_BYTES) {
        throw new IllegalArgumentException(
            "body is " + n + " bytes, more than the limit of " + Limits.MAX_BODY_BYTES);
      }
      byte[] b = n == 0 ? EMPTY : new byte[n];
      src.get(src.position(), b);
      this.body = b;
      return this;
    }

    public Message build() {
      if (count == names.length) {
        shared = true; // full: the message takes the arrays as they are
        return new Message(names, values, body);
      }
      return new Message(Arrays.copyOf(names, count), Arrays.copyOf(values, count), body);
    }
  }
}
