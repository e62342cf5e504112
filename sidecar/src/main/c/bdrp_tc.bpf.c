// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bdrp's kernel fast path: a TC ingress program that forwards transit DATA datagrams of a bdrp
 * router without waking the router's JVM.
 *
 * For a UDP datagram to this router's port that carries a DATA frame from a neighbour, with a D
 * whose every router other than this one has a next hop reached by UDP, the program splits D by
 * next hop: for each next hop whose destination mask meets D it writes D ∩ mask and the hop limit
 * less one into the header, rewrites the Ethernet, IP and UDP addresses for that neighbour (and
 * the checksums), and sends a clone out of the neighbour's interface with bpf_clone_redirect, so
 * the link's qdisc still shapes it. The router writes the neighbours' Ethernet addresses into the
 * table from the kernel's neighbour table: bpf_fib_lookup() would answer only on interfaces that
 * forward IP, which a router's need not. The original is dropped, or, when this router is in D, passed
 * up to the router's socket with D = {this router} for exact local delivery.
 *
 * "Up" is TC_ACT_UNSPEC: the packet goes on to the next filter of the interface (another router's
 * program, on an interface several routers share) and then up the stack as it came.
 *
 * A broadcast (no D) from its source's tree parent is cloned the same way to each of the source's
 * tree children the table names (fp_table.tree, written by the router from its ForwardingTable),
 * once the program has entered (source, message id) in its own duplicate window (bcast_seen; a
 * copy it holds already is dropped, as the JVM drops a duplicate). The original is dropped when
 * the router has no local hosts, or passed up with FP_FLAG_LOCAL, which tells the router to match
 * it locally and forward nothing. One not from the parent goes up (the router judges it: a former
 * parent the table does not name yet, or not_on_tree); one of a source in its grace (former
 * parents) goes up once recorded, for the router to forward. See docs/router.md, "Broadcasts in
 * the kernel".
 *
 * Anything else goes up untouched and the router handles it as before (hop limit 1, unknown
 * senders, routers without a route, neighbours over TCP, malformed headers): the JVM path stays
 * the reference, and the kernel only takes the packets where its result is the same.
 *
 * With auth (udpProtection: mac), every datagram from a neighbour ends with seq and a SipHash-2-4
 * tag under the link session's key. Before any decision the table makes, the program copies the
 * payload into a per-CPU scratch, checks the tag under the sender's key_in (a forgery is dropped)
 * and enters seq in the link's replay window (a replay is dropped); the windows and the counter
 * of the copies it sends live in link_state, per neighbour and across tables, under a spin lock.
 * Every copy it sends gets the next seq of the kernel's domain on that link and a tag under the
 * next hop's key_out; the copy passed up keeps its seq and is tagged again under key_in over its
 * rewritten D. Payloads over FP_MAX_AUTH_BYTES go up unverified for the router to verify.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fastpath.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define L3_OFF ETH_HLEN
#define L4_OFF (ETH_HLEN + sizeof(struct iphdr))
#define PAYLOAD_OFF (L4_OFF + sizeof(struct udphdr))
#define IP_CSUM_OFF (L3_OFF + offsetof(struct iphdr, check))
#define IP_SRC_OFF (L3_OFF + offsetof(struct iphdr, saddr))
#define IP_DST_OFF (L3_OFF + offsetof(struct iphdr, daddr))
#define UDP_CSUM_OFF (L4_OFF + offsetof(struct udphdr, check))
#define UDP_SPORT_OFF (L4_OFF + offsetof(struct udphdr, source))
#define UDP_DPORT_OFF (L4_OFF + offsetof(struct udphdr, dest))
#define D_OFF (PAYLOAD_OFF + FP_OFF_D)

/*
 * The current table: slot 0 of `tables` holds a map with one fp_table, replaced whole on every
 * update. `empty_table` (generation 0) is there until the router writes the first one.
 */
struct table_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_table);
} empty_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct table_map);
} tables SEC(".maps") = {
	.values = { [0] = &empty_table },
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_MAX_ROUTERS);
	__type(key, __u32);
	__type(value, __u64);
} forwarded SEC(".maps");

/* Per-packet scratch: too large for the 512-byte stack. D words stay big-endian throughout. */
/*
 * Lengths passed to helpers are masked with SCRATCH_MASK, which the verifier can bound (a
 * compared copy of a register does not bound the register the compiler passes); the arrays are
 * twice FP_MAX_WORDS so that the masked length always fits.
 */
#define SCRATCH_WORDS (2 * FP_MAX_WORDS)
#define SCRATCH_MASK (SCRATCH_WORDS * 8 - 8)

/*
 * With auth, the UDP payload is copied into buf (a power of two, masked offsets, and room past the
 * mask for the widest access) and kept equal to the packet's as the program rewrites it, for the
 * tags and the trailer's checksum.
 */
#define AUTH_MASK 4095
#define AUTH_BUF (AUTH_MASK + 1 + 64)
#define AUTH_WIN 24 /* bytes around the trailer whose sum changes with it: a multiple of 4 */

struct scratch {
	__u64 d[SCRATCH_WORDS];   /* D as it arrived */
	__u64 cur[SCRATCH_WORDS]; /* D as the packet holds it now */
	__u64 out[SCRATCH_WORDS]; /* D for the next copy */
	__u8 buf[AUTH_BUF];       /* auth: the payload as the packet holds it now */
	__u8 win[AUTH_WIN];       /* auth: the bytes around the trailer before it changes */
	struct ethhdr eth;        /* the Ethernet header as it came (the stack is short) */
	__u8 hdr[FP_OFF_D];       /* the fixed DATA header */
	__u32 saddr, daddr; /* the addresses and ports the packet holds now (network order) */
	__u16 sport, dport;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/*
 * Per neighbour router, across table swaps: the kernel's side of an authenticated link session.
 * The sequence counter of the copies the kernel sends to the neighbour, and the replay windows of
 * what it accepted from it (per domain: JVM [0], kernel [1]; the highest seq accepted, without the
 * domain bit, and bit i = that highest less i seen). Reset when a table names a newer session.
 */
struct link_state {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 session;
	__u64 out_seq;
	__u64 in_high[2];
	__u64 in_bits[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_MAX_ROUTERS);
	__type(key, __u32);
	__type(value, struct link_state);
} link_state SEC(".maps");

/*
 * The broadcasts the kernel took from a tree parent (current or former), by source router and
 * message id: a second copy of one (a parent changing while it travels) is dropped, as the JVM's
 * BroadcastWindow drops it. Exact keys, so that a neighbour cannot mark an id it does not know;
 * LRU, so that a flood of ids only shortens how long one is remembered. Across tables.
 */
#define FP_BCAST_WINDOW 65536

/* struct bcast_key: fastpath.h (the router marks the broadcasts it took too). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FP_BCAST_WINDOW);
	__type(key, struct bcast_key);
	__type(value, __u8);
} bcast_seen SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		*c += 1;
}

static __always_inline int up(__u32 why)
{
	count(why);
	return TC_ACT_UNSPEC;
}

/* Rewrites a 4-byte address of the IP header (both checksums: IP and the UDP pseudo header). */
static __always_inline int store_ip(struct __sk_buff *skb, __u32 off, __u32 old, __u32 new)
{
	if (old == new)
		return 0;
	if (bpf_l4_csum_replace(skb, UDP_CSUM_OFF, old, new,
				BPF_F_MARK_MANGLED_0 | BPF_F_PSEUDO_HDR | 4))
		return -1;
	if (bpf_l3_csum_replace(skb, IP_CSUM_OFF, old, new, 4))
		return -1;
	return bpf_skb_store_bytes(skb, off, &new, 4, 0);
}

static __always_inline int store_port(struct __sk_buff *skb, __u32 off, __u16 old, __u16 new)
{
	if (old == new)
		return 0;
	if (bpf_l4_csum_replace(skb, UDP_CSUM_OFF, old, new, BPF_F_MARK_MANGLED_0 | 2))
		return -1;
	return bpf_skb_store_bytes(skb, off, &new, 2, 0);
}

/* Writes the 2-byte (hop limit, flags) field, keeping the UDP checksum right. */
static __always_inline int store_hop(struct __sk_buff *skb, __u16 old, __u16 new)
{
	if (old == new)
		return 0;
	if (bpf_l4_csum_replace(skb, UDP_CSUM_OFF, old, new, BPF_F_MARK_MANGLED_0 | 2))
		return -1;
	return bpf_skb_store_bytes(skb, PAYLOAD_OFF + FP_OFF_HOP, &new, 2, 0);
}

/* Replaces the n words of D in the packet by s->out (and s->cur by it), checksum included. */
static __always_inline int store_d(struct __sk_buff *skb, struct scratch *s, __u32 n)
{
	/* bpf_csum_diff takes at most 512 bytes in all: D in two halves of up to 256 bytes. */
	__u32 first = (n > 32 ? 32 : n) * 8 & 0x1f8;
	__u32 second = (n > 32 ? n - 32 : 0) * 8 & 0x1f8;
	if (first > 256 || second > 256)
		return -1;
	__s64 diff = bpf_csum_diff((__be32 *)s->cur, first, (__be32 *)s->out, first, 0);
	if (diff < 0)
		return -1;
	if (second) {
		diff = bpf_csum_diff((__be32 *)&s->cur[32], second, (__be32 *)&s->out[32], second,
				     (__wsum)diff);
		if (diff < 0)
			return -1;
	}
	__u32 len = (n * 8) & SCRATCH_MASK;
	if (len == 0)
		return -1;
	if (bpf_skb_store_bytes(skb, D_OFF, s->out, len, 0))
		return -1;
	if (bpf_l4_csum_replace(skb, UDP_CSUM_OFF, 0, (__u32)diff, BPF_F_MARK_MANGLED_0))
		return -1;
	__builtin_memcpy(s->cur, s->out, sizeof(s->cur));
	return 0;
}

/* ---- authentication: SipHash-2-4, the replay window, the trailer ---- */

/*
 * An offset into buf the verifier can bound: callers only pass v <= FP_MAX_AUTH_BYTES, so the mask
 * changes nothing, but the compiler, which knows that, may not drop it.
 */
static __always_inline __u32 auth_offset(__u32 v)
{
	asm volatile("" : "+r"(v));
	return v & AUTH_MASK;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "SipHash reads its words little-endian: build for a little-endian target"
#endif

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* SipHash's state: four locals that stay in registers (a pointer to them is inlined away). */
struct sip {
	__u64 v0, v1, v2, v3;
};

static __always_inline void sip_round(struct sip *h)
{
	h->v0 += h->v1;
	h->v1 = ROTL(h->v1, 13);
	h->v1 ^= h->v0;
	h->v0 = ROTL(h->v0, 32);
	h->v2 += h->v3;
	h->v3 = ROTL(h->v3, 16);
	h->v3 ^= h->v2;
	h->v0 += h->v3;
	h->v3 = ROTL(h->v3, 21);
	h->v3 ^= h->v0;
	h->v2 += h->v1;
	h->v1 = ROTL(h->v1, 17);
	h->v1 ^= h->v2;
	h->v2 = ROTL(h->v2, 32);
}

static __always_inline void sip_compress(struct sip *h, __u64 m)
{
	h->v3 ^= m;
	sip_round(h);
	sip_round(h);
	h->v0 ^= m;
}

/* Words of buf SipHash takes per turn of its loop: fewer turns for the verifier to walk. */
#define SIP_STRIDE 4

/*
 * Word w of buf (bytes 8w..8w+7), little-endian, for w < 512 + SIP_STRIDE: read as one aligned
 * u64 (buf lies at a multiple of 8 in the scratch). Read through a u8 pointer, the compiler
 * would assume no alignment and load the word byte by byte.
 */
static __always_inline __u64 buf_word(struct scratch *s, __u32 w)
{
	return ((__u64 *)s->buf)[w];
}

/* A word index into buf the verifier can bound (see auth_offset). */
static __always_inline __u32 buf_index(__u32 w)
{
	asm volatile("" : "+r"(w));
	return w & (AUTH_MASK / 8);
}

/*
 * SipHash-2-4 under (k0, k1) of buf's first len bytes (len <= FP_MAX_AUTH_BYTES), buf's words
 * read little-endian. A subprogram of its own, verified once for its three callers. Its state
 * stays in registers and its loop is a plain bounded one, SIP_STRIDE words a turn and then the
 * remaining whole words one by one: no call per word (a bpf_loop callback, an indirect call that
 * loads and stores the state each time).
 */
__noinline __u64 bdrp_siphash(struct scratch *s, __u64 k0, __u64 k1, __u32 len)
{
	if (!s || len > FP_MAX_AUTH_BYTES)
		return 0;
	struct sip h = {
		.v0 = k0 ^ 0x736f6d6570736575ULL,
		.v1 = k1 ^ 0x646f72616e646f6dULL,
		.v2 = k0 ^ 0x6c7967656e657261ULL,
		.v3 = k1 ^ 0x7465646279746573ULL,
	};
	__u32 words = len / 8;
	__u32 i = 0;
	for (; i + SIP_STRIDE <= words; i += SIP_STRIDE) {
		__u32 w = buf_index(i);
		sip_compress(&h, buf_word(s, w));
		sip_compress(&h, buf_word(s, w + 1));
		sip_compress(&h, buf_word(s, w + 2));
		sip_compress(&h, buf_word(s, w + 3));
	}
	for (; i < words; i++)
		sip_compress(&h, buf_word(s, buf_index(i)));
	/* The last 0..7 bytes, and the length in the top byte; buf has room past them. */
	__u32 rem = len & 7;
	__u64 last = buf_word(s, buf_index(words));
	last = rem ? last & ((1ULL << (8 * rem)) - 1) : 0;
	last |= (__u64)len << 56;
	sip_compress(&h, last);
	h.v2 ^= 0xff;
	sip_round(&h);
	sip_round(&h);
	sip_round(&h);
	sip_round(&h);
	return h.v0 ^ h.v1 ^ h.v2 ^ h.v3;
}

/* A new session's state: its out counter before the first, windows at the router's floors. */
static __always_inline void session_reset(struct link_state *ls, struct fp_neigh *nb)
{
	ls->session = nb->session;
	ls->out_seq = FP_SEQ_KERNEL;
	ls->in_high[0] = nb->floor[0] & ~FP_SEQ_KERNEL;
	ls->in_high[1] = nb->floor[1] & ~FP_SEQ_KERNEL;
	ls->in_bits[0] = ~0ULL;
	ls->in_bits[1] = ~0ULL;
}

/* Enters seq (valid) into its domain's window; 0 when it was seen or is below the window. */
static __always_inline int window_accept(struct link_state *ls, __u64 seq)
{
	__u32 d = seq >> 63;
	__u64 v = seq & ~FP_SEQ_KERNEL;
	__u64 high = ls->in_high[d];
	__u64 bits = ls->in_bits[d];
	if (v > high) {
		__u64 gap = v - high;
		bits = gap >= 64 ? 0 : bits << gap;
		ls->in_bits[d] = bits | 1;
		ls->in_high[d] = v;
		return 1;
	}
	__u64 gap = high - v;
	if (gap >= 64)
		return 0;
	__u64 bit = 1ULL << gap;
	if (bits & bit)
		return 0;
	ls->in_bits[d] = bits | bit;
	return 1;
}

/*
 * Writes seq and its tag under (k0, k1) into the trailer of buf and of the packet (payload bytes
 * of UDP payload), keeping the UDP checksum right: the sum changes by the difference of the
 * AUTH_WIN bytes around the trailer, from a multiple of 4 into the payload (so at an even offset
 * from the UDP header, as the checksum's 16-bit words lie); bytes past the payload are the same
 * before and after, and cancel.
 */
static __always_inline int store_trailer(struct __sk_buff *skb, struct scratch *s, __u32 payload,
					 __u64 seq, __u64 k0, __u64 k1)
{
	__u32 toff = auth_offset(payload - FP_AUTH_TRAILER);
	__u32 ws = toff & ~3U;
	__builtin_memcpy(s->win, &s->buf[ws], AUTH_WIN);
	*(__u64 *)&s->buf[toff] = bpf_cpu_to_be64(seq);
	__u64 tag = bdrp_siphash(s, k0, k1, payload - 8);
	*(__u64 *)&s->buf[toff + 8] = tag;
	__s64 diff = bpf_csum_diff((__be32 *)s->win, AUTH_WIN, (__be32 *)&s->buf[ws], AUTH_WIN, 0);
	if (diff < 0)
		return -1;
	if (bpf_skb_store_bytes(skb, PAYLOAD_OFF + toff, &s->buf[toff], FP_AUTH_TRAILER, 0))
		return -1;
	if (bpf_l4_csum_replace(skb, UDP_CSUM_OFF, 0, (__u32)diff, BPF_F_MARK_MANGLED_0))
		return -1;
	return 0;
}

/*
 * Checks a datagram from neighbour nb (payload bytes of UDP payload, at least a header and the
 * trailer): FP_COUNTERS when it verified and its seq was new (now entered in the window, and
 * *seq_out set), otherwise what to count: FP_UP_LARGE, FP_UP_NO_TABLE (no keys for the session
 * the kernel is in) go up; FP_DROP_MAC, FP_DROP_REPLAY are dropped.
 */
static __noinline __u32 authenticate(struct __sk_buff *skb, struct scratch *s,
					  struct fp_neigh *nb, __u32 payload, __u64 *seq_out)
{
	if (payload > FP_MAX_AUTH_BYTES)
		return FP_UP_LARGE;
	__u64 session = nb->session;
	if (session == 0)
		return FP_UP_NO_TABLE;
	__u32 r = nb->router;
	struct link_state *ls = bpf_map_lookup_elem(&link_state, &r);
	if (!ls)
		return FP_UP_NO_TABLE;
	/* A table older than the session another packet already brought in has the old keys:
	 * up, for the router to judge (a table swap is under way). */
	if (session < *(volatile __u64 *)&ls->session)
		return FP_UP_NO_TABLE;
	__u32 len = auth_offset(payload); /* payload <= FP_MAX_AUTH_BYTES: unchanged */
	if (len == 0)
		return FP_UP_MALFORMED;
	if (bpf_skb_load_bytes(skb, PAYLOAD_OFF, s->buf, len))
		return FP_UP_MALFORMED;
	__u32 toff = auth_offset(len - FP_AUTH_TRAILER);
	__u64 seq = bpf_be64_to_cpu(*(__u64 *)&s->buf[toff]);
	__u64 tag = *(__u64 *)&s->buf[toff + 8];
	if (bdrp_siphash(s, nb->key_in[0], nb->key_in[1], len - 8) != tag)
		return FP_DROP_MAC;
	if ((seq & ~FP_SEQ_KERNEL) == 0)
		return FP_DROP_REPLAY;
	int stale = 0, fresh = 0;
	bpf_spin_lock(&ls->lock);
	if (ls->session != session) {
		if (session < ls->session)
			stale = 1;
		else
			session_reset(ls, nb);
	}
	if (!stale)
		fresh = window_accept(ls, seq);
	bpf_spin_unlock(&ls->lock);
	if (stale)
		return FP_UP_NO_TABLE;
	if (!fresh)
		return FP_DROP_REPLAY;
	*seq_out = seq;
	return FP_COUNTERS;
}

/* The next seq of the kernel's copies to nb, or 0 when the table is older than its session. */
static __always_inline __u64 next_out_seq(struct fp_neigh *nb)
{
	__u32 r = nb->router;
	struct link_state *ls = bpf_map_lookup_elem(&link_state, &r);
	if (!ls)
		return 0;
	__u64 session = nb->session;
	__u64 seq = 0;
	bpf_spin_lock(&ls->lock);
	if (ls->session != session && session > ls->session)
		session_reset(ls, nb);
	if (ls->session == session)
		seq = ++ls->out_seq;
	bpf_spin_unlock(&ls->lock);
	return seq;
}

/* ---- loops over words, as bpf_loop callbacks (verified once, not once per iteration) ---- */

/*
 * A word index the verifier can bound: callers only pass w < n <= FP_MAX_WORDS, so the mask
 * changes nothing, but the compiler may not drop it (the barrier hides w's range from it).
 */
static __always_inline __u32 word_index(__u32 w)
{
	asm volatile("" : "+r"(w));
	return w & (FP_MAX_WORDS - 1);
}

struct scan_ctx {
	struct fp_table *t;
	struct scratch *s;
	__u32 n;
	__u32 self_word;
	__u32 targets;  /* neighbours that get a copy, bit i = neighbour i */
	__u32 verdict;  /* FP_COUNTERS: go on; otherwise the reason to pass the packet up */
	int local;
	__u32 auth;
};

/* Whether router src is another router with a route: some neighbour's mask names it. */
static __always_inline int source_routable(struct fp_table *t, __u32 src)
{
	if (src == t->self || src >= FP_MAX_ROUTERS)
		return 0;
	__u32 w = src / 64;
	if (w >= t->words)
		return 0;
	w &= FP_MAX_WORDS - 1;
	__u64 bit = bpf_cpu_to_be64(1ULL << (src % 64));
	__u32 count_n = t->count;
	for (__u32 i = 0; i < FP_MAX_NEIGH; i++) {
		if (i >= count_n)
			break;
		if (t->n[i].mask[w] & bit)
			return 1;
	}
	return 0;
}

/* Word w of D: is this router in it, which neighbours get a part, is every part routable. */
static long scan_word(__u32 w, void *data)
{
	struct scan_ctx *c = data;
	struct fp_table *t = c->t;
	struct scratch *s = c->s;
	if (w >= c->n)
		return 1;
	w = word_index(w);
	__u64 dw = s->d[w];
	s->cur[w] = dw;
	if (w + 1 == t->words && (dw & ~t->last_mask)) {
		c->verdict = FP_UP_WIDE;
		return 1;
	}
	if (w == c->self_word && (dw & t->self_bit)) {
		c->local = 1;
		dw &= ~t->self_bit;
	}
	__u32 count_n = t->count;
	for (__u32 i = 0; i < FP_MAX_NEIGH; i++) {
		if (i >= count_n || dw == 0)
			break;
		__u64 part = dw & t->n[i].mask[w];
		if (part) {
			if (!t->n[i].ifindex) {
				c->verdict = t->n[i].flags & FP_NEIGH_NO_L2 ? FP_UP_NO_NEIGH
									   : FP_UP_TCP_HOP;
				return 1;
			}
			if (c->auth && !t->n[i].session) {
				c->verdict = FP_UP_NO_TABLE; /* no key to tag its copy with */
				return 1;
			}
			c->targets |= 1U << i;
			dw &= ~part;
		}
	}
	if (dw) {
		c->verdict = FP_UP_NO_ROUTE;
		return 1;
	}
	return 0;
}

struct sender_ctx {
	struct fp_table *t;
	__u32 ip;
	__u16 port;
	int sender; /* the neighbour at ip and port, or -1 */
};

/*
 * Neighbour i: is it the sender? Run by bpf_loop, so that the verifier sees the index found as one
 * unknown value, not as 33 constants that would each take a path of their own through the rest of
 * the program (the index now selects the sender's keys).
 */
static long find_sender(__u32 i, void *data)
{
	struct sender_ctx *c = data;
	__u32 k = i & (FP_MAX_NEIGH - 1);
	if (i >= FP_MAX_NEIGH)
		return 1;
	if (c->t->n[k].ip == c->ip && c->t->n[k].port == c->port) {
		c->sender = k;
		return 1;
	}
	return 0;
}

struct split_ctx {
	struct fp_table *t;
	struct scratch *s;
	__u32 neighbour; /* < FP_MAX_NEIGH; FP_MAX_NEIGH: D = {this router} */
	__u32 self_word;
	__u32 auth;      /* also write the word into buf */
};

/* Word w of the next copy's D: D ∩ the neighbour's mask, or this router alone. */
static long split_word(__u32 w, void *data)
{
	struct split_ctx *c = data;
	w = word_index(w);
	__u32 i = c->neighbour;
	__u64 out;
	if (i < FP_MAX_NEIGH)
		out = c->s->d[w] & c->t->n[i].mask[w];
	else
		out = w == c->self_word ? c->t->self_bit : 0;
	c->s->out[w] = out;
	if (c->auth)
		*(__u64 *)&c->s->buf[FP_OFF_D + 8 * w] = out;
	return 0;
}

/* ---- loops over next hops, as bpf_loop callbacks ---- */

struct copy_ctx {
	struct __sk_buff *skb;
	struct fp_table *t;
	struct scratch *s;
	__u32 n;
	__u32 targets;
	__u32 self_word;
	__u32 verdict; /* FP_COUNTERS: go on */
	__u32 auth;
	__u32 payload; /* auth: bytes of UDP payload */
	__u32 bcast;   /* a broadcast: no D to write */
};

static __always_inline __u32 neighbour_index(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (FP_MAX_NEIGH - 1);
}

/* Writes next hop i's D and addresses into the packet and sends a clone out of its interface. */
static long copy_to(__u32 i, void *data)
{
	struct copy_ctx *c = data;
	struct __sk_buff *skb = c->skb;
	struct scratch *s = c->s;
	if (i >= c->t->count)
		return 1;
	if (!(c->targets & (1U << i)))
		return 0;
	i = neighbour_index(i);
	struct fp_neigh *nb = &c->t->n[i];
	struct split_ctx split = {
		.t = c->t, .s = s, .neighbour = i, .self_word = c->self_word, .auth = c->auth,
	};
	if (!c->bcast)
		bpf_loop(c->n, split_word, &split, 0);
	if (c->auth) {
		/* Tagged under the neighbour's key with the kernel's next seq on that link. */
		__u64 seq = next_out_seq(nb);
		if (!seq) {
			count(FP_REDIRECT_FAILED); /* a newer table is on its way: its copy waits for it */
			return 0;
		}
		if (store_trailer(skb, s, c->payload, seq, nb->key_out[0], nb->key_out[1])) {
			c->verdict = FP_REDIRECT_FAILED;
			return 1;
		}
	}
	if ((!c->bcast && store_d(skb, s, c->n)) ||
	    store_ip(skb, IP_SRC_OFF, s->saddr, nb->local_ip) ||
	    store_ip(skb, IP_DST_OFF, s->daddr, nb->ip) ||
	    store_port(skb, UDP_SPORT_OFF, s->sport, c->t->udp_port) ||
	    store_port(skb, UDP_DPORT_OFF, s->dport, nb->port)) {
		c->verdict = FP_REDIRECT_FAILED;
		return 1;
	}
	s->saddr = nb->local_ip;
	s->daddr = nb->ip;
	s->sport = c->t->udp_port;
	s->dport = nb->port;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), nb->dmac, ETH_ALEN, 0) ||
	    bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), nb->smac, ETH_ALEN, 0)) {
		c->verdict = FP_REDIRECT_FAILED;
		return 1;
	}
	if (bpf_clone_redirect(skb, nb->ifindex, 0)) {
		count(FP_REDIRECT_FAILED);
		return 0;
	}
	__u32 r = nb->router;
	__u64 *fw = bpf_map_lookup_elem(&forwarded, &r);
	if (fw)
		*fw += 1;
	return 0;
}

/* ---- broadcasts ---- */

struct child_ctx {
	struct fp_table *t;
	__u32 targets;
	__u32 auth;
	__u32 verdict; /* FP_COUNTERS: every child can be sent its copy from the kernel */
};

/* Child i: can the kernel send it a copy (UDP with an Ethernet address, and a key with auth)? */
static long check_child(__u32 i, void *data)
{
	struct child_ctx *c = data;
	if (i >= FP_MAX_NEIGH)
		return 1;
	if (!(c->targets & (1U << i)))
		return 0;
	i = neighbour_index(i);
	struct fp_neigh *nb = &c->t->n[i];
	if (!nb->ifindex) {
		c->verdict = nb->flags & FP_NEIGH_NO_L2 ? FP_UP_NO_NEIGH : FP_UP_TCP_HOP;
		return 1;
	}
	if (c->auth && !nb->session) {
		c->verdict = FP_UP_NO_TABLE;
		return 1;
	}
	return 0;
}

/* What the main program has found out about a datagram, for the broadcast path. */
struct bcast_args {
	struct iphdr *ip;
	struct udphdr *udp;
	__u64 seq;      /* auth: the seq it came with */
	int sender;     /* the neighbour it came from, or -1 */
	__u32 payload;  /* bytes of UDP payload */
	__u32 frame;    /* bytes of the frame */
	__u32 auth;
};

/*
 * A broadcast (flags FP_FLAG_BROADCAST), as DataPlane.receive and ForwardingTable.broadcast handle
 * one from a neighbour: refused when its source is this router or has no route; taken only from
 * the source's tree parent (or a former one); a second copy of one taken is a duplicate; copies go
 * to the source's children other than the sender with the hop limit less one, none when it is 1 or
 * less; and every router on the tree delivers it locally. The kernel decides the same or passes
 * the packet up: off the tree (the router counts not_on_tree, or takes it from a former parent the
 * table does not name yet), a source in its grace (former parents), a child over TCP, hop limit.
 * It records the broadcast in its window before it passes one up from a parent, so that a second
 * copy that reaches the kernel later is dropped as the router would drop it.
 */
static __always_inline int broadcast(struct __sk_buff *skb, struct scratch *s, struct fp_table *t,
				struct bcast_args *a)
{
	__u8 *hdr = s->hdr;
	__u32 n = ((__u32)hdr[FP_OFF_WORDS] << 8) | hdr[FP_OFF_WORDS + 1];
	if (n != 0 || FP_OFF_D + FP_MIN_MESSAGE > a->frame)
		return up(FP_UP_MALFORMED);
	int sender = a->sender;
	if (sender < 0 || sender >= FP_MAX_NEIGH)
		return up(FP_UP_UNKNOWN_SENDER);
	__u32 src = ((__u32)hdr[FP_OFF_SOURCE] << 8) | hdr[FP_OFF_SOURCE + 1];
	if (!source_routable(t, src))
		return up(FP_UP_SOURCE);
	struct fp_tree *tr = &t->tree[src & (FP_MAX_ROUTERS - 1)]; /* src < FP_MAX_ROUTERS */
	__u32 bit = 1U << sender;
	struct bcast_key key = { .source = src };
	__builtin_memcpy(&key.id, &hdr[FP_OFF_ID], 8);
	if (tr->parent != sender && !(tr->former & bit)) {
		/* Off the tree as this table has it: a copy the kernel took already is a duplicate
		 * whatever the router's tree says; anything else is the router's to judge (and is not
		 * recorded: a neighbour off the tree must not mark what the parent sends). */
		if (bpf_map_lookup_elem(&bcast_seen, &key)) {
			count(FP_DROP_BCAST_DUPLICATE);
			return TC_ACT_SHOT;
		}
		return up(tr->parent == FP_NO_PARENT ? FP_UP_BROADCAST : FP_UP_BCAST_OFF_TREE);
	}
	__u8 one = 1;
	long err = bpf_map_update_elem(&bcast_seen, &key, &one, BPF_NOEXIST);
	if (err == -17 /* EEXIST */) {
		count(FP_DROP_BCAST_DUPLICATE);
		return TC_ACT_SHOT;
	}
	if (err)
		return up(FP_UP_BROADCAST);
	if (tr->former)
		return up(FP_UP_BCAST_GRACE);

	__u32 count_n = t->count;
	__u32 all = count_n >= 32 ? 0xffffffffU : (1U << count_n) - 1;
	__u32 targets = tr->children & ~bit & all;
	__u8 hop = hdr[FP_OFF_HOP];
	__u8 flags = hdr[FP_OFF_FLAGS];
	__u32 auth = a->auth;
	if (targets && hop <= 1)
		return up(FP_UP_HOP_LIMIT);
	struct child_ctx check = { .t = t, .targets = targets, .auth = auth, .verdict = FP_COUNTERS };
	bpf_loop(FP_MAX_NEIGH, check_child, &check, 0);
	if (check.verdict != FP_COUNTERS)
		return up(check.verdict);

	struct iphdr *ip = a->ip;
	struct udphdr *udp = a->udp;
	__u16 hop_field_old = ((__u16)hop) | ((__u16)flags << 8); /* as the bytes lie */
	__u16 hop_field_now = hop_field_old;
	s->saddr = ip->saddr;
	s->daddr = ip->daddr;
	s->sport = udp->source;
	s->dport = udp->dest;
	if (targets) {
		hop_field_now = ((__u16)(hop - 1)) | ((__u16)flags << 8);
		if (store_hop(skb, hop_field_old, hop_field_now))
			return up(FP_REDIRECT_FAILED);
		if (auth)
			s->buf[FP_OFF_HOP] = hop - 1;
		struct copy_ctx copy = {
			.skb = skb, .t = t, .s = s, .n = 0, .targets = targets, .self_word = 0,
			.verdict = FP_COUNTERS, .auth = auth, .payload = a->payload, .bcast = 1,
		};
		bpf_loop(FP_MAX_NEIGH, copy_to, &copy, 0);
		if (copy.verdict != FP_COUNTERS) {
			count(FP_REDIRECT_FAILED);
			return TC_ACT_SHOT;
		}
	}
	if (!t->hosts) {
		count(FP_BCAST);
		return TC_ACT_SHOT;
	}

	/* Up to this router's socket as it came, marked for local delivery only (and with auth,
	 * tagged again under the sender's key with the seq it came with). */
	__u16 hop_field_local = ((__u16)hop) | ((__u16)(flags | FP_FLAG_LOCAL) << 8);
	if (auth) {
		struct fp_neigh *from = &t->n[neighbour_index(sender)];
		s->buf[FP_OFF_HOP] = hop;
		s->buf[FP_OFF_FLAGS] = flags | FP_FLAG_LOCAL;
		if (store_trailer(skb, s, a->payload, a->seq, from->key_in[0], from->key_in[1]))
			return TC_ACT_SHOT;
	}
	if (store_hop(skb, hop_field_now, hop_field_local) ||
	    store_ip(skb, IP_SRC_OFF, s->saddr, ip->saddr) ||
	    store_ip(skb, IP_DST_OFF, s->daddr, ip->daddr) ||
	    store_port(skb, UDP_SPORT_OFF, s->sport, udp->source) ||
	    store_port(skb, UDP_DPORT_OFF, s->dport, udp->dest) ||
	    bpf_skb_store_bytes(skb, 0, &s->eth, sizeof(s->eth), 0))
		return TC_ACT_SHOT;
	count(FP_BCAST_LOCAL);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int bdrp_ingress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct iphdr ip;
	struct udphdr udp;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return TC_ACT_UNSPEC;
	struct ethhdr *eth = &s->eth;
	__u8 *hdr = s->hdr;

	if (bpf_skb_load_bytes(skb, 0, eth, sizeof(*eth)))
		return TC_ACT_UNSPEC;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_UNSPEC;
	if (bpf_skb_load_bytes(skb, L3_OFF, &ip, sizeof(ip)))
		return TC_ACT_UNSPEC;
	if (ip.protocol != IPPROTO_UDP)
		return TC_ACT_UNSPEC;
	struct table_map *inner = bpf_map_lookup_elem(&tables, &zero);
	if (!inner)
		return TC_ACT_UNSPEC;
	struct fp_table *t = bpf_map_lookup_elem(inner, &zero);
	if (!t || t->udp_port == 0)
		return TC_ACT_UNSPEC;
	if (ip.ihl != 5 || (ip.frag_off & bpf_htons(0x3fff))) {
		/* Options or a fragment: only counted when it is for this router's port. */
		if (ip.ihl == 5 && !(ip.frag_off & bpf_htons(0x1fff)) &&
		    !bpf_skb_load_bytes(skb, L4_OFF, &udp, sizeof(udp)) && udp.dest == t->udp_port)
			count(FP_UP_FRAGMENT);
		return TC_ACT_UNSPEC;
	}
	if (bpf_skb_load_bytes(skb, L4_OFF, &udp, sizeof(udp)))
		return TC_ACT_UNSPEC;
	if (udp.dest != t->udp_port)
		return TC_ACT_UNSPEC;
	if (t->generation == 0)
		return up(FP_UP_NO_TABLE);

	/* The fixed DATA header. With auth, the trailer follows the frame. */
	__u32 auth = t->auth;
	__u32 payload = bpf_ntohs(udp.len);
	if (payload < sizeof(udp) + FP_OFF_D || payload > 0xffff)
		return up(FP_UP_MALFORMED);
	payload -= sizeof(udp);
	if (PAYLOAD_OFF + payload > skb->len)
		return up(FP_UP_MALFORMED);
	if (bpf_skb_load_bytes(skb, PAYLOAD_OFF, hdr, FP_OFF_D))
		return up(FP_UP_MALFORMED);
	__u32 frame = payload;
	if (auth) {
		if (payload < FP_OFF_D + FP_AUTH_TRAILER)
			return up(FP_UP_MALFORMED);
		frame = payload - FP_AUTH_TRAILER;
	}
	__u32 length = ((__u32)hdr[0] << 24) | ((__u32)hdr[1] << 16) | ((__u32)hdr[2] << 8) | hdr[3];
	if (length + 4 != frame || hdr[FP_OFF_VERSION] != FP_VERSION ||
	    hdr[FP_OFF_TYPE] != FP_TYPE_DATA)
		return up(FP_UP_MALFORMED);

	/* Only a neighbour's datagrams, as the router's socket would take them. */
	__u32 count_n = t->count;
	if (count_n > FP_MAX_NEIGH)
		return up(FP_UP_NO_TABLE);
	struct sender_ctx who = { .t = t, .ip = ip.saddr, .port = udp.source, .sender = -1 };
	bpf_loop(count_n, find_sender, &who, 0);
	int sender = who.sender;

	/* With auth, a datagram counts only once its tag verified and its seq is new: before any
	 * decision that depends on the table, and a forged or replayed one is not even passed up. */
	__u64 seq = 0;
	if (auth) {
		if (sender < 0)
			return up(FP_UP_UNKNOWN_SENDER);
		__u32 v = authenticate(skb, s, &t->n[neighbour_index(sender)], payload, &seq);
		if (v == FP_DROP_MAC || v == FP_DROP_REPLAY) {
			count(v);
			return TC_ACT_SHOT;
		}
		if (v != FP_COUNTERS)
			return up(v);
	}

	__u8 flags = hdr[FP_OFF_FLAGS];
	if (flags == FP_FLAG_BROADCAST) {
		struct bcast_args a = {
			.ip = &ip, .udp = &udp, .seq = seq, .sender = sender, .payload = payload,
			.frame = frame, .auth = auth,
		};
		return broadcast(skb, s, t, &a);
	}
	if (flags & FP_FLAG_LOCAL) {
		count(FP_DROP_LOCAL_FLAG);
		return TC_ACT_SHOT;
	}
	if (flags == FP_FLAG_D_LIST)
		return up(FP_UP_D_LIST);
	if (flags != 0)
		return up(FP_UP_MALFORMED);
	__u32 n = ((__u32)hdr[FP_OFF_WORDS] << 8) | hdr[FP_OFF_WORDS + 1];
	if (n == 0 || FP_OFF_D + 8 * n + FP_MIN_MESSAGE > frame)
		return up(FP_UP_MALFORMED);
	if (n > t->words || t->words > FP_MAX_WORDS)
		return up(FP_UP_WIDE);
	__u8 hop = hdr[FP_OFF_HOP];
	if (hop <= 1)
		return up(FP_UP_HOP_LIMIT);
	if (sender < 0)
		return up(FP_UP_UNKNOWN_SENDER);

	/* A source that is this router, or one without a route, is not forwarded: the router
	 * refuses and counts it (a neighbour naming it lies). */
	__u32 src = ((__u32)hdr[FP_OFF_SOURCE] << 8) | hdr[FP_OFF_SOURCE + 1];
	if (!source_routable(t, src))
		return up(FP_UP_SOURCE);

	__u32 dlen = (n * 8) & SCRATCH_MASK; /* n <= FP_MAX_WORDS: unchanged */
	if (dlen == 0)
		return up(FP_UP_WIDE);
	if (bpf_skb_load_bytes(skb, D_OFF, s->d, dlen))
		return up(FP_UP_MALFORMED);

	/* Which neighbours get a copy; whether this router is in D. */
	__u32 self_word = t->self / 64;
	struct scan_ctx scan = {
		.t = t, .s = s, .n = n, .self_word = self_word, .verdict = FP_COUNTERS, .auth = auth,
	};
	bpf_loop(FP_MAX_WORDS, scan_word, &scan, 0);
	if (scan.verdict != FP_COUNTERS)
		return up(scan.verdict);
	__u32 targets = scan.targets;
	if (!targets)
		return up(FP_UP_LOCAL_ONLY);

	/* One copy per next hop, out of its interface with the addresses the router gave. */
	struct copy_ctx copy = {
		.skb = skb, .t = t, .s = s, .n = n, .targets = targets, .self_word = self_word,
		.verdict = FP_COUNTERS, .auth = auth, .payload = payload,
	};
	__u16 hop_field_old = ((__u16)hop) | ((__u16)flags << 8); /* as the bytes lie */
	__u16 hop_field_new = ((__u16)(hop - 1)) | ((__u16)flags << 8);
	if (store_hop(skb, hop_field_old, hop_field_new))
		return up(FP_REDIRECT_FAILED);
	if (auth)
		s->buf[FP_OFF_HOP] = hop - 1;
	s->saddr = ip.saddr;
	s->daddr = ip.daddr;
	s->sport = udp.source;
	s->dport = udp.dest;
	bpf_loop(FP_MAX_NEIGH, copy_to, &copy, 0);
	if (copy.verdict != FP_COUNTERS) {
		/* A rewrite failed half-way: nothing sane is left to pass up. */
		count(FP_REDIRECT_FAILED);
		return TC_ACT_SHOT;
	}
	if (!scan.local) {
		count(FP_SPLIT);
		return TC_ACT_SHOT;
	}

	/* Up to this router's socket as it came, with D = {this router} (and with auth, tagged
	 * again under the sender's key with the seq it came with). */
	struct split_ctx split = {
		.t = t, .s = s, .neighbour = FP_MAX_NEIGH, .self_word = self_word, .auth = auth,
	};
	bpf_loop(n, split_word, &split, 0);
	if (auth) {
		struct fp_neigh *from = &t->n[neighbour_index(sender)];
		s->buf[FP_OFF_HOP] = hop;
		if (store_trailer(skb, s, payload, seq, from->key_in[0], from->key_in[1]))
			return TC_ACT_SHOT;
	}
	if (store_d(skb, s, n) || store_hop(skb, hop_field_new, hop_field_old) ||
	    store_ip(skb, IP_SRC_OFF, s->saddr, ip.saddr) ||
	    store_ip(skb, IP_DST_OFF, s->daddr, ip.daddr) ||
	    store_port(skb, UDP_SPORT_OFF, s->sport, udp.source) ||
	    store_port(skb, UDP_DPORT_OFF, s->dport, udp.dest) ||
	    bpf_skb_store_bytes(skb, 0, eth, sizeof(*eth), 0))
		return TC_ACT_SHOT;
	count(FP_SPLIT_LOCAL);
	return TC_ACT_UNSPEC;
}
