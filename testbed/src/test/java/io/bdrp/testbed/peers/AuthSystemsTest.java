package io.bdrp.testbed.peers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.testbed.PubSubSystem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * bdrp and nats-server with the fan-out benchmark's client authentication: the users and
 * permissions their configs carry, and real runs in which every client signs in as its own user,
 * messages within the permissions arrive and one outside is refused, counted, and not delivered.
 */
class AuthSystemsTest {
  private static final PubSubSystem.Auth AUTH = new PubSubSystem.Auth(2, 2);

  @Test
  void bdrpConfigWithAuthParsesWithItsUsersTokensAndPermissions() {
    BdrpSystem sys = new BdrpSystem(List.of(), false, "tcp", AUTH);
    assertEquals("bdrp+auth", sys.name());
    String yaml = sys.config(0, new int[] {7400}, new int[] {7401});
    ClientAuth auth = RouterConfig.parse(yaml, "bench config").clientAuth();

    assertFalse(auth.open());
    assertEquals(
        List.of("publisher", "subscriber-0", "subscriber-1"),
        auth.users().stream().map(ClientAuth.User::name).toList());
    assertNull(auth.authenticate(new byte[0]), "anonymous clients are refused");
    assertNull(auth.authenticate("not-a-token".getBytes(StandardCharsets.UTF_8)));

    Predicate range = Predicate.parse("bucket >= 0 && bucket < 2");
    ClientAuth.Permissions pub = auth.authenticate(token(sys, "publisher"));
    assertNotNull(pub);
    assertEquals("publisher", pub.user());
    assertEquals(range, pub.publish());
    assertNull(pub.subscribe());
    assertTrue(pub.mayPublish(Message.builder().put("bucket", 0).build()));
    assertTrue(pub.mayPublish(Message.builder().put("bucket", 1).build()));
    assertFalse(pub.mayPublish(Message.builder().put("bucket", 2).build()));
    assertFalse(pub.mayPublish(Message.builder().put("other", 1).build()));

    for (String user : List.of("subscriber-0", "subscriber-1")) {
      ClientAuth.Permissions p = auth.authenticate(token(sys, user));
      assertNotNull(p, user);
      assertEquals(user, p.user());
      assertEquals(range, p.subscribe());
      assertNull(p.publish());
      // What the benchmark's subscribers ask for stays within the permission.
      assertEquals(Predicate.parse("bucket = 1"), p.restrict(Predicate.parse("bucket = 1")));
      assertEquals(range, p.restrict(Predicate.parse("bucket >= 0")));
    }
  }

  @Test
  void natsConfigWithAuthNamesItsUsersAndPermissions() {
    NatsSystem sys = new NatsSystem(false, AUTH);
    assertEquals("nats+auth", sys.name());
    String conf = sys.authConfig();
    assertTrue(
        conf.contains(
            "{user: \"publisher\", password: \""
                + sys.password("publisher")
                + "\","
                + " permissions: {publish: {allow: [\"bench.0\", \"bench.1\"]}}}"),
        conf);
    for (String user : List.of("subscriber-0", "subscriber-1")) {
      assertTrue(
          conf.contains(
              "{user: \""
                  + user
                  + "\", password: \""
                  + sys.password(user)
                  + "\", permissions: {subscribe: {allow: [\"bench.*\"]}}}"),
          conf);
    }
  }

  @Test
  @Timeout(120)
  void bdrpWithAuthDeliversWithinThePermissionsAndRefusesOutside(@TempDir Path dir)
      throws Exception {
    BdrpSystem sys = new BdrpSystem(List.of("-Xmx128m"), false, "tcp", AUTH);
    deliversWithinThePermissionsAndRefusesOutside(sys, dir);
    String config = Files.readString(dir.resolve("bdrp-router-0.yaml"));
    assertTrue(config.contains("anonymous: false"), config);
  }

  @Test
  @Timeout(120)
  void natsWithAuthDeliversWithinThePermissionsAndRefusesOutside(@TempDir Path dir)
      throws Exception {
    NatsSystem sys = new NatsSystem(false, AUTH);
    deliversWithinThePermissionsAndRefusesOutside(sys, dir);
    assertTrue(Files.exists(dir.resolve("nats-server-0.conf")));
  }

  private static void deliversWithinThePermissionsAndRefusesOutside(PubSubSystem sys, Path dir)
      throws Exception {
    try (sys) {
      sys.start(1, dir);
      AtomicLong all = new AtomicLong();
      AtomicLong allAtMarker = new AtomicLong();
      AtomicLong one = new AtomicLong();
      sys.subscribe(
          0,
          "sub-0",
          PubSubSystem.ALL,
          (t, phase) -> {
            long n = all.incrementAndGet();
            if (phase == 2) {
              allAtMarker.set(n);
            }
          });
      sys.subscribe(0, "sub-1", 1, (t, phase) -> one.incrementAndGet());
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> sys.subscribe(0, "sub-2", 0, (t, phase) -> {}),
              "a third subscriber has no user");
      assertTrue(e.getMessage().contains("users for 2 subscribers"), e.getMessage());

      byte[] body = new byte[32];
      PubSubSystem.stamp(body, (byte) 1);
      try (PubSubSystem.Publisher pub = sys.publisher(0, "pub")) {
        pub.publish(0, body);
        pub.publish(1, body);
        pub.flush();
        await(() -> all.get() == 2 && one.get() == 1, sys.name() + ": both buckets delivered");
        assertEquals(0, sys.refused(), sys.name() + ": nothing refused");

        pub.publish(2, body); // outside the publisher's permission
        pub.flush();
        await(() -> sys.refused() == 1, sys.name() + ": the message outside was refused");
        // The session stays open: a marked message after it arrives, and the refused one did not
        // arrive before it.
        PubSubSystem.stamp(body, (byte) 2);
        pub.publish(1, body);
        pub.flush();
        await(() -> one.get() == 2, sys.name() + ": a message after the refusal delivered");
        await(() -> allAtMarker.get() > 0, sys.name() + ": to every subscriber it is for");
        assertEquals(3, allAtMarker.get(), sys.name() + ": the refused message was not delivered");
        assertEquals(1, sys.refused());
      }
    }
  }

  private static byte[] token(BdrpSystem sys, String user) {
    return sys.token(user).getBytes(StandardCharsets.UTF_8);
  }

  /** Waits for {@code condition}, failing with {@code what} if it does not hold within 10 s. */
  private static void await(BooleanSupplier condition, String what) {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail(what + ": not within 10 s");
      }
      LockSupport.parkNanos(1_000_000);
    }
  }
}
