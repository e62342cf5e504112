package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.hosts.PredicateChanges;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.transport.ProtocolException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Consumer;

/**
 * The members at this router of one shared subscription group ({@code $share/ShareName/filter}; the
 * group is the share name and the filter's text), as a host of the router of its own: its predicate
 * is the filter's (with its content filter), set through the router's one path for predicate
 * changes ({@link PredicateChanges}) so that the limits and the router's aggregate apply, and the
 * data plane delivers each matching message to it once. It hands the message to one member: round
 * robin, the first from the one after the last chosen that can take it now ({@link
 * MqttHost#canTake}: active, below its high water mark, in-flight window not full) and whose
 * subscribe permission the message is within. With none, the message is dropped and counted ({@code
 * no_member}). The members' own predicates do not include the shared filter.
 *
 * <p><b>Permissions.</b> The group's predicate is the filter within the OR of its members'
 * subscribe permissions (the filter itself if any member has none), so that the router attracts
 * only what some member may receive; it is made again when that set of permissions changes (a
 * member of a new permission joins, the last of one leaves). A member joins at once when the
 * predicate set covers its permission (and no change under way narrows it), else once the change
 * that covers it is set; if that change is refused (a limit of the router's predicates), the
 * members waiting for it are taken out and told. A change that would only narrow the predicate and
 * is refused leaves the wider one, which costs only drops: the next membership change tries again.
 * The group's filters count against {@code limits.maxFiltersPerHost} and the router's aggregate,
 * not against a user's filters (its members may be of several users).
 *
 * <p>Owned by the router's event loop, but for the filters of {@link AttachedHost}, which the
 * control thread keeps.
 */
final class MqttSharedGroup extends AttachedHost {
  /** A group's own permissions: the group restricts its predicate itself, by its members'. */
  private static final ClientAuth.Permissions GROUP =
      new ClientAuth.Permissions(null, null, Predicate.NONE);

  /** A member: its session and its shared subscription (granted QoS, subscription identifier). */
  private record Member(MqttHost host, MqttSubscriptions.Sub sub) {}

  /** A member waiting for the group's predicate to cover its permission. */
  private record Waiter(MqttHost host, Consumer<Boolean> done) {}

  /**
   * The subscribe permissions a group's predicate is made within: every one ({@code all}, some
   * member has none) or the OR of {@code permissions}.
   */
  private record Scope(boolean all, java.util.Set<Predicate> permissions) {
    boolean covers(Predicate permission) {
      return all || (permission != null && permissions.contains(permission));
    }
  }

  private final MqttSharedGroups groups;
  private final PredicateChanges predicates;

  /** The filter's predicate (with its content filter), before the members' permissions. */
  private final Predicate filter;

  private final List<Member> members = new ArrayList<>();
  private final List<Waiter> waiters = new ArrayList<>();
  private int next; // the member to try first
  private Scope set; // the scope of the predicate set now; null before the first is set
  private Scope changing; // the scope of the change under way, or null
  boolean closed;

  MqttSharedGroup(
      int id,
      String text,
      Predicate filter,
      int changesPerSecond,
      MqttSharedGroups groups,
      PredicateChanges predicates) {
    super(id, text, GROUP, changesPerSecond);
    this.filter = filter;
    this.groups = groups;
    this.predicates = predicates;
  }

  /** Members now. */
  int size() {
    return members.size();
  }

  /**
   * Adds {@code host} with its shared subscription {@code sub} (or replaces its subscription, when
   * it is a member already); {@code done} runs, with false, once the group's predicate covers the
   * member's permission (at once if it does already), or with true if the change that would have
   * covered it was refused: the member is then no longer in the group.
   */
  void join(MqttHost host, MqttSubscriptions.Sub sub, Consumer<Boolean> done) {
    int i = indexOf(host);
    if (i >= 0) {
      members.set(i, new Member(host, sub));
    } else {
      members.add(new Member(host, sub));
    }
    Predicate p = host.permissions.subscribe();
    if (set != null && set.covers(p) && (changing == null || changing.covers(p))) {
      done.accept(false); // covered now, and not narrowed by a change under way
      return;
    }
    waiters.add(new Waiter(host, done));
    change();
  }

  /** Takes {@code host} out (its callbacks will not run); the group is removed once empty. */
  void leave(MqttHost host) {
    int i = indexOf(host);
    if (i < 0) {
      return;
    }
    members.remove(i);
    if (next > i) {
      next--;
    }
    waiters.removeIf(w -> w.host == host);
    if (members.isEmpty()) {
      groups.remove(this);
    } else {
      change();
    }
  }

  private int indexOf(MqttHost host) {
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i).host == host) {
        return i;
      }
    }
    return -1;
  }

  /** The scope of the members' permissions now. */
  private Scope wanted() {
    java.util.Set<Predicate> permissions = new HashSet<>();
    for (Member m : members) {
      Predicate p = m.host.permissions.subscribe();
      if (p == null) {
        return new Scope(true, java.util.Set.of());
      }
      permissions.add(p);
    }
    return new Scope(false, java.util.Set.copyOf(permissions));
  }

  /** Starts a change of the group's predicate to the members' scope, unless one is under way. */
  private void change() {
    if (changing != null || closed) {
      return;
    }
    Scope want = wanted();
    if (want.equals(set)) {
      return;
    }
    changing = want;
    Predicate f = filter;
    predicates.change(
        this,
        () -> want.all ? f : ClientAuth.intersect(f, Predicate.or(want.permissions)),
        () -> !closed,
        refused -> changed(want, refused));
  }

  /** On the loop: a change of the group's predicate is set ({@code refused} null) or refused. */
  private void changed(Scope want, ProtocolException refused) {
    changing = null;
    if (refused == null) {
      set = want;
    }
    List<Waiter> ready = new ArrayList<>();
    List<Waiter> failed = new ArrayList<>();
    for (Waiter w : waiters) {
      Predicate p = w.host.permissions.subscribe();
      if (set != null && set.covers(p)) {
        ready.add(w);
      } else if (refused != null && want.covers(p)) {
        failed.add(w);
      }
    }
    waiters.removeAll(ready);
    waiters.removeAll(failed);
    for (Waiter w : failed) {
      int i = indexOf(w.host);
      if (i >= 0) {
        members.remove(i);
        if (next > i) {
          next--;
        }
      }
    }
    if (members.isEmpty()) {
      groups.remove(this);
    } else if (refused == null || !failed.isEmpty() || !waiters.isEmpty()) {
      change(); // members that joined meanwhile wait for a change of their own
    }
    for (Waiter w : ready) {
      w.done.accept(false);
    }
    for (Waiter w : failed) {
      w.done.accept(true);
    }
  }

  @Override
  public boolean deliver(long messageId, MessageBytes bytes) {
    int n = members.size();
    if (n == 0) {
      groups.noMember.inc();
      return false;
    }
    Message m;
    try {
      m = groups.listener.deliveries.decode(messageId, bytes);
    } catch (CodecException e) {
      groups.noMember.inc(); // checked where it entered the federation: not seen in practice
      return false;
    }
    int published = MqttPublish.qos(m);
    for (int k = 0; k < n; k++) {
      int i = (next + k) % n;
      Member member = members.get(i);
      Predicate permission = member.host.permissions.subscribe();
      if (member.host.canTake(Math.min(member.sub.granted(), published))
          && (permission == null || permission.matches(m))) {
        next = (i + 1) % n;
        if (member.host.write(m, bytes.length, member.sub)) {
          groups.delivered.inc();
          return true;
        }
        return false; // dropped by the member (expired, too large), counted there
      }
    }
    groups.noMember.inc();
    return false;
  }

  @Override
  public String toString() {
    return "MQTT shared subscription group "
        + id
        + " ("
        + name
        + ", "
        + members.size()
        + " members)";
  }
}
