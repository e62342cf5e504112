/*
 * The layout shared by the TC program (bdrp_tc.bpf.c), its loader (fastpath_jni.c) and the
 * router's Java side (io.bdrp.router.fastpath.FastPathTable writes a table in exactly this
 * layout, little-endian). Change one, change all three.
 */
#ifndef BDRP_FASTPATH_H
#define BDRP_FASTPATH_H

/* Neighbours a table holds; a router with more forwards in the JVM. */
#define FP_MAX_NEIGH 32
/* Words of D the program handles (4096 routers); a wider D goes up to the JVM. */
#define FP_MAX_WORDS 64
#define FP_MAX_ROUTERS (FP_MAX_WORDS * 64)

/* DATA header offsets, from the first byte of the UDP payload (the frame's length field). */
#define FP_OFF_LENGTH 0
#define FP_OFF_VERSION 4
#define FP_OFF_TYPE 5
#define FP_OFF_HOP 6
#define FP_OFF_FLAGS 7
#define FP_OFF_SOURCE 8
#define FP_OFF_ID 10
#define FP_OFF_WORDS 18
#define FP_OFF_D 20
#define FP_VERSION 1
#define FP_TYPE_DATA 0x26
#define FP_FLAG_BROADCAST 1
/* The smallest message (MessageCodec): a frame has at least this many bytes after D. */
#define FP_MIN_MESSAGE 6

/* A UDP link whose neighbour's Ethernet address is not known yet (ifindex is 0 meanwhile). */
#define FP_NEIGH_NO_L2 1

/* One neighbour of this router. Addresses and ports in network byte order. */
struct fp_neigh {
	__u32 ip;        /* the neighbour's address: where its copies go, where its DATA comes from */
	__u32 local_ip;  /* this router's address on that link: the source of its copies */
	__u16 port;      /* the neighbour's UDP port */
	__u16 router;    /* the neighbour's number */
	__u32 ifindex;   /* the interface towards it when DATA to it goes by UDP and the kernel may
			  * send its copies; 0 when it goes over TCP (packets that need it go up) */
	__u8 smac[6];    /* this router's Ethernet address on that interface */
	__u8 dmac[6];    /* the neighbour's, from the kernel's neighbour table */
	__u32 flags;     /* FP_NEIGH_* */
	/* Routers whose next hop is this neighbour, as D's words lie in a frame: word w big-endian,
	 * bit j of its value = router 64w + j. */
	__u64 mask[FP_MAX_WORDS];
};

/*
 * One version of the forwarding state. The router builds a new one in a fresh map and swaps it
 * in whole (an array-of-maps slot), so a packet reads one version from start to end.
 */
struct fp_table {
	__u64 generation;   /* increases with every table the router writes */
	__u32 self;         /* this router's number */
	__u32 words;        /* words of D that name routers: ceil(maxRouters / 64), at most FP_MAX_WORDS */
	__u64 last_mask;    /* bits of word words-1 that name routers below maxRouters (big-endian) */
	__u64 self_bit;     /* this router's bit in word self / 64 (big-endian) */
	__u16 udp_port;     /* this router's UDP port, network order */
	__u16 pad;
	__u32 count;        /* neighbours in use, at most FP_MAX_NEIGH */
	struct fp_neigh n[FP_MAX_NEIGH];
};

/*
 * Per-CPU counters, one array index each. Packets for this router's UDP port only; other traffic
 * passes untouched and uncounted. "Up" means passed to the router's socket as it came.
 */
enum fp_counter {
	FP_SPLIT = 0,          /* handled in the kernel: every copy sent, the original dropped */
	FP_SPLIT_LOCAL,        /* handled in the kernel, and one copy up with D = {this router} */
	FP_UP_NO_TABLE,        /* no table yet */
	FP_UP_MALFORMED,       /* header the program does not vouch for (the router counts it) */
	FP_UP_BROADCAST,       /* broadcasts go up: see docs/router.md */
	FP_UP_HOP_LIMIT,       /* hop limit 1 or less */
	FP_UP_UNKNOWN_SENDER,  /* not from a neighbour's address and port */
	FP_UP_WIDE,            /* D wider than the table, or naming routers past maxRouters */
	FP_UP_TCP_HOP,         /* some copy goes to a neighbour reached over TCP */
	FP_UP_NO_ROUTE,        /* D names a router without a route */
	FP_UP_NO_NEIGH,        /* a next hop's Ethernet address is not known yet */
	FP_UP_LOCAL_ONLY,      /* D = {this router}: nothing to forward */
	FP_REDIRECT_FAILED,    /* a copy the kernel could not send */
	FP_UP_FRAGMENT,        /* IP options or fragments */
	FP_UP_SOURCE,          /* the source is this router or has no route: the router refuses it */
	FP_COUNTERS
};

/* Copies sent in the kernel, by neighbour router number: a per-CPU array of FP_MAX_ROUTERS. */

#endif
