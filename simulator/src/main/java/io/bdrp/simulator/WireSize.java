package io.bdrp.simulator;

import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;

/**
 * Bytes a control message takes on a router link, for the simulator's control-traffic figures: a
 * 6-byte frame header (length, version, type), then fixed-width fields — router numbers 2 bytes,
 * epochs and advertisement sequence numbers 8, route sequence numbers 4, metrics 2, flags 1 — and
 * encoded predicates in their binary codec's layout.
 */
public final class WireSize {
  /** Frame length (4), version (1), type (1). */
  public static final int FRAME_HEADER = 6;

  /** Destination (2), epoch (8), seqno (4), metric (2), flags (1). */
  public static final int ROUTE = 17;

  private WireSize() {}

  /** The size of {@code m} in bytes. */
  public static int of(ControlMessage m) {
    return FRAME_HEADER
        + switch (m) {
          case Hello h -> 2 + 8 + 8;
          case RouteUpdate u -> 2 + 2 + u.routes().size() * ROUTE;
          case SeqnoRequest r -> 2 + 2 + 8 + 4 + 1;
          case PredicateAd a -> 2 + 2 + 8 + 8 + EncodedPredicateCodec.encodedLength(a.predicate());
          case PredicateRequest r -> 2 + 2;
        };
  }
}
