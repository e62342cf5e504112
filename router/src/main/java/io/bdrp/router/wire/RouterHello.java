package io.bdrp.router.wire;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.transport.Frames;
import java.util.Arrays;
import java.util.Objects;

/**
 * First frame of a router link, sent by both sides: the sender's router number (0..65535), the
 * epoch it drew at start, the Bloom parameters of its encoded predicates and an authentication
 * token (at most {@link Frames#MAX_TOKEN_BYTES} bytes; empty for none). The receiver refuses the
 * link with {@code INCOMPATIBLE_PEER} unless the Bloom parameters equal its own, and with {@code
 * NOT_AUTHORIZED} unless the token is accepted.
 */
public record RouterHello(int routerNumber, long epoch, BloomParameters bloom, byte[] authToken) {
  public RouterHello {
    Frames.checkU16("routerNumber", routerNumber);
    Objects.requireNonNull(bloom, "bloom");
    authToken = Frames.checkToken(authToken);
  }

  @Override
  public byte[] authToken() {
    return authToken.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouterHello h
        && routerNumber == h.routerNumber
        && epoch == h.epoch
        && bloom.equals(h.bloom)
        && Arrays.equals(authToken, h.authToken);
  }

  @Override
  public int hashCode() {
    return Objects.hash(routerNumber, epoch, bloom, Arrays.hashCode(authToken));
  }

  @Override
  public String toString() {
    return "RouterHello[routerNumber="
        + routerNumber
        + ", epoch="
        + epoch
        + ", bloom="
        + bloom
        + ", authToken="
        + authToken.length
        + " bytes]";
  }
}
