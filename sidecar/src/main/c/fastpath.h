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
#define FP_FLAG_D_LIST 4
/*
 * Set only by the program, on the one copy of a broadcast it passes up after sending the tree
 * children theirs: the router delivers it locally and forwards nothing. One arriving from the wire
 * is dropped (FP_DROP_LOCAL_FLAG).
 */
#define FP_FLAG_LOCAL 8
/* The smallest message (MessageCodec): a frame has at least this many bytes after D. */
#define FP_MIN_MESSAGE 6

/*
 * A key of the program's duplicate window of broadcasts (bcast_seen): the program enters those it
 * takes from a tree parent, the router those it took itself (over TCP or the ring, or passed up).
 */
struct bcast_key {
	__u64 id; /* the message id as it lies in the frame: big-endian bytes */
	__u32 source;
	__u32 pad;
};

/* A UDP link whose neighbour's Ethernet address is not known yet (ifindex is 0 meanwhile). */
#define FP_NEIGH_NO_L2 1

/*
 * Authenticated UDP links (fp_table.auth = FP_AUTH_MAC): every datagram ends with a trailer of
 * seq (u64 big-endian) and tag (SipHash-2-4 under the link's key of the frame and seq, the u64
 * written little-endian) after the frame, whose length field counts the frame alone. seq with the
 * top bit clear was sent by the JVM, with it set by the kernel (FP_SEQ_KERNEL); 0 and
 * FP_SEQ_KERNEL are never sent. Datagrams longer than FP_MAX_AUTH_BYTES go up unverified.
 */
#define FP_AUTH_NONE 0
#define FP_AUTH_MAC 1
#define FP_AUTH_TRAILER 16
#define FP_MAX_AUTH_BYTES (2048 + FP_AUTH_TRAILER)
#define FP_SEQ_KERNEL (1ULL << 63)

/* A source router's broadcast tree at this router: no parent in the table. */
#define FP_NO_PARENT 0xff

/*
 * One source router's broadcast tree at this router, as the JVM's ForwardingTable has it: the
 * neighbour (table index) that is the next hop towards the source, from which its broadcasts are
 * taken; the former next hops still taken from for a grace after the route changed (bit i =
 * neighbour i); and the children, this router's neighbours that take their copies from it.
 */
struct fp_tree {
	__u32 children;
	__u32 former;
	__u8 parent;     /* FP_NO_PARENT: none (no route, or a neighbour past the table) */
	__u8 pad[7];
};

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
	/* With auth: SipHash keys (k0, k1) of the link's current session, the neighbour's datagrams
	 * to this router (key_in) and this router's to it (key_out); the session they belong to
	 * (increasing per router, 0: no keys, packets that need them go up); the highest seq the
	 * router had accepted from the neighbour when it wrote the table, JVM domain [0] and kernel
	 * domain [1] (the kernel's replay window starts there when it first sees the session). */
	__u64 key_in[2];
	__u64 key_out[2];
	__u64 session;
	__u64 floor[2];
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
	__u32 auth;         /* FP_AUTH_NONE, FP_AUTH_MAC */
	__u32 hosts;        /* 1: this router has local hosts (a broadcast's local copy goes up) */
	struct fp_neigh n[FP_MAX_NEIGH];
	struct fp_tree tree[FP_MAX_ROUTERS]; /* by source router number */
};

/*
 * Per-CPU counters, one array index each. Packets for this router's UDP port only; other traffic
 * passes untouched and uncounted. "Up" means passed to the router's socket as it came.
 */
enum fp_counter {
	FP_SPLIT = 0,          /* handled in the kernel: every copy sent, the original dropped */
	FP_SPLIT_LOCAL,        /* handled in the kernel, and one copy up with D = {this router} */
	FP_UP_NO_TABLE,        /* no table yet; with auth, no session for the sender or a next hop,
				* or the sender's is older than the kernel's (a table being swapped) */
	FP_UP_MALFORMED,       /* header the program does not vouch for (the router counts it) */
	FP_UP_BROADCAST,       /* a broadcast whose source has no tree parent in the table */
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
	FP_DROP_MAC,           /* auth: the tag does not verify under the sender's key_in, dropped */
	FP_DROP_REPLAY,        /* auth: seq seen already or below the window (or 0, 2^63), dropped */
	FP_UP_LARGE,           /* auth: longer than FP_MAX_AUTH_BYTES, up unverified */
	FP_UP_D_LIST,          /* D as a list of routers (large networks): the router splits it */
	FP_BCAST,              /* a broadcast from its tree parent: a copy to each child, the original
				* dropped (no local hosts) */
	FP_BCAST_LOCAL,        /* the same, and one copy up with FP_FLAG_LOCAL for local delivery */
	FP_UP_BCAST_OFF_TREE,  /* a broadcast not from its source's tree parent (the router judges) */
	FP_UP_BCAST_GRACE,     /* a broadcast of a source whose parent changed lately (the table names
				* former parents): the router forwards it, its window sees it */
	FP_DROP_BCAST_DUPLICATE, /* a broadcast the kernel's window holds: taken already, dropped */
	FP_DROP_LOCAL_FLAG,    /* FP_FLAG_LOCAL from the wire, which only the program sets: dropped */
	FP_COUNTERS
};

/* Copies sent in the kernel, by neighbour router number: a per-CPU array of FP_MAX_ROUTERS. */

#endif
