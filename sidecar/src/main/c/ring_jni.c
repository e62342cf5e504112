/*
 * JNI entry points of the shared ring (ring.h) for io.bdrp.router.ring.RingNative. A handle is
 * the address of a malloc'd struct bdrp_ring; failures throw IOException with the operation and
 * the system's reason.
 */
#define _GNU_SOURCE
#include "ring.h"

#include <errno.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void throw_io(JNIEnv *env, const char *what, int err)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err < 0 ? -err : err));
	jclass c = (*env)->FindClass(env, "java/io/IOException");
	if (c)
		(*env)->ThrowNew(env, c, msg);
}

static struct bdrp_ring *ring(jlong h)
{
	return (struct bdrp_ring *)(intptr_t)h;
}

static jlong make(JNIEnv *env, jstring path, jlong capacity, jlong watermark, int create)
{
	struct bdrp_ring *r = calloc(1, sizeof(*r));
	if (!r) {
		throw_io(env, "allocating a ring", ENOMEM);
		return 0;
	}
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p) {
		free(r);
		return 0;
	}
	int rc = create ? bdrp_ring_create(r, p, (uint64_t)capacity, (uint64_t)watermark)
			: bdrp_ring_open(r, p, -1);
	if (rc != 0) {
		char what[400];
		snprintf(what, sizeof(what), "%s ring %s", create ? "creating" : "opening", p);
		(*env)->ReleaseStringUTFChars(env, path, p);
		free(r);
		throw_io(env, what, rc);
		return 0;
	}
	(*env)->ReleaseStringUTFChars(env, path, p);
	return (jlong)(intptr_t)r;
}

JNIEXPORT jlong JNICALL Java_io_bdrp_router_ring_RingNative_create(JNIEnv *env, jclass cls,
								 jstring path, jlong capacity,
								 jlong watermark)
{
	return make(env, path, capacity, watermark, 1);
}

JNIEXPORT jlong JNICALL Java_io_bdrp_router_ring_RingNative_open(JNIEnv *env, jclass cls,
							       jstring path)
{
	return make(env, path, 0, 0, 0);
}

JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RingNative_shutdown(JNIEnv *env, jclass cls,
								  jlong h)
{
	bdrp_ring_shutdown(ring(h));
}

JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RingNative_close(JNIEnv *env, jclass cls,
							       jlong h)
{
	if (h) {
		bdrp_ring_close(ring(h));
		free(ring(h));
	}
}

JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_maxFrame(JNIEnv *env, jclass cls,
								  jlong h)
{
	uint64_t m = bdrp_ring_max_frame(ring(h));
	return m > INT32_MAX ? INT32_MAX : (jint)m;
}

static uint8_t *address(JNIEnv *env, jobject buf, jint off, jint len)
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

/* 1 written, 0 full, -1 larger than maxFrame. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_write(JNIEnv *env, jclass cls, jlong h,
							       jobject buf, jint off, jint len)
{
	uint8_t *p = address(env, buf, off, len);
	if (!p)
		return 0;
	int rc = bdrp_ring_try_write(ring(h), p, (uint32_t)len);
	return rc == -EMSGSIZE ? -1 : rc;
}

/* Writes from native memory (a Netty buffer's address): 1 written, 0 full, -1 too large. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_writeAddress(JNIEnv *env, jclass cls,
								      jlong h, jlong addr,
								      jint len)
{
	int rc = bdrp_ring_try_write(ring(h), (const void *)(intptr_t)addr, (uint32_t)len);
	return rc == -EMSGSIZE ? -1 : rc;
}

/* Frames as (4-byte little-endian length, frame) from native memory: bytes written, -1 if the
 * first is too large, -3 if the batch is cut short. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_writeBatch(JNIEnv *env, jclass cls,
								    jlong h, jlong addr,
								    jint len)
{
	long rc = bdrp_ring_write_batch(ring(h), (const uint8_t *)(intptr_t)addr, (size_t)len);
	return rc == -EMSGSIZE ? -1 : rc == -EINVAL ? -3 : (jint)rc;
}

/* As writeBatch, from a direct buffer's [off, off+len). */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_writeBatchBuffer(JNIEnv *env, jclass cls,
									  jlong h, jobject buf,
									  jint off, jint len)
{
	uint8_t *p = address(env, buf, off, len);
	if (!p)
		return 0;
	long rc = bdrp_ring_write_batch(ring(h), p, (size_t)len);
	return rc == -EMSGSIZE ? -1 : rc == -EINVAL ? -3 : (jint)rc;
}

/* As write, waiting up to timeoutNanos for space (< 0: no limit); -2 if the reader closed. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_writeWait(JNIEnv *env, jclass cls,
								   jlong h, jobject buf,
								   jint off, jint len,
								   jlong timeoutNanos)
{
	uint8_t *p = address(env, buf, off, len);
	if (!p)
		return 0;
	int rc = bdrp_ring_write_wait(ring(h), p, (uint32_t)len, timeoutNanos);
	return rc == -EMSGSIZE ? -1 : rc == -EPIPE ? -2 : rc;
}

/* Frames as (4-byte little-endian length, payload) into buf[0..cap): bytes, 0 none. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_read(JNIEnv *env, jclass cls, jlong h,
							      jobject buf, jint cap)
{
	uint8_t *p = address(env, buf, 0, cap);
	if (!p)
		return 0;
	long n = bdrp_ring_read(ring(h), p, (size_t)cap);
	if (n == -ENOBUFS) {
		throw_io(env, "reading the ring: a frame larger than the read buffer", ENOBUFS);
		return 0;
	}
	if (n < 0) {
		throw_io(env, "reading the ring: not a frame the writer makes", (int)-n);
		return 0;
	}
	return (jint)n;
}

/* As read, into native memory at addr (cap bytes); when the next frame alone does not fit, minus
 * the bytes it needs (its length and 4). */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_readAddress(JNIEnv *env, jclass cls,
								     jlong h, jlong addr, jint cap)
{
	long n = bdrp_ring_read(ring(h), (uint8_t *)(intptr_t)addr, (size_t)cap);
	if (n == -ENOBUFS) {
		const uint8_t *p;
		uint32_t len;
		if (bdrp_ring_peek(ring(h), &p, &len) == 1)
			return -(jint)(len + 4);
		throw_io(env, "reading the ring", ENOBUFS);
		return 0;
	}
	if (n < 0) {
		throw_io(env, "reading the ring: not a frame the writer makes", (int)-n);
		return 0;
	}
	return (jint)n;
}

/* 1 a frame is there, 0 timeout, -2 the writer closed the ring. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_await(JNIEnv *env, jclass cls,
							       jlong h, jlong spinNanos,
							       jlong timeoutNanos)
{
	int rc = bdrp_ring_wait(ring(h), spinNanos, timeoutNanos);
	return rc == -EPIPE ? -2 : rc;
}

/* Writer: wake a sleeping reader by a datagram to the Unix socket at path. */
JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RingNative_wakeBySocket(JNIEnv *env, jclass cls,
								      jlong h, jstring path)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p)
		return;
	int rc = bdrp_ring_wake_by_socket(ring(h), p);
	if (rc != 0) {
		char what[400];
		snprintf(what, sizeof(what), "connecting to the ring's wake socket %s", p);
		throw_io(env, what, rc);
	}
	(*env)->ReleaseStringUTFChars(env, path, p);
}

/* Reader in an event loop: 1 read on, 0 it may wait for its wake socket. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_prepareSleep(JNIEnv *env, jclass cls,
								      jlong h, jint spin)
{
	return bdrp_ring_prepare_sleep(ring(h), (uint32_t)spin);
}

/* frames, bytes, full, head publications, head reads, sleeps, wakes; tail, head, reader sleeping
 * (shared). */
JNIEXPORT jlongArray JNICALL Java_io_bdrp_router_ring_RingNative_counters(JNIEnv *env, jclass cls,
									jlong h)
{
	struct bdrp_ring *r = ring(h);
	jlong v[10] = {(jlong)r->frames,
		       (jlong)r->bytes,
		       (jlong)r->full,
		       (jlong)r->head_publications,
		       (jlong)r->head_reads,
		       (jlong)r->sleeps,
		       (jlong)r->wakes,
		       (jlong)atomic_load(&r->sh->tail),
		       (jlong)atomic_load(&r->sh->head),
		       (jlong)atomic_load(&r->sh->reader_sleeping)};
	jlongArray a = (*env)->NewLongArray(env, 10);
	if (a)
		(*env)->SetLongArrayRegion(env, a, 0, 10, v);
	return a;
}

/* ---- a reader's wake socket, for a reader that owns it (io.bdrp.router.ring.ShmRingBackend) ---- */

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Binds a non-blocking Unix datagram socket at `path` (mode 0600): its descriptor. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_bindWake(JNIEnv *env, jclass cls,
								  jstring path)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p)
		return -1;
	char what[400];
	snprintf(what, sizeof(what), "binding the ring's wake socket %s", p);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = -1, err = ENAMETOOLONG;
	if (strlen(p) < sizeof(a.sun_path)) {
		strcpy(a.sun_path, p);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		err = fd < 0 ? errno : 0;
		if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || chmod(p, 0600) != 0)) {
			err = errno;
			close(fd);
			fd = -1;
		}
	}
	(*env)->ReleaseStringUTFChars(env, path, p);
	if (fd < 0)
		throw_io(env, what, err);
	return fd;
}

/* Takes every datagram waiting on the wake socket `fd` (each only says "look"): their count. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_drainWake(JNIEnv *env, jclass cls,
								   jint fd)
{
	char b[16];
	int n = 0;
	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* Waits up to `timeoutMs` (< 0: without limit) for `fd` to be readable: 1 readable, 0 not. */
JNIEXPORT jint JNICALL Java_io_bdrp_router_ring_RingNative_awaitReadable(JNIEnv *env, jclass cls,
								       jint fd, jint timeoutMs)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int rc;
	do
		rc = poll(&p, 1, timeoutMs);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		throw_io(env, "waiting for a ring's descriptor", errno);
		return 0;
	}
	return rc > 0 && (p.revents & POLLIN) ? 1 : 0;
}

JNIEXPORT void JNICALL Java_io_bdrp_router_ring_RingNative_closeFd(JNIEnv *env, jclass cls, jint fd)
{
	if (fd >= 0)
		close(fd);
}
