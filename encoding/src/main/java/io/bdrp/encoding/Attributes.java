package io.bdrp.encoding;

/**
 * The typed attributes of a message, in name order, as matching reads them: the exact matcher and
 * the Bloom encoder take any implementation. {@link Message} is one; {@link
 * io.bdrp.encoding.codec.MessageView} is another, a decoder's reusable view of a message on the
 * wire, so that the forwarding path matches without building a message per packet.
 */
public interface Attributes {
  /** Number of attributes. */
  int size();

  /** Name of the i-th attribute; names are distinct and ascend ({@link String#compareTo}). */
  String name(int i);

  /** Value of the i-th attribute. */
  Value value(int i);

  /** Index of the attribute with this name, or a negative number if there is none. */
  default int indexOf(String name) {
    int lo = 0;
    int hi = size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = name(mid).compareTo(name);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -(lo + 1);
  }
}
