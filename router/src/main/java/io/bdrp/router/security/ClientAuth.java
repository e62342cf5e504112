package io.bdrp.router.security;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Who may use a router's client port, and what each may receive and send.
 *
 * <p>A user presents a token in its HELLO; the router keeps only a salted SHA-256 of it ({@code
 * sha256:SALT:HASH}, both base64), never the token. Tokens are random secrets made by {@code bdrp
 * auth token}, not passwords a person chooses, so one hash is enough: a slow password hash would
 * let any client that reaches the port spend the router's time. Each user may have a {@code
 * subscribe} predicate, which every predicate it sets is intersected with, and a {@code publish}
 * predicate that every message it sends must satisfy. Both are exact: they are applied at the
 * user's own router, on the predicate and the message, never through the Bloom filters.
 *
 * <p>A router whose config names no client users serves every client with no limit ({@link #OPEN}),
 * as before authentication existed; one that names users refuses clients without a valid token
 * unless the config allows anonymous access, with its own permissions.
 */
public final class ClientAuth {

  /** What a client may do: receive at most {@code subscribe}, send only {@code publish}. */
  public record Permissions(String user, Predicate subscribe, Predicate publish) {
    /** Everything. */
    public static final Permissions ALL = new Permissions("anonymous", null, null);

    /** The predicate a client that asks for {@code asked} gets: within its subscribe permission. */
    public Predicate restrict(Predicate asked) {
      return subscribe == null ? asked : intersect(asked, subscribe);
    }

    /** Whether the client may send {@code m}. */
    public boolean mayPublish(Message m) {
      return publish == null || publish.matches(m);
    }
  }

  /**
   * A user: its name, the salted hash of its token (null for a user who signs in only with a client
   * certificate), and its permissions.
   */
  public record User(String name, byte[] salt, byte[] hash, Permissions permissions) {
    public User {
      Objects.requireNonNull(name, "name");
      salt = salt == null ? null : salt.clone();
      hash = hash == null ? null : hash.clone();
    }

    /** A user without a token: it signs in with a client certificate naming it. */
    public static User withCertificate(String name, Permissions permissions) {
      return new User(name, null, null, permissions);
    }

    public boolean accepts(byte[] token) {
      return hash != null && MessageDigest.isEqual(hash, digest(salt, token));
    }
  }

  /** The URI prefix that names a user in a client certificate's subjectAltName. */
  public static final String USER_URN = "urn:bdrp:user:";

  /** Serves everyone with every permission: a router whose config names no client users. */
  public static final ClientAuth OPEN = new ClientAuth(List.of(), Permissions.ALL);

  private final List<User> users;
  private final Permissions anonymous;

  /**
   * @param users the users, each with a token hash
   * @param anonymous the permissions of a client that presents no token, or null to refuse it
   */
  public ClientAuth(List<User> users, Permissions anonymous) {
    this.users = List.copyOf(users);
    this.anonymous = anonymous;
  }

  /** Whether any client is served with every permission (no users, anonymous unlimited). */
  public boolean open() {
    return users.isEmpty() && anonymous == Permissions.ALL;
  }

  /** The users named in the config. */
  public List<User> users() {
    return users;
  }

  /**
   * The permissions of a client that presents {@code token} (empty: none), or null if it is not to
   * be served. A token that matches no user is refused even where anonymous access is allowed.
   */
  public Permissions authenticate(byte[] token) {
    return authenticate(token, null);
  }

  /**
   * The permissions of a client whose verified TLS certificate names user {@code certUser} (null:
   * no certificate) and that presents {@code token}: the certificate's user if there is one (a
   * certificate naming no user of this router is refused), else as {@link #authenticate(byte[])}.
   */
  public Permissions authenticate(byte[] token, String certUser) {
    if (certUser != null && !open()) {
      for (User u : users) {
        if (u.name().equals(certUser)) {
          return u.permissions();
        }
      }
      return null;
    }
    if (open()) {
      return Permissions.ALL; // no users: tokens are not checked, as before authentication
    }
    if (token.length == 0) {
      return anonymous;
    }
    for (User u : users) {
      if (u.accepts(token)) {
        return u.permissions();
      }
    }
    return null;
  }

  /** The intersection of two predicates: every pair of their conjunctions, joined. */
  public static Predicate intersect(Predicate a, Predicate b) {
    List<List<Constraint>> both = new ArrayList<>();
    for (Conjunction x : a.conjunctions()) {
      for (Conjunction y : b.conjunctions()) {
        List<Constraint> c = new ArrayList<>(x.constraints());
        c.addAll(y.constraints());
        both.add(c);
      }
    }
    return Predicate.of(both);
  }

  /** SHA-256 of the salt followed by the token. */
  static byte[] digest(byte[] salt, byte[] token) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(salt);
      return d.digest(token);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** The config form of a token's hash, {@code sha256:SALT:HASH}, with a fresh random salt. */
  public static String hashLine(String token) {
    byte[] salt = new byte[16];
    new SecureRandom().nextBytes(salt);
    Base64.Encoder b = Base64.getEncoder();
    return "sha256:"
        + b.encodeToString(salt)
        + ":"
        + b.encodeToString(digest(salt, token.getBytes(StandardCharsets.UTF_8)));
  }

  /** A new random token: 32 bytes, base64url without padding. */
  public static String newToken() {
    byte[] t = new byte[32];
    new SecureRandom().nextBytes(t);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(t);
  }

  /**
   * Parses {@code sha256:SALT:HASH} into a user with {@code permissions}.
   *
   * @throws IllegalArgumentException if the text is not of that form
   */
  public static User user(String name, String hashLine, Permissions permissions) {
    String[] p = hashLine.split(":", -1);
    if (p.length != 3 || !p[0].equals("sha256")) {
      throw new IllegalArgumentException(
          "expected sha256:SALT:HASH (make one with: bdrp auth token --user " + name + ")");
    }
    byte[] salt;
    byte[] hash;
    try {
      salt = Base64.getDecoder().decode(p[1]);
      hash = Base64.getDecoder().decode(p[2]);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("salt and hash must be base64: " + e.getMessage());
    }
    if (salt.length < 8 || hash.length != 32) {
      throw new IllegalArgumentException(
          "expected a salt of at least 8 bytes and a 32-byte SHA-256 hash, got "
              + salt.length
              + " and "
              + hash.length);
    }
    return new User(name, salt, hash, permissions);
  }
}
