/*
 * The ring (ring.h) over RDMA verbs, between routers on different hosts: the reader's ring is
 * registered memory the writer writes with RDMA WRITE; the frame layout, the exceed check and the
 * lazy head are ring.c's own.
 *
 * The writer keeps a shadow of the remote ring, a local registered ring of the same capacity: a
 * frame is laid out there by ring.c (padding and all), then the bytes it took are written to the
 * same offsets of the remote data area, and the new tail to the remote header, with RDMA WRITE
 * WITH IMMEDIATE, so that the reader sees the tail only after the frame (a reliable connection
 * executes writes in order) and gets a completion that wakes its event loop (the completion
 * channel's descriptor is pollable). When the shadow says the ring is full, the writer reads the
 * reader's published head back with RDMA READ into the shadow's header: the delayed head, read
 * lazily. The reader reads its ring with ring.c as over shared memory.
 *
 * Connecting two ends takes an exchange of endpoints (LID, GID, QP number, PSN, the ring's address,
 * key and capacity; endpoint_put below gives the layout) over the routers' TCP session: in their
 * ROUTER_HELLOs, as io.bdrp.router.ring.VerbsRingBackend makes and checks them, through the JNI
 * entry points at the end of this file. Built against libibverbs; runs only where
 * /sys/class/infiniband lists a device.
 */
#define _GNU_SOURCE
#include "ring.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bdrp_rdma_endpoint {
	uint16_t lid;
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t psn;
	uint64_t addr; /* the ring mapping's address (header first) */
	uint32_t rkey;
} __attribute__((packed));

struct bdrp_rdma {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *mem; /* the ring (reader) or its shadow (writer) */
	size_t bytes;
	struct bdrp_ring ring;
	struct bdrp_rdma_endpoint local, remote;
	uint8_t port;
	int reader;
	uint32_t unsignaled; /* sends posted since the last signalled one */
};

#define RDMA_CQ_DEPTH 1024
#define RDMA_SIGNAL_EVERY 64
#define RDMA_RECVS 256

/* The names of the RDMA devices here, comma-separated, into out; their count, or -errno. */
int bdrp_rdma_devices(char *out, size_t cap)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return -errno;
	size_t at = 0;
	if (cap)
		out[0] = 0;
	for (int i = 0; i < n; i++) {
		int w = snprintf(out + at, cap > at ? cap - at : 0, "%s%s", i ? "," : "",
				 ibv_get_device_name(list[i]));
		if (w > 0)
			at += (size_t)w;
	}
	ibv_free_device_list(list);
	return n;
}

static int post_recvs(struct bdrp_rdma *r, int count)
{
	for (int i = 0; i < count; i++) {
		struct ibv_recv_wr wr = {.wr_id = 0}, *bad;
		if (ibv_post_recv(r->qp, &wr, &bad))
			return -errno;
	}
	return 0;
}

void bdrp_rdma_close(struct bdrp_rdma *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->channel)
		ibv_destroy_comp_channel(r->channel);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
	free(r->mem);
	memset(r, 0, sizeof(*r));
}

/*
 * Opens `device` (NULL: the first), registers a ring of `capacity` bytes (the reader's ring, or the
 * writer's shadow of the remote one) and makes a reliable-connection queue pair; `local` is what
 * the other end needs. Returns 0 or -errno.
 */
int bdrp_rdma_open(struct bdrp_rdma *r, const char *device, int reader, uint64_t capacity,
		   uint64_t watermark)
{
	memset(r, 0, sizeof(*r));
	r->reader = reader;
	r->port = 1;
	int n = 0, rc = -ENODEV;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return -errno;
	for (int i = 0; i < n && !r->ctx; i++)
		if (!device || strcmp(device, ibv_get_device_name(list[i])) == 0)
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!r->ctx)
		return rc;
	r->bytes = bdrp_ring_bytes(capacity);
	if (posix_memalign(&r->mem, 4096, r->bytes))
		goto fail_nomem;
	if (bdrp_ring_init(&r->ring, r->mem, capacity, watermark, 0))
		goto fail_inval;
	if (!(r->pd = ibv_alloc_pd(r->ctx)) || !(r->channel = ibv_create_comp_channel(r->ctx)) ||
	    !(r->cq = ibv_create_cq(r->ctx, RDMA_CQ_DEPTH, NULL, r->channel, 0)))
		goto fail_errno;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (!(r->mr = ibv_reg_mr(r->pd, r->mem, r->bytes, access)))
		goto fail_errno;
	struct ibv_qp_init_attr qa = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = {.max_send_wr = RDMA_CQ_DEPTH / 2,
			.max_recv_wr = RDMA_RECVS,
			.max_send_sge = 1,
			.max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
	};
	if (!(r->qp = ibv_create_qp(r->pd, &qa)))
		goto fail_errno;
	struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT,
				   .port_num = r->port,
				   .qp_access_flags = access};
	if (ibv_modify_qp(r->qp, &init,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		goto fail_errno;
	struct ibv_port_attr pa;
	if (ibv_query_port(r->ctx, r->port, &pa))
		goto fail_errno;
	union ibv_gid gid;
	if (ibv_query_gid(r->ctx, r->port, 0, &gid))
		goto fail_errno;
	r->local.lid = pa.lid;
	memcpy(r->local.gid, gid.raw, 16);
	r->local.qpn = r->qp->qp_num;
	r->local.psn = (uint32_t)(random() & 0xffffff);
	r->local.addr = (uint64_t)(uintptr_t)r->mem;
	r->local.rkey = r->mr->rkey;
	if (reader && post_recvs(r, RDMA_RECVS))
		goto fail_errno;
	if (reader && ibv_req_notify_cq(r->cq, 0))
		goto fail_errno;
	/* The event loop polls the channel's descriptor; a rearm must never block it. */
	int fl = fcntl(r->channel->fd, F_GETFL);
	if (fl < 0 || fcntl(r->channel->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail_errno;
	return 0;
fail_nomem:
	rc = -ENOMEM;
	goto fail;
fail_inval:
	rc = -EINVAL;
	goto fail;
fail_errno:
	rc = errno ? -errno : -EIO;
fail:
	bdrp_rdma_close(r);
	return rc;
}

/* Connects to the other end described by `remote`: the queue pair to ready-to-send. */
int bdrp_rdma_connect(struct bdrp_rdma *r, const struct bdrp_rdma_endpoint *remote)
{
	r->remote = *remote;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = remote->qpn,
		.rq_psn = remote->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {.dlid = remote->lid, .port_num = r->port, .is_global = 1},
	};
	memcpy(rtr.ah_attr.grh.dgid.raw, remote->gid, 16);
	rtr.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(r->qp, &rtr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -errno;
	struct ibv_qp_attr rts = {.qp_state = IBV_QPS_RTS,
				  .timeout = 14,
				  .retry_cnt = 7,
				  .rnr_retry = 7,
				  .sq_psn = r->local.psn,
				  .max_rd_atomic = 1};
	if (ibv_modify_qp(r->qp, &rts,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return -errno;
	return 0;
}

/* Waits for `count` signalled completions of this end's sends; -EIO on a failed one. */
static int reap(struct bdrp_rdma *r, int count)
{
	struct ibv_wc wc[16];
	while (count > 0) {
		int n = ibv_poll_cq(r->cq, 16, wc);
		if (n < 0)
			return -EIO;
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return -EIO;
			if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM)
				count--;
		}
	}
	return 0;
}

/* Posts one RDMA WRITE (with immediate if `imm`) of local [off, off+len) to the same remote offset. */
static int write_region(struct bdrp_rdma *r, uint64_t off, uint64_t len, int imm, uint32_t value)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)r->mem + off,
			      .length = (uint32_t)len,
			      .lkey = r->mr->lkey};
	int signal = ++r->unsignaled >= RDMA_SIGNAL_EVERY;
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = signal ? IBV_SEND_SIGNALED : 0,
		.imm_data = value,
		.wr.rdma = {.remote_addr = r->remote.addr + off, .rkey = r->remote.rkey},
	}, *bad;
	if (ibv_post_send(r->qp, &wr, &bad))
		return -errno;
	if (signal) {
		r->unsignaled = 0;
		return reap(r, 1);
	}
	return 0;
}

/* Reads the reader's published head into the shadow's header (the delayed head, read lazily). */
static int read_head(struct bdrp_rdma *r)
{
	uint64_t off = offsetof(struct bdrp_ring_shared, head);
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)r->mem + off,
			      .length = 8,
			      .lkey = r->mr->lkey};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {.remote_addr = r->remote.addr + off, .rkey = r->remote.rkey},
	}, *bad;
	if (ibv_post_send(r->qp, &wr, &bad))
		return -errno;
	r->unsignaled = 0;
	return reap(r, 1);
}

/*
 * Writer: the frames of `src` (as bdrp_ring_write_batch takes them) into the remote ring while
 * they fit: laid out in the shadow, written to the remote data area, then the tail. Returns the
 * bytes of `src` written, or -errno.
 */
long bdrp_rdma_write_batch(struct bdrp_rdma *r, const uint8_t *src, size_t n)
{
	uint64_t from = r->ring.tail;
	long w = bdrp_ring_write_batch(&r->ring, src, n);
	if (w == 0) {
		int rc = read_head(r);
		if (rc)
			return rc;
		w = bdrp_ring_write_batch(&r->ring, src, n);
	}
	if (w <= 0)
		return w;
	uint64_t to = r->ring.tail;
	uint64_t cap = r->ring.capacity, a = from & r->ring.mask;
	uint64_t data = BDRP_RING_HEADER_BYTES;
	uint64_t len = to - from;
	int rc = 0;
	if (a + len <= cap) {
		rc = write_region(r, data + a, len, 0, 0);
	} else {
		rc = write_region(r, data + a, cap - a, 0, 0);
		if (!rc)
			rc = write_region(r, data, len - (cap - a), 0, 0);
	}
	if (!rc)
		rc = write_region(r, offsetof(struct bdrp_ring_shared, tail), 8, 1,
				  (uint32_t)(to & 0xffffffffu));
	return rc ? rc : w;
}

/* Reader: the descriptor its event loop polls; readable after a write once it re-arms. */
int bdrp_rdma_event_fd(struct bdrp_rdma *r)
{
	return r->channel->fd;
}

/*
 * Reader: after the descriptor was readable, takes the events, reposts receives and re-arms. The
 * descriptor is non-blocking: with no event waiting (a spurious call) it only re-arms.
 */
int bdrp_rdma_rearm(struct bdrp_rdma *r)
{
	struct ibv_cq *cq;
	void *ctx;
	while (ibv_get_cq_event(r->channel, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return -errno;
	struct ibv_wc wc[32];
	int n, got = 0;
	while ((n = ibv_poll_cq(r->cq, 32, wc)) > 0)
		got += n;
	if (n < 0)
		return -EIO;
	if (got && post_recvs(r, got))
		return -errno;
	return ibv_req_notify_cq(r->cq, 0) ? -errno : 0;
}

/* Reader: the ring itself, read with ring.c. */
struct bdrp_ring *bdrp_rdma_ring(struct bdrp_rdma *r)
{
	return &r->ring;
}

/*
 * One end's endpoint as the other end reads it, BDRP_RDMA_ENDPOINT_BYTES in network byte order:
 *
 *   0      2                  18     22     26            34     38           46
 *   | lid  | gid (16 bytes)   | qpn  | psn  | ring address | rkey | capacity   |
 *   | u16  |                  | u32  | u32  | u64          | u32  | u64        |
 *
 * The capacity is the ring's (a reader's) or its shadow's (a writer's): a writer writes only into a
 * ring of its shadow's capacity, since both lay frames out at the same offsets.
 */
#define BDRP_RDMA_ENDPOINT_BYTES 46

static void endpoint_put(const struct bdrp_rdma *r, uint8_t *out)
{
	uint16_t lid = htobe16(r->local.lid);
	uint32_t qpn = htobe32(r->local.qpn), psn = htobe32(r->local.psn), rkey = htobe32(r->local.rkey);
	uint64_t addr = htobe64(r->local.addr), cap = htobe64(r->ring.capacity);
	memcpy(out, &lid, 2);
	memcpy(out + 2, r->local.gid, 16);
	memcpy(out + 18, &qpn, 4);
	memcpy(out + 22, &psn, 4);
	memcpy(out + 26, &addr, 8);
	memcpy(out + 34, &rkey, 4);
	memcpy(out + 38, &cap, 8);
}

static uint64_t endpoint_get(const uint8_t *in, struct bdrp_rdma_endpoint *e)
{
	uint16_t lid;
	uint32_t qpn, psn, rkey;
	uint64_t addr, cap;
	memcpy(&lid, in, 2);
	memcpy(e->gid, in + 2, 16);
	memcpy(&qpn, in + 18, 4);
	memcpy(&psn, in + 22, 4);
	memcpy(&addr, in + 26, 8);
	memcpy(&rkey, in + 34, 4);
	memcpy(&cap, in + 38, 8);
	e->lid = be16toh(lid);
	e->qpn = be32toh(qpn);
	e->psn = be32toh(psn);
	e->addr = be64toh(addr);
	e->rkey = be32toh(rkey);
	return be64toh(cap);
}

/* ---- JNI: the probe the router runs before it offers transport: rdma ---- */

JNIEXPORT jstring JNICALL Java_io_bdrp_router_ring_RdmaNative_devices(JNIEnv *env, jclass cls)
{
	char names[1024];
	int n = bdrp_rdma_devices(names, sizeof(names));
	if (n < 0) {
		jclass c = (*env)->FindClass(env, "java/io/IOException");
		if (c)
			(*env)->ThrowNew(env, c, strerror(-n));
		return NULL;
	}
	return (*env)->NewStringUTF(env, names);
}

/* ---- JNI: one end of a ring over verbs, for io.bdrp.router.ring.RdmaNative ---- */

static void throw_io(JNIEnv *env, const char *what, int err)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err < 0 ? -err : err));
	jclass c = (*env)->FindClass(env, "java/io/IOException");
	if (c)
		(*env)->ThrowNew(env, c, msg);
}

static struct bdrp_rdma *rdma(jlong h)
{
	return (struct bdrp_rdma *)(intptr_t)h;
}

/*
 * Opens `device` (null: the first libibverbs lists) and makes a reader's ring or a writer's shadow
 * of `capacity` bytes with its queue pair: a handle, or IOException naming the device and why.
 */
JNIEXPORT jlong JNICALL Java_io_bdrp_router_ring_RdmaNative_open(JNIEnv *env, jclass cls,
								 jstring device, jboolean reader,
								 jlong capacity, jlong watermark)
{
	const char *name = device ? (*env)->GetStringUTFChars(env, device, NULL) : NULL;
	if (device && !name)
		return 0;
	char what[300];
	snprintf(what, sizeof(what), "opening the %s end of an RDMA ring on %s%s",
		 reader ? "reading" : "writing", name ? "device " : "the first device",
		 name ? name : "");
	struct bdrp_rdma *r = calloc(1, sizeof(*r));
	int rc = r ? bdrp_rdma_open(r, name, reader ? 1 : 0, (uint64_t)capacity, (uint64_t)watermark)
		   : -ENOMEM;
	if (name)
		(*env)->ReleaseStringUTFChars(env, device, name);
	if (rc != 0) {
		free(r);
		if (rc == -ENODEV || rc == -ENOSYS) {
			/* ENOSYS: libibverbs finds no RDMA support at all (no /sys/class/infiniband). */
			char msg[400];
			snprintf(msg, sizeof(msg), "%s: no such RDMA device (%s)", what,
				 rc == -ENOSYS ? "the kernel has no RDMA support: /sys/class/infiniband is missing"
				 : device     ? "libibverbs lists none by that name"
					      : "libibverbs lists none");
			jclass c = (*env)->FindClass(env, "java/io/IOException");
			if (c)
				(*env)->ThrowNew(env, c, msg);
		} else {
			throw_io(env, what, rc);
		}
		return 0;
	}
	return (jlong)(intptr_t)r;
}

/* This end's endpoint, BDRP_RDMA_ENDPOINT_BYTES in the layout above. */
JNIEXPORT jbyteArray JNICALL Java_io_bdrp_router_ring_RdmaNative_endpoint(JNIEnv *env, jclass cls,
									 jlong h)
{
	uint8_t b[BDRP_RDMA_ENDPOINT_BYTES];
	endpoint_put(rdma(h), b);
	jbyteArray a = (*env)->NewByteArray(env, BDRP_RDMA_ENDPOINT_BYTES);
	if (a)
		(*env)->SetByteArrayRegion(env, a, 0, BDRP_RDMA_ENDPOINT_BYTES, (const jbyte *)b);
	return a;
}

/*
 * Connects this end's queue pair to the other end's, `remote` in the layout above; a writer only
 * to a ring of its shadow's capacity. IOException on a wrong length or capacity, or a verbs error.
 */
JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RdmaNative_connect(JNIEnv *env, jclass cls,
								  jlong h, jbyteArray remote)
{
	struct bdrp_rdma *r = rdma(h);
	jsize n = (*env)->GetArrayLength(env, remote);
	if (n != BDRP_RDMA_ENDPOINT_BYTES) {
		throw_io(env, "connecting an RDMA ring: an endpoint is 46 bytes", EINVAL);
		return;
	}
	uint8_t b[BDRP_RDMA_ENDPOINT_BYTES];
	(*env)->GetByteArrayRegion(env, remote, 0, n, (jbyte *)b);
	struct bdrp_rdma_endpoint e;
	uint64_t cap = endpoint_get(b, &e);
	if (!r->reader && cap != r->ring.capacity) {
		throw_io(env, "connecting an RDMA ring: the remote ring's capacity differs from the shadow's",
			 EINVAL);
		return;
	}
	int rc = bdrp_rdma_connect(r, &e);
	if (rc)
		throw_io(env, "connecting an RDMA queue pair to the neighbour's", rc);
}

/* Writer: as RingNative.writeBatch (bytes written, -1 too large, -3 cut short); IOException when a
 * write or its completion fails. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_writeBatch(JNIEnv *env, jclass cls,
								     jlong h, jlong addr,
								     jint len)
{
	long rc = bdrp_rdma_write_batch(rdma(h), (const uint8_t *)(intptr_t)addr, (size_t)len);
	if (rc == -EMSGSIZE)
		return -1;
	if (rc == -EINVAL)
		return -3;
	if (rc < 0) {
		throw_io(env, "writing to the neighbour's RDMA ring", (int)rc);
		return 0;
	}
	return (jint)rc;
}

JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_maxFrame(JNIEnv *env, jclass cls,
								   jlong h)
{
	uint64_t m = bdrp_ring_max_frame(&rdma(h)->ring);
	return m > INT32_MAX ? INT32_MAX : (jint)m;
}

/* Reader: the completion channel's descriptor, readable once a write arrived after a rearm. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_eventFd(JNIEnv *env, jclass cls,
								  jlong h)
{
	return bdrp_rdma_event_fd(rdma(h));
}

/* Reader: after the descriptor was readable: takes the events, reposts receives, re-arms. */
JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RdmaNative_rearm(JNIEnv *env, jclass cls, jlong h)
{
	int rc = bdrp_rdma_rearm(rdma(h));
	if (rc)
		throw_io(env, "re-arming the RDMA ring's completion channel", rc);
}

/* Reader: as RingNative.readAddress. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_read(JNIEnv *env, jclass cls, jlong h,
							       jlong addr, jint cap)
{
	struct bdrp_ring *ring = &rdma(h)->ring;
	long n = bdrp_ring_read(ring, (uint8_t *)(intptr_t)addr, (size_t)cap);
	if (n == -ENOBUFS) {
		const uint8_t *p;
		uint32_t len;
		if (bdrp_ring_peek(ring, &p, &len) == 1)
			return -(jint)(len + 4);
		throw_io(env, "reading the RDMA ring", ENOBUFS);
		return 0;
	}
	if (n < 0) {
		throw_io(env, "reading the RDMA ring: not a frame the writer makes", (int)-n);
		return 0;
	}
	return (jint)n;
}

/* Reader: publishes its head (which the writer reads back with RDMA READ); 1 a frame is there. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_prepareSleep(JNIEnv *env, jclass cls,
								       jlong h, jint spin)
{
	return bdrp_ring_prepare_sleep(&rdma(h)->ring, (uint32_t)spin);
}

JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RdmaNative_close(JNIEnv *env, jclass cls, jlong h)
{
	if (h) {
		bdrp_rdma_close(rdma(h));
		free(rdma(h));
	}
}

static uint8_t *buffer_range(JNIEnv *env, jobject buf, jint off, jint len)
{
	uint8_t *base = (*env)->GetDirectBufferAddress(env, buf);
	jlong cap = (*env)->GetDirectBufferCapacity(env, buf);
	if (!base || off < 0 || len < 0 || (jlong)off + len > cap) {
		jclass c = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
		if (c)
			(*env)->ThrowNew(env, c, "not a direct buffer, or the range is outside it");
		return NULL;
	}
	return base + off;
}

/* Writer: as writeBatch, from a direct buffer's [off, off+len). */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_writeBatchBuffer(JNIEnv *env, jclass cls,
									   jlong h, jobject buf,
									   jint off, jint len)
{
	uint8_t *p = buffer_range(env, buf, off, len);
	if (!p)
		return 0;
	return Java_io_bdrp_router_ring_RdmaNative_writeBatch(env, cls, h, (jlong)(intptr_t)p, len);
}

/* Reader: as read, into a direct buffer's [0, cap). */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RdmaNative_readBuffer(JNIEnv *env, jclass cls,
								     jlong h, jobject buf, jint cap)
{
	uint8_t *p = buffer_range(env, buf, 0, cap);
	if (!p)
		return 0;
	return Java_io_bdrp_router_ring_RdmaNative_read(env, cls, h, (jlong)(intptr_t)p, cap);
}
