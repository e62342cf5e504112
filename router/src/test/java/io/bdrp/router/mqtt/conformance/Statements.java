package io.bdrp.router.mqtt.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The normative statements the conformance tests cite, each with what it requires in a line of our
 * own words (the specifications have the authoritative text: MQTT 5.0,
 * https://docs.oasis-open.org/mqtt/mqtt/v5.0/mqtt-v5.0.html, and MQTT 3.1.1,
 * https://docs.oasis-open.org/mqtt/mqtt/v3.1.1/mqtt-v3.1.1.html). {@link ConformanceSuiteTest}
 * checks that every id a test cites is here and that every id here is cited, so this is exactly the
 * list of statements the suite covers.
 *
 * <p>To cover a statement: write the test with {@link Normative}, add the statement here, and run
 * {@code ConformanceSuiteTest} with {@code -Dmqtt.conformance.write=true} to rewrite
 * docs/mqtt-conformance.md.
 */
final class Statements {
  private Statements() {}

  /** An id as the specifications write them: MQTT-, the section, a dash, the number. */
  static final Pattern ID = Pattern.compile("MQTT-[1-9][0-9]*(\\.[0-9]+){1,3}-[1-9][0-9]*");

  /** MQTT 5.0 statements cited, by id. */
  static final Map<String, String> V5 = new TreeMap<>(Statements::compare);

  /** MQTT 3.1.1 statements cited, by id. */
  static final Map<String, String> V311 = new TreeMap<>(Statements::compare);

  static {
    v5("MQTT-1.5.4-1", "UTF-8 strings must be well-formed (no surrogates)");
    v5("MQTT-1.5.4-2", "UTF-8 strings must not contain U+0000");
    v5("MQTT-1.5.5-1", "a Variable Byte Integer is written in the fewest bytes that hold it");
    v5("MQTT-2.1.3-1", "reserved flag bits of the fixed header must have the listed values");
    v5("MQTT-2.2.1-2", "a QoS 0 PUBLISH has no packet identifier");
    v5(
        "MQTT-2.2.1-3",
        "a client's SUBSCRIBE, UNSUBSCRIBE and QoS > 0 PUBLISH carry a non-zero packet identifier");
    v5(
        "MQTT-2.2.1-4",
        "a server's QoS > 0 PUBLISH carries a non-zero packet identifier not in use");
    v5(
        "MQTT-2.2.1-5",
        "PUBACK, PUBREC, PUBREL and PUBCOMP carry the packet identifier of the PUBLISH");
    v5("MQTT-3.1.0-1", "the first packet from the client is CONNECT");
    v5("MQTT-3.1.0-2", "a second CONNECT is a protocol error; the connection is closed");
    v5(
        "MQTT-3.1.2-1",
        "the protocol name is \"MQTT\"; otherwise the server may refuse (0x84) and closes");
    v5(
        "MQTT-3.1.2-2",
        "a protocol version the server does not take: it may refuse (0x84) and closes");
    v5("MQTT-3.1.2-3", "the server checks that the CONNECT's reserved flag is 0, else malformed");
    v5(
        "MQTT-3.1.2-8",
        "the will is published when the connection ends, unless removed by a DISCONNECT 0x00");
    v5("MQTT-3.1.2-10", "the will is removed once published or on DISCONNECT 0x00");
    v5("MQTT-3.1.2-11", "without a will, the will QoS is 0");
    v5("MQTT-3.1.2-12", "with a will, the will QoS is 0, 1 or 2; 3 is malformed");
    v5("MQTT-3.1.2-13", "without a will, the will retain flag is 0");
    v5(
        "MQTT-3.1.2-22",
        "no packet for one and a half keep-alives: the server closes the connection");
    v5("MQTT-3.1.2-24", "the server sends no packet above the client's Maximum Packet Size");
    v5("MQTT-3.1.2-25", "a packet too large for the client is discarded as if it had been sent");
    v5("MQTT-3.1.3-5", "the server takes client identifiers of 1 to 23 letters and digits");
    v5("MQTT-3.1.3-6", "an empty client identifier may be taken: the server assigns a unique one");
    v5(
        "MQTT-3.1.3-7",
        "the assigned identifier is told in the CONNACK (Assigned Client Identifier)");
    v5("MQTT-3.1.4-1", "a CONNECT not in the format of §3.1 closes the connection");
    v5(
        "MQTT-3.1.4-3",
        "a client identifier already connected: the older connection gets DISCONNECT 0x8E and is closed");
    v5("MQTT-3.1.4-5", "an accepted CONNECT is answered with CONNACK 0x00");
    v5("MQTT-3.1.4-6", "after refusing a CONNECT, the server handles nothing more the client sent");
    v5("MQTT-3.2.0-1", "the server sends CONNACK before any other packet (AUTH aside)");
    v5("MQTT-3.2.0-2", "the server sends one CONNACK per connection");
    v5("MQTT-3.2.2-1", "the CONNACK's acknowledge flags bits 7-1 are 0");
    v5("MQTT-3.2.2-2", "with a clean start, session present is 0");
    v5("MQTT-3.2.2-6", "a CONNACK with a failure code has session present 0");
    v5("MQTT-3.2.2-7", "after a CONNACK with a failure code, the server closes the connection");
    v5(
        "MQTT-3.2.2-15",
        "the client sends no packet above the server's Maximum Packet Size (0x95 if it does)");
    v5("MQTT-3.3.1-2", "DUP is 0 in every QoS 0 PUBLISH");
    v5("MQTT-3.3.1-3", "the DUP of an outgoing PUBLISH is set independently of the incoming one's");
    v5("MQTT-3.3.1-4", "a PUBLISH with both QoS bits set is malformed");
    v5("MQTT-3.3.2-2", "a PUBLISH topic name has no wildcard characters");
    v5("MQTT-3.3.2-4", "the server passes the Payload Format Indicator on unaltered");
    v5(
        "MQTT-3.3.2-5",
        "a message whose expiry interval has passed is not delivered to a subscriber");
    v5(
        "MQTT-3.3.2-6",
        "a forwarded PUBLISH carries the Message Expiry Interval minus the time it waited");
    v5("MQTT-3.3.2-7", "topic alias mappings do not carry over to another connection");
    v5("MQTT-3.3.2-8", "a sender does not send Topic Alias 0");
    v5("MQTT-3.3.2-9", "a client sends no Topic Alias above the server's Topic Alias Maximum");
    v5("MQTT-3.3.2-11", "a server sends no Topic Alias above the client's Topic Alias Maximum");
    v5("MQTT-3.3.2-12", "the server takes every Topic Alias from 1 to its Topic Alias Maximum");
    v5("MQTT-3.3.2-15", "the server passes the Response Topic on unaltered");
    v5("MQTT-3.3.2-16", "the server passes the Correlation Data on unaltered");
    v5("MQTT-3.3.2-17", "the server passes every user property on unaltered");
    v5("MQTT-3.3.2-18", "the server keeps the order of the user properties");
    v5("MQTT-3.3.2-20", "the server passes the Content Type on unaltered");
    v5("MQTT-3.3.4-1", "the receiver of a PUBLISH answers as its QoS requires");
    v5("MQTT-3.3.4-2", "overlapping subscriptions: delivery at the highest QoS among them");
    v5(
        "MQTT-3.3.4-3",
        "a message matching subscriptions with identifiers carries those identifiers");
    v5("MQTT-3.3.4-4", "one copy for several subscriptions carries all their identifiers");
    v5("MQTT-3.3.4-6", "a client's PUBLISH has no Subscription Identifier");
    v5(
        "MQTT-3.3.4-7",
        "a client has no more unanswered QoS 1 and 2 PUBLISHes than the server's Receive Maximum");
    v5(
        "MQTT-3.3.4-9",
        "a server has no more unacknowledged QoS 1 and 2 PUBLISHes than the client's Receive Maximum");
    v5("MQTT-3.8.1-1", "SUBSCRIBE's fixed header flags are 0010, anything else is malformed");
    v5("MQTT-3.8.3-1", "topic filters are UTF-8 strings");
    v5("MQTT-3.8.3-2", "a SUBSCRIBE has at least one filter; none is a protocol error");
    v5(
        "MQTT-3.8.3-3",
        "No Local: the session's own messages are not sent to it by that subscription");
    v5(
        "MQTT-3.8.3-5",
        "reserved bits of the subscription options are 0, else malformed (and so is QoS 3)");
    v5("MQTT-3.8.4-1", "a SUBSCRIBE is answered with a SUBACK");
    v5("MQTT-3.8.4-2", "the SUBACK has the SUBSCRIBE's packet identifier");
    v5("MQTT-3.8.4-3", "a filter subscribed again replaces its subscription");
    v5("MQTT-3.8.4-5", "several filters are handled as a sequence of SUBSCRIBEs, with one SUBACK");
    v5("MQTT-3.8.4-6", "the SUBACK has a reason code per filter");
    v5("MQTT-3.8.4-7", "each code is the QoS granted or a failure");
    v5("MQTT-3.8.4-8", "deliveries go at the lower of the published QoS and the QoS granted");
    v5("MQTT-3.9.3-1", "the SUBACK's codes are in the order of the filters");
    v5("MQTT-3.9.3-2", "the SUBACK's codes are SUBACK reason codes");
    v5("MQTT-3.10.1-1", "UNSUBSCRIBE's fixed header flags are 0010, anything else is malformed");
    v5("MQTT-3.10.3-2", "an UNSUBSCRIBE has at least one filter; none is a protocol error");
    v5(
        "MQTT-3.10.4-1",
        "filters are compared character for character; an equal one's subscription is deleted");
    v5("MQTT-3.10.4-2", "the server stops adding messages for the deleted subscriptions");
    v5("MQTT-3.10.4-4", "an UNSUBSCRIBE is answered with an UNSUBACK");
    v5(
        "MQTT-3.10.4-5",
        "the UNSUBACK has the UNSUBSCRIBE's packet identifier, even if nothing was deleted");
    v5(
        "MQTT-3.10.4-6",
        "several filters are handled as a sequence of UNSUBSCRIBEs, with one UNSUBACK");
    v5("MQTT-3.11.3-1", "the UNSUBACK's codes are in the order of the filters");
    v5("MQTT-3.11.3-2", "the UNSUBACK's codes are UNSUBACK reason codes");
    v5("MQTT-3.12.4-1", "a PINGREQ is answered with a PINGRESP");
    v5("MQTT-3.14.1-1", "DISCONNECT's reserved bits are 0, else malformed (0x81)");
    v5("MQTT-3.14.4-3", "a DISCONNECT 0x00 discards the will unpublished");
    v5("MQTT-4.3.2-4", "QoS 1 receiver: PUBACK with the PUBLISH's packet identifier");
    v5("MQTT-4.3.3-8", "QoS 2 receiver: PUBREC with the PUBLISH's packet identifier");
    v5(
        "MQTT-4.3.3-10",
        "QoS 2 receiver: a repeat before the PUBREL gets PUBREC and is not delivered again");
    v5("MQTT-4.3.3-11", "QoS 2 receiver: a PUBREL gets a PUBCOMP with its packet identifier");
    v5(
        "MQTT-4.3.3-12",
        "QoS 2 receiver: after the PUBCOMP, the packet identifier starts a new message");
    v5("MQTT-4.7.1-1", "'#' is a whole level and the filter's last");
    v5("MQTT-4.7.1-2", "'+' is a whole level");
    v5("MQTT-4.7.3-1", "topic names and filters have at least one character");
    v5("MQTT-4.7.3-2", "topic names and filters contain no U+0000");

    v311(
        "MQTT-1.5.3-1",
        "UTF-8 strings are well-formed (no surrogates); else the connection closes");
    v311("MQTT-1.5.3-2", "UTF-8 strings contain no U+0000; else the connection closes");
    v311("MQTT-2.2.2-1", "reserved flag bits of the fixed header have the listed values");
    v311("MQTT-2.2.2-2", "invalid flags close the connection");
    v311(
        "MQTT-2.3.1-1",
        "SUBSCRIBE, UNSUBSCRIBE and QoS > 0 PUBLISH carry a non-zero packet identifier");
    v311("MQTT-2.3.1-4", "a server's QoS > 0 PUBLISH takes a packet identifier not in use");
    v311("MQTT-2.3.1-5", "a QoS 0 PUBLISH has no packet identifier");
    v311("MQTT-2.3.1-6", "PUBACK, PUBREC and PUBREL carry the packet identifier of the PUBLISH");
    v311("MQTT-3.1.0-1", "the first packet from the client is CONNECT");
    v311("MQTT-3.1.0-2", "a second CONNECT is a protocol violation: the client is disconnected");
    v311(
        "MQTT-3.1.2-1",
        "a protocol name other than \"MQTT\" may be disconnected, and is not handled as MQTT");
    v311(
        "MQTT-3.1.2-2", "a protocol level the server does not take: CONNACK 0x01, then disconnect");
    v311(
        "MQTT-3.1.2-3",
        "the server checks that the CONNECT's reserved flag is 0, else disconnects");
    v311(
        "MQTT-3.1.2-8",
        "the will is published when the connection closes, unless deleted by a DISCONNECT");
    v311("MQTT-3.1.2-10", "the will is removed once published or on DISCONNECT");
    v311("MQTT-3.1.2-11", "without a will, the will QoS and will retain are 0");
    v311("MQTT-3.1.2-13", "without a will, the will QoS is 0");
    v311("MQTT-3.1.2-14", "with a will, the will QoS is not 3");
    v311("MQTT-3.1.2-15", "without a will, the will retain flag is 0");
    v311("MQTT-3.1.2-22", "without the user name flag, the password flag is 0");
    v311("MQTT-3.1.2-24", "no packet for one and a half keep-alives: the server disconnects");
    v311("MQTT-3.1.3-5", "the server takes client identifiers of 1 to 23 letters and digits");
    v311(
        "MQTT-3.1.3-6", "an empty client identifier may be taken: the server assigns a unique one");
    v311(
        "MQTT-3.1.3-8",
        "an empty client identifier without a clean session: CONNACK 0x02, then close");
    v311(
        "MQTT-3.1.4-1",
        "a CONNECT not in the format of §3.1 closes the connection without a CONNACK");
    v311("MQTT-3.1.4-2", "a client identifier already connected: the older client is disconnected");
    v311("MQTT-3.1.4-4", "an accepted CONNECT is answered with CONNACK 0x00");
    v311(
        "MQTT-3.1.4-5",
        "after refusing a CONNECT, the server handles nothing more the client sent");
    v311("MQTT-3.2.0-1", "the server's first packet is CONNACK");
    v311("MQTT-3.2.2-1", "with a clean session, session present is 0");
    v311("MQTT-3.2.2-4", "a CONNACK with a failure code has session present 0");
    v311("MQTT-3.2.2-5", "after a CONNACK with a failure code, the server closes the connection");
    v311("MQTT-3.3.1-2", "DUP is 0 in every QoS 0 PUBLISH");
    v311(
        "MQTT-3.3.1-3",
        "the DUP of an outgoing PUBLISH is set independently of the incoming one's");
    v311("MQTT-3.3.1-4", "a PUBLISH with both QoS bits set: the connection closes");
    v311("MQTT-3.3.2-2", "a PUBLISH topic name has no wildcard characters");
    v311("MQTT-3.3.4-1", "the receiver of a PUBLISH answers as its QoS requires");
    v311("MQTT-3.3.5-1", "overlapping subscriptions: delivery at the highest QoS among them");
    v311("MQTT-3.8.1-1", "SUBSCRIBE's fixed header flags are 0010, else the connection closes");
    v311("MQTT-3.8.3-1", "topic filters are UTF-8 strings");
    v311("MQTT-3.8.3-3", "a SUBSCRIBE has at least one filter; none is a protocol violation");
    v311(
        "MQTT-3.8.3-4",
        "reserved bits of the requested QoS byte are 0 and the QoS is 0-2, else malformed (the specification prints this id as MQTT-3-8.3-4)");
    v311("MQTT-3.8.4-1", "a SUBSCRIBE is answered with a SUBACK");
    v311("MQTT-3.8.4-2", "the SUBACK has the SUBSCRIBE's packet identifier");
    v311("MQTT-3.8.4-3", "a filter subscribed again replaces its subscription");
    v311(
        "MQTT-3.8.4-4", "several filters are handled as a sequence of SUBSCRIBEs, with one SUBACK");
    v311("MQTT-3.8.4-5", "the SUBACK has a return code per filter");
    v311("MQTT-3.8.4-6", "deliveries go at the lower of the published QoS and the QoS granted");
    v311("MQTT-3.9.3-1", "the SUBACK's return codes are in the order of the filters");
    v311("MQTT-3.9.3-2", "the SUBACK's return codes are 0x00, 0x01, 0x02 or 0x80");
    v311("MQTT-3.10.1-1", "UNSUBSCRIBE's fixed header flags are 0010, else the connection closes");
    v311("MQTT-3.10.3-2", "an UNSUBSCRIBE has at least one filter; none is a protocol violation");
    v311(
        "MQTT-3.10.4-1",
        "filters are compared character for character; an equal one's subscription is deleted");
    v311("MQTT-3.10.4-2", "the server stops adding messages for the deleted subscriptions");
    v311("MQTT-3.10.4-4", "an UNSUBSCRIBE is answered with an UNSUBACK with its packet identifier");
    v311("MQTT-3.10.4-5", "an UNSUBACK is sent even when nothing was deleted");
    v311(
        "MQTT-3.10.4-6",
        "several filters are handled as a sequence of UNSUBSCRIBEs, with one UNSUBACK");
    v311("MQTT-3.12.4-1", "a PINGREQ is answered with a PINGRESP");
    v311("MQTT-3.14.1-1", "DISCONNECT's reserved bits are 0, else the client is disconnected");
    v311("MQTT-3.14.4-3", "a DISCONNECT discards the will unpublished");
    v311("MQTT-4.3.2-2", "QoS 1 receiver: PUBACK with the PUBLISH's packet identifier");
    v311(
        "MQTT-4.3.3-2",
        "QoS 2 receiver: PUBREC, repeats answered and not delivered again, PUBCOMP for the PUBREL, then the identifier is new");
    v311("MQTT-4.7.1-2", "'#' is a whole level and the filter's last");
    v311("MQTT-4.7.1-3", "'+' is a whole level");
    v311("MQTT-4.7.3-1", "topic names and filters have at least one character");
    v311("MQTT-4.7.3-2", "topic names and filters contain no U+0000");
  }

  private static void v5(String id, String text) {
    put(V5, id, text);
  }

  private static void v311(String id, String text) {
    put(V311, id, text);
  }

  private static void put(Map<String, String> m, String id, String text) {
    if (m.put(id, text) != null) {
      throw new IllegalStateException(id + " listed twice");
    }
  }

  /** Orders ids by their numbers: MQTT-3.1.2-3 before MQTT-3.1.2-10. */
  static int compare(String a, String b) {
    List<Integer> x = numbers(a);
    List<Integer> y = numbers(b);
    for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
      int c = Integer.compare(x.get(i), y.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(x.size(), y.size());
  }

  private static List<Integer> numbers(String id) {
    List<Integer> out = new ArrayList<>();
    for (String part : id.substring("MQTT-".length()).split("[.-]")) {
      out.add(Integer.parseInt(part));
    }
    return out;
  }

  /**
   * The start a test's display name must have: each MQTT 5 id as {@code [MQTT-x]}, then each 3.1.1
   * id as {@code [3.1.1 MQTT-x]}, in the annotation's order, separated by spaces.
   */
  static String prefix(Normative n) {
    StringBuilder b = new StringBuilder();
    for (String id : n.v5()) {
      b.append('[').append(id).append("] ");
    }
    for (String id : n.v311()) {
      b.append("[3.1.1 ").append(id).append("] ");
    }
    return b.toString();
  }
}
