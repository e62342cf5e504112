package io.bdrp.transport;

import java.util.Arrays;

/**
 * Where a neighbour reaches this router's end of a data transport besides TCP, carried in the
 * {@link RouterHello}: the transport's name ({@code rdma}, {@code shm}) and its endpoint, bytes
 * only that transport reads (an RDMA queue pair and ring, a ring file). The hello does not look
 * inside the bytes: the transport that reads them validates them, as input from a neighbour. A
 * router ignores endpoints whose name it does not know, so a new one needs no new revision; {@code
 * admin} ({@link AdminEndpoint}) uses this to tell where the sender's admin API listens.
 *
 * @param transport 1..{@value #MAX_NAME_BYTES} bytes of {@code [a-z0-9-]}, starting with a letter
 * @param endpoint 0..{@value #MAX_ENDPOINT_BYTES} bytes
 */
public record TransportEndpoint(String transport, byte[] endpoint) {
  /** Longest transport name, in bytes (ASCII). */
  public static final int MAX_NAME_BYTES = 32;

  /** Largest endpoint, in bytes. */
  public static final int MAX_ENDPOINT_BYTES = 256;

  /** Most endpoints in one hello. */
  public static final int MAX_ENDPOINTS = 8;

  public TransportEndpoint {
    String why = nameProblem(transport);
    if (why != null) {
      throw new IllegalArgumentException(why);
    }
    endpoint = endpoint.clone();
    if (endpoint.length > MAX_ENDPOINT_BYTES) {
      throw new IllegalArgumentException(
          "the endpoint of transport "
              + transport
              + " has "
              + endpoint.length
              + " bytes, more than "
              + MAX_ENDPOINT_BYTES);
    }
  }

  /** Why {@code name} is not a transport name, or null when it is. */
  static String nameProblem(String name) {
    if (name == null || name.isEmpty() || name.length() > MAX_NAME_BYTES) {
      return "a transport name has 1.."
          + MAX_NAME_BYTES
          + " characters, not "
          + (name == null ? "none" : name.length());
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (i > 0 && ((c >= '0' && c <= '9') || c == '-'));
      if (!ok) {
        return "transport name \""
            + printable(name)
            + "\" has a character other than [a-z0-9-] (or does not start with a letter) at "
            + i;
      }
    }
    return null;
  }

  private static String printable(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
    }
    return b.toString();
  }

  @Override
  public byte[] endpoint() {
    return endpoint.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TransportEndpoint e
        && transport.equals(e.transport)
        && Arrays.equals(endpoint, e.endpoint);
  }

  @Override
  public int hashCode() {
    return 31 * transport.hashCode() + Arrays.hashCode(endpoint);
  }

  @Override
  public String toString() {
    return "TransportEndpoint[" + transport + ", " + endpoint.length + " bytes]";
  }
}
