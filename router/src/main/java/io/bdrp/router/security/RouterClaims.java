package io.bdrp.router.security;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.OriginAuthority;
import io.bdrp.routing.RoutingNode;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a router takes part in signed origin claims (see {@link OriginKeys}): with mutual TLS from
 * files it signs its own claims with its certificate's key and verifies every other router's; after
 * the TLS files are reloaded it signs with the new ones. Without mutual TLS from files claims are
 * neither signed nor verified.
 */
public final class RouterClaims {
  private static final Logger log = LoggerFactory.getLogger(RouterClaims.class);

  private RouterClaims() {}

  /**
   * The router's authority over claims, made the routing state's and counted in the metrics, or
   * null without mutual TLS from files. Reads the TLS files: on the thread that builds the router.
   */
  public static OriginKeys load(RouterConfig config, RoutingNode node, RouterMetrics metrics) {
    RouterTls rt = config.routerTls();
    if (rt == null || rt.cert() == null) {
      return null;
    }
    OriginKeys keys = OriginKeys.load(config.router(), rt.cert(), rt.key(), rt.ca(), metrics);
    node.useAuthority(keys);
    for (OriginAuthority.ClaimKind k : OriginAuthority.ClaimKind.values()) {
      for (OriginAuthority.Verdict v : OriginAuthority.Verdict.values()) {
        if (v != OriginAuthority.Verdict.OK
            && (k != OriginAuthority.ClaimKind.CERTIFICATE
                || v == OriginAuthority.Verdict.BAD_SIGNATURE)) {
          keys.refusals(k, v); // every series present from the start, at 0
        }
      }
    }
    metrics
        .registry()
        .gauge(
            "bdrp_router_certificates",
            "Routers whose certificate this router holds to verify their claims, itself"
                + " included (with mutual TLS).",
            keys::certificatesHeld);
    return keys;
  }

  /**
   * After the TLS files of router links were reloaded (on the reloader's thread): reads the new
   * certificate and key there and returns the task, for the loop, that signs the claims with them
   * from then on, floods this router's new certificate and signs its route and advertisement anew;
   * null when there is nothing to renew or the files cannot sign.
   */
  public static Runnable renewal(
      OriginKeys keys,
      RouterTls now,
      int router,
      RoutingNode node,
      Runnable rearm,
      BooleanSupplier stopping) {
    if (keys == null || now == null || now.cert() == null) {
      return null;
    }
    OriginKeys.Loaded loaded;
    try {
      loaded = OriginKeys.read(now.cert(), now.key(), now.ca());
    } catch (IllegalArgumentException e) {
      log.warn("router {}: cannot sign with the reloaded TLS files: {}", router, e.getMessage());
      return null;
    }
    return () -> {
      if (!stopping.getAsBoolean() && keys.use(loaded)) {
        node.certificateRenewed();
        rearm.run();
        log.info("router {}: new certificate flooded; route and advertisement signed anew", router);
      }
    };
  }
}
