package io.bdrp.router.mqtt;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.router.security.TlsFiles;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttConnectVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A CONNECT, checked: who the client is (its certificate's user, else the password as the user's
 * token of {@code auth.clients}, else anonymous as configured) and whether the router takes it now;
 * and the CONNACK that answers it, in the client's protocol. What MQTT 5 clients are told in the
 * CONNACK: retained messages (Retain Available left at its default, 1), shared subscriptions,
 * subscription identifiers, up to {@link #TOPIC_ALIAS_MAXIMUM} topic aliases from the client, the
 * Session Expiry Interval when the router keeps the session less long than asked, the router's
 * maximum packet size and receive maximum, and the server keep-alive when it bounds the client's.
 *
 * <p>Stateless; on the router's event loop.
 */
final class MqttConnect {
  /** QoS 2 PUBLISHes a client may have unanswered at once (the Receive Maximum announced). */
  static final int RECEIVE_MAXIMUM = 1024;

  /**
   * Topic aliases a client may set (the Topic Alias Maximum announced): each costs the session one
   * topic name held, at most 65,535 bytes. The router sets none in its own PUBLISHes.
   */
  static final int TOPIC_ALIAS_MAXIMUM = 64;

  private MqttConnect() {}

  /** A refusal: the CONNACK codes of both protocols and the counter's label. */
  record Refusal(MqttConnectReturnCode v3, MqttConnectReturnCode v5, String result, String why) {}

  /** A CONNECT of another version than 3.1.1 and 5 (0x01, which 3.1.1 and 3.1 clients read). */
  static final Refusal UNSUPPORTED_PROTOCOL =
      new Refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
          MqttConnectReturnCode.CONNECTION_REFUSED_UNSUPPORTED_PROTOCOL_VERSION,
          "unsupported_protocol",
          "this router speaks MQTT 3.1.1 and 5");

  /** An empty client identifier without a clean session (MQTT-3.1.3-8), or one Netty refuses. */
  static final Refusal IDENTIFIER_REJECTED =
      new Refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
          MqttConnectReturnCode.CONNECTION_REFUSED_CLIENT_IDENTIFIER_NOT_VALID,
          "identifier_rejected",
          "an empty client identifier needs a clean session");

  /**
   * What makes the connect flags of {@code vh} malformed, which Netty's decoder lets through, or
   * null: a will QoS or will retain flag without a will (MQTT 5 MQTT-3.1.2-11, MQTT-3.1.2-13; 3.1.1
   * MQTT-3.1.2-11, -13, -15), a will QoS of 3 (MQTT 5 MQTT-3.1.2-12; 3.1.1 MQTT-3.1.2-14), and in
   * 3.1.1 a password without a user name (MQTT-3.1.2-22; MQTT 5 allows it).
   */
  static String flagsProblem(MqttConnectVariableHeader vh, boolean v5) {
    if (!vh.isWillFlag() && (vh.willQos() != 0 || vh.isWillRetain())) {
      return "a will QoS or will retain flag without a will";
    }
    if (vh.willQos() == 3) {
      return "a will QoS of 3";
    }
    if (!v5 && vh.hasPassword() && !vh.hasUserName()) {
      return "a password without a user name (MQTT 3.1.1)";
    }
    return null;
  }

  /** The user a verified client certificate names ({@code urn:bdrp:user:NAME}), or null. */
  static String certificateUser(ChannelHandlerContext ctx) {
    X509Certificate peer = TlsFiles.peer(ctx);
    List<String> users = peer == null ? List.of() : TlsFiles.uris(peer, ClientAuth.USER_URN);
    return users.isEmpty() ? null : users.get(0);
  }

  /**
   * The permissions of the client that sent {@code c}, or the refusal. The password is the user's
   * token; a user name, if given with it, must be that user's.
   */
  static Object authenticate(RouterConfig config, MqttConnectMessage c, String certUser) {
    byte[] token =
        c.variableHeader().hasPassword() && c.payload().passwordInBytes() != null
            ? c.payload().passwordInBytes()
            : new byte[0];
    ClientAuth auth = config.clientAuth();
    ClientAuth.Permissions p = auth.authenticate(token, certUser);
    if (p == null) {
      return certUser == null && token.length > 0
          ? badCredentials("the password is not the token of a user of this router")
          : new Refusal(
              MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED,
              MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED_5,
              "not_authorized",
              certUser != null
                  ? "the certificate names user '" + certUser + "', not a user of this router"
                  : "this router serves only clients with a token (the password)");
    }
    String userName = c.variableHeader().hasUserName() ? c.payload().userName() : null;
    if (!auth.open()
        && certUser == null
        && token.length > 0
        && userName != null
        && !userName.isEmpty()
        && !userName.equals(p.user())) {
      return badCredentials("the password is not user '" + userName + "''s token");
    }
    return p;
  }

  private static Refusal badCredentials(String why) {
    return new Refusal(
        MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD,
        MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USERNAME_OR_PASSWORD,
        "bad_credentials",
        why);
  }

  /** Why the router cannot take one more session of {@code user} now, or null. */
  static Refusal capacity(MqttListener l, ClientAuth.Permissions p) {
    RouterConfig config = l.core.config();
    if (l.hosts.size() >= config.limits().maxClients()) {
      return new Refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
          MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_BUSY,
          "server_busy",
          "this router serves at most " + config.limits().maxClients() + " clients");
    }
    String user = AttachedHost.userOf(p);
    int max = config.limits().hosts().maxSessionsPerUser();
    if (user != null && l.hosts.sessions(user) >= max) {
      l.sessionsRefused.inc();
      return new Refusal(
          MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
          MqttConnectReturnCode.CONNECTION_REFUSED_QUOTA_EXCEEDED,
          "user_sessions",
          "user " + user + " has " + max + " sessions, at most limits.maxSessionsPerUser");
    }
    return null;
  }

  /** The refusal of {@code r} in the client's protocol, with the reason string in MQTT 5. */
  static MqttConnAckMessage refusal(Refusal r, boolean v5) {
    MqttProperties props = new MqttProperties();
    if (v5) {
      props.add(new MqttProperties.StringProperty(MqttProperties.REASON_STRING, r.why));
    }
    return MqttMessageBuilders.connAck()
        .returnCode(v5 ? r.v5 : r.v3)
        .sessionPresent(false)
        .properties(props)
        .build();
  }

  /**
   * The CONNACK that accepts a session.
   *
   * @param assignedId the client identifier the router gave, or null if the client named one
   * @param serverKeepAlive the keep-alive the router holds the client to, in seconds, or -1 for the
   *     client's own
   * @param sessionPresent whether a kept session was resumed (MQTT-3.2.2-2)
   * @param sessionExpiry the Session Expiry Interval the router keeps the session for, in seconds;
   *     told to an MQTT 5 client when it is not what it asked
   */
  static MqttConnAckMessage accepted(
      boolean v5,
      MqttConnectMessage c,
      String assignedId,
      int maxPacketBytes,
      int serverKeepAlive,
      boolean sessionPresent,
      long sessionExpiry) {
    MqttProperties props = new MqttProperties();
    if (v5) {
      props.add(integer(MqttProperties.RECEIVE_MAXIMUM, RECEIVE_MAXIMUM));
      props.add(integer(MqttProperties.MAXIMUM_PACKET_SIZE, maxPacketBytes));
      // Retain Available is absent, which means 1: retained messages are kept federation-wide.
      props.add(integer(MqttProperties.SHARED_SUBSCRIPTION_AVAILABLE, 1));
      props.add(integer(MqttProperties.SUBSCRIPTION_IDENTIFIER_AVAILABLE, 1));
      props.add(integer(MqttProperties.TOPIC_ALIAS_MAXIMUM, TOPIC_ALIAS_MAXIMUM));
      if (sessionExpiry != sessionExpiryAsked(c)) {
        props.add(integer(MqttProperties.SESSION_EXPIRY_INTERVAL, (int) sessionExpiry));
      }
      if (assignedId != null) {
        props.add(
            new MqttProperties.StringProperty(
                MqttProperties.ASSIGNED_CLIENT_IDENTIFIER, assignedId));
      }
      if (serverKeepAlive >= 0) {
        props.add(integer(MqttProperties.SERVER_KEEP_ALIVE, serverKeepAlive));
      }
    }
    return MqttMessageBuilders.connAck()
        .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
        .sessionPresent(sessionPresent)
        .properties(props)
        .build();
  }

  /** The MQTT 5 Session Expiry Interval a CONNECT asks for, in seconds (0 without one). */
  static long sessionExpiryAsked(MqttConnectMessage c) {
    return c.variableHeader().properties().getProperty(MqttProperties.SESSION_EXPIRY_INTERVAL)
            instanceof MqttProperties.IntegerProperty e
        ? Integer.toUnsignedLong(e.value())
        : 0;
  }

  private static MqttProperties.IntegerProperty integer(int id, int v) {
    return new MqttProperties.IntegerProperty(id, v);
  }

  /** The user name of a CONNECT, for logs. */
  static String userName(MqttConnectMessage c) {
    String u = c.variableHeader().hasUserName() ? c.payload().userName() : null;
    return u == null ? "-" : u;
  }
}
