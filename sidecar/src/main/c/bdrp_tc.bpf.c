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
 * Anything else goes up untouched and the router handles it as before (broadcasts, hop limit 1,
 * unknown senders, routers without a route, neighbours over TCP, malformed headers): the JVM path
 * stays the reference, and the kernel only takes the packets where its result is the same.
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

struct scratch {
	__u64 d[SCRATCH_WORDS];   /* D as it arrived */
	__u64 cur[SCRATCH_WORDS]; /* D as the packet holds it now */
	__u64 out[SCRATCH_WORDS]; /* D for the next copy */
	__u32 saddr, daddr; /* the addresses and ports the packet holds now (network order) */
	__u16 sport, dport;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

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

struct split_ctx {
	struct fp_table *t;
	struct scratch *s;
	__u32 neighbour; /* < FP_MAX_NEIGH; FP_MAX_NEIGH: D = {this router} */
	__u32 self_word;
};

/* Word w of the next copy's D: D ∩ the neighbour's mask, or this router alone. */
static long split_word(__u32 w, void *data)
{
	struct split_ctx *c = data;
	w = word_index(w);
	__u32 i = c->neighbour;
	if (i < FP_MAX_NEIGH)
		c->s->out[w] = c->s->d[w] & c->t->n[i].mask[w];
	else
		c->s->out[w] = w == c->self_word ? c->t->self_bit : 0;
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
	struct split_ctx split = { .t = c->t, .s = s, .neighbour = i, .self_word = c->self_word };
	bpf_loop(c->n, split_word, &split, 0);
	if (store_d(skb, s, c->n) || store_ip(skb, IP_SRC_OFF, s->saddr, nb->local_ip) ||
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

SEC("tc")
int bdrp_ingress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct ethhdr eth;
	struct iphdr ip;
	struct udphdr udp;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return TC_ACT_UNSPEC;
	if (eth.h_proto != bpf_htons(ETH_P_IP))
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

	/* The fixed DATA header. */
	__u8 hdr[FP_OFF_D];
	__u32 payload = bpf_ntohs(udp.len);
	if (payload < sizeof(udp) + FP_OFF_D || payload > 0xffff)
		return up(FP_UP_MALFORMED);
	payload -= sizeof(udp);
	if (PAYLOAD_OFF + payload > skb->len)
		return up(FP_UP_MALFORMED);
	if (bpf_skb_load_bytes(skb, PAYLOAD_OFF, hdr, sizeof(hdr)))
		return up(FP_UP_MALFORMED);
	__u32 length = ((__u32)hdr[0] << 24) | ((__u32)hdr[1] << 16) | ((__u32)hdr[2] << 8) | hdr[3];
	if (length + 4 != payload || hdr[FP_OFF_VERSION] != FP_VERSION ||
	    hdr[FP_OFF_TYPE] != FP_TYPE_DATA)
		return up(FP_UP_MALFORMED);
	__u8 flags = hdr[FP_OFF_FLAGS];
	if (flags == FP_FLAG_BROADCAST)
		return up(FP_UP_BROADCAST);
	if (flags != 0)
		return up(FP_UP_MALFORMED);
	__u32 n = ((__u32)hdr[FP_OFF_WORDS] << 8) | hdr[FP_OFF_WORDS + 1];
	if (n == 0 || FP_OFF_D + 8 * n + FP_MIN_MESSAGE > payload)
		return up(FP_UP_MALFORMED);
	if (n > t->words || t->words > FP_MAX_WORDS)
		return up(FP_UP_WIDE);
	__u8 hop = hdr[FP_OFF_HOP];
	if (hop <= 1)
		return up(FP_UP_HOP_LIMIT);

	/* Only a neighbour's datagrams, as the router's socket would take them. */
	__u32 count_n = t->count;
	if (count_n > FP_MAX_NEIGH)
		return up(FP_UP_NO_TABLE);
	int sender = -1;
	for (__u32 i = 0; i < FP_MAX_NEIGH; i++) {
		if (i >= count_n)
			break;
		if (t->n[i].ip == ip.saddr && t->n[i].port == udp.source) {
			sender = i;
			break;
		}
	}
	if (sender < 0)
		return up(FP_UP_UNKNOWN_SENDER);

	/* A source that is this router, or one without a route, is not forwarded: the router
	 * refuses and counts it (a neighbour naming it lies). */
	__u32 src = ((__u32)hdr[FP_OFF_SOURCE] << 8) | hdr[FP_OFF_SOURCE + 1];
	if (!source_routable(t, src))
		return up(FP_UP_SOURCE);

	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return TC_ACT_UNSPEC;
	__u32 dlen = (n * 8) & SCRATCH_MASK; /* n <= FP_MAX_WORDS: unchanged */
	if (dlen == 0)
		return up(FP_UP_WIDE);
	if (bpf_skb_load_bytes(skb, D_OFF, s->d, dlen))
		return up(FP_UP_MALFORMED);

	/* Which neighbours get a copy; whether this router is in D. */
	__u32 self_word = t->self / 64;
	struct scan_ctx scan = {
		.t = t, .s = s, .n = n, .self_word = self_word, .verdict = FP_COUNTERS,
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
		.verdict = FP_COUNTERS,
	};
	__u16 hop_field_old = ((__u16)hop) | ((__u16)flags << 8); /* as the bytes lie */
	__u16 hop_field_new = ((__u16)(hop - 1)) | ((__u16)flags << 8);
	if (store_hop(skb, hop_field_old, hop_field_new))
		return up(FP_REDIRECT_FAILED);
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

	/* Up to this router's socket as it came, with D = {this router}. */
	struct split_ctx split = { .t = t, .s = s, .neighbour = FP_MAX_NEIGH, .self_word = self_word };
	bpf_loop(n, split_word, &split, 0);
	if (store_d(skb, s, n) || store_hop(skb, hop_field_new, hop_field_old) ||
	    store_ip(skb, IP_SRC_OFF, s->saddr, ip.saddr) ||
	    store_ip(skb, IP_DST_OFF, s->daddr, ip.daddr) ||
	    store_port(skb, UDP_SPORT_OFF, s->sport, udp.source) ||
	    store_port(skb, UDP_DPORT_OFF, s->dport, udp.dest) ||
	    bpf_skb_store_bytes(skb, 0, &eth, sizeof(eth), 0))
		return TC_ACT_SHOT;
	count(FP_SPLIT_LOCAL);
	return TC_ACT_UNSPEC;
}
