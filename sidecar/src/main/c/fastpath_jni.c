// SPDX-License-Identifier: Apache-2.0
/*
 * The JNI side of bdrp's kernel fast path: loads the TC program (embedded as a libbpf skeleton),
 * attaches it at TC ingress of the router's link interfaces, swaps in forwarding tables and reads
 * the counters. Java: io.bdrp.router.fastpath.EbpfNative. Every failure throws
 * java.io.IOException with the operation and the kernel's reason.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/pkt_cls.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

typedef __u8 u8;
#include "fastpath.h"
#include "bdrp_tc.skel.h"

/* Filters of router r sit at this priority with handle r + 1, on each interface. */
#define FP_PRIORITY 0xbd

struct fastpath {
	struct bdrp_tc_bpf *skel;
	int router;
	int ncpus;
};

static __thread char libbpf_last[512]; /* per thread: routers of one JVM load on their own loops */

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	/* Keep the last warning for the exception; the verifier log is long, keep its tail. */
	char line[512];
	vsnprintf(line, sizeof(line), fmt, args);
	size_t n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = 0;
	if (n > 0)
		snprintf(libbpf_last, sizeof(libbpf_last), "%s", line);
	return 0;
}

static void throw_io(JNIEnv *env, const char *what, int err)
{
	char msg[1024];
	if (err < 0)
		err = -err;
	if (libbpf_last[0])
		snprintf(msg, sizeof(msg), "%s: %s (libbpf: %s)", what, strerror(err), libbpf_last);
	else
		snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	libbpf_last[0] = 0;
	jclass c = (*env)->FindClass(env, "java/io/IOException");
	if (c)
		(*env)->ThrowNew(env, c, msg);
}

static struct fastpath *fp_of(jlong h)
{
	return (struct fastpath *)(intptr_t)h;
}

JNIEXPORT jstring JNICALL Java_io_bdrp_router_fastpath_EbpfNative_layout(JNIEnv *env, jclass cls)
{
	char s[256];
	snprintf(s, sizeof(s),
		 "table=%zu neigh=%zu mask=%zu keys=%zu auth=%zu max_auth=%d neighbours=%d words=%d "
		 "counters=%d priority=%d tree=%zu tree_entry=%zu",
		 sizeof(struct fp_table), sizeof(struct fp_neigh), offsetof(struct fp_neigh, mask),
		 offsetof(struct fp_neigh, key_in), offsetof(struct fp_table, auth),
		 FP_MAX_AUTH_BYTES, FP_MAX_NEIGH, FP_MAX_WORDS, FP_COUNTERS, FP_PRIORITY,
		 offsetof(struct fp_table, tree), sizeof(struct fp_tree));
	return (*env)->NewStringUTF(env, s);
}

JNIEXPORT jlong JNICALL Java_io_bdrp_router_fastpath_EbpfNative_open(JNIEnv *env, jclass cls,
								  jint router)
{
	libbpf_set_print(on_libbpf_print);
	libbpf_last[0] = 0;
	struct fastpath *fp = calloc(1, sizeof(*fp));
	if (!fp) {
		throw_io(env, "allocating the fast path", ENOMEM);
		return 0;
	}
	fp->router = router;
	fp->ncpus = libbpf_num_possible_cpus();
	if (fp->ncpus <= 0) {
		throw_io(env, "counting CPUs", fp->ncpus);
		free(fp);
		return 0;
	}
	fp->skel = bdrp_tc_bpf__open();
	if (!fp->skel) {
		throw_io(env, "opening the TC program", errno);
		free(fp);
		return 0;
	}
	int err = bdrp_tc_bpf__load(fp->skel);
	if (err) {
		throw_io(env, "loading the TC program into the kernel", err);
		bdrp_tc_bpf__destroy(fp->skel);
		free(fp);
		return 0;
	}
	return (jlong)(intptr_t)fp;
}

static struct bpf_tc_hook ingress_hook(int ifindex)
{
	struct bpf_tc_hook hook;
	memset(&hook, 0, sizeof(hook));
	hook.sz = sizeof(hook);
	hook.ifindex = ifindex;
	hook.attach_point = BPF_TC_INGRESS;
	return hook;
}

static struct bpf_tc_opts filter_opts(int router, int prog_fd)
{
	struct bpf_tc_opts opts;
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.handle = (__u32)router + 1;
	opts.priority = FP_PRIORITY;
	opts.prog_fd = prog_fd;
	return opts;
}

JNIEXPORT void JNICALL Java_io_bdrp_router_fastpath_EbpfNative_attach(JNIEnv *env, jclass cls,
								   jlong h, jint ifindex)
{
	struct fastpath *fp = fp_of(h);
	struct bpf_tc_hook hook = ingress_hook(ifindex);
	int err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		throw_io(env, "creating the clsact qdisc", err);
		return;
	}
	struct bpf_tc_opts opts =
		filter_opts(fp->router, bpf_program__fd(fp->skel->progs.bdrp_ingress));
	opts.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&hook, &opts);
	if (err)
		throw_io(env, "attaching the program at TC ingress", err);
}

/* Removes router r's filter from ifindex's ingress; 1 when there was one, 0 when not. */
static int detach_filter(int router, int ifindex, int *err_out)
{
	struct bpf_tc_hook hook = ingress_hook(ifindex);
	struct bpf_tc_opts opts = filter_opts(router, 0);
	int err = bpf_tc_query(&hook, &opts);
	if (err == -ENOENT || err == -EINVAL) /* no filter, or no clsact qdisc at all */
		return 0;
	if (err) {
		*err_out = err;
		return -1;
	}
	opts.prog_fd = 0;
	opts.prog_id = 0;
	opts.flags = 0;
	err = bpf_tc_detach(&hook, &opts);
	if (err && err != -ENOENT) {
		*err_out = err;
		return -1;
	}
	return err ? 0 : 1;
}

JNIEXPORT jboolean JNICALL Java_io_bdrp_router_fastpath_EbpfNative_detach(JNIEnv *env, jclass cls,
								       jint router, jint ifindex)
{
	int err = 0;
	int r = detach_filter(router, ifindex, &err);
	if (r < 0) {
		throw_io(env, "detaching the program from TC ingress", err);
		return JNI_FALSE;
	}
	return r ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jint JNICALL Java_io_bdrp_router_fastpath_EbpfNative_attachedProgram(JNIEnv *env,
									    jclass cls,
									    jint router,
									    jint ifindex)
{
	struct bpf_tc_hook hook = ingress_hook(ifindex);
	struct bpf_tc_opts opts = filter_opts(router, 0);
	int err = bpf_tc_query(&hook, &opts);
	if (err == -ENOENT || err == -EINVAL)
		return 0;
	if (err) {
		throw_io(env, "querying TC ingress", err);
		return 0;
	}
	return (jint)opts.prog_id;
}

JNIEXPORT jint JNICALL Java_io_bdrp_router_fastpath_EbpfNative_programId(JNIEnv *env, jclass cls,
								      jlong h)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	int err = bpf_obj_get_info_by_fd(bpf_program__fd(fp_of(h)->skel->progs.bdrp_ingress), &info,
					 &len);
	if (err) {
		throw_io(env, "reading the program's id", err);
		return 0;
	}
	return (jint)info.id;
}

JNIEXPORT void JNICALL Java_io_bdrp_router_fastpath_EbpfNative_setTable(JNIEnv *env, jclass cls,
								     jlong h, jbyteArray table)
{
	struct fastpath *fp = fp_of(h);
	if ((*env)->GetArrayLength(env, table) != (jsize)sizeof(struct fp_table)) {
		throw_io(env, "the table's size does not match struct fp_table", EINVAL);
		return;
	}
	struct fp_table *t = malloc(sizeof(*t));
	if (!t) {
		throw_io(env, "allocating a table", ENOMEM);
		return;
	}
	(*env)->GetByteArrayRegion(env, table, 0, sizeof(*t), (jbyte *)t);
	/* A fresh map per version: a packet holds the old one until it is done with it. */
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bdrp_table", sizeof(__u32),
				   sizeof(struct fp_table), 1, NULL);
	if (inner < 0) {
		throw_io(env, "creating a table map", errno);
		free(t);
		return;
	}
	__u32 zero = 0;
	int err = bpf_map_update_elem(inner, &zero, t, BPF_ANY);
	free(t);
	if (err) {
		throw_io(env, "writing the table", errno);
		close(inner);
		return;
	}
	err = bpf_map_update_elem(bpf_map__fd(fp->skel->maps.tables), &zero, &inner, BPF_ANY);
	close(inner); /* the outer map holds it now */
	if (err)
		throw_io(env, "swapping the table in", errno);
}

/* Sums of a per-CPU array of u64 for the given keys. */
static int sum_percpu(int fd, int ncpus, const __u32 *keys, int n, __u64 *out)
{
	__u64 *values = calloc(ncpus, sizeof(__u64));
	if (!values)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], values)) {
			int err = -errno;
			free(values);
			return err;
		}
		__u64 sum = 0;
		for (int c = 0; c < ncpus; c++)
			sum += values[c];
		out[i] = sum;
	}
	free(values);
	return 0;
}

JNIEXPORT jlongArray JNICALL Java_io_bdrp_router_fastpath_EbpfNative_counters(JNIEnv *env,
									   jclass cls, jlong h)
{
	struct fastpath *fp = fp_of(h);
	__u32 keys[FP_COUNTERS];
	__u64 sums[FP_COUNTERS];
	for (int i = 0; i < FP_COUNTERS; i++)
		keys[i] = i;
	int err = sum_percpu(bpf_map__fd(fp->skel->maps.counters), fp->ncpus, keys, FP_COUNTERS,
			     sums);
	if (err) {
		throw_io(env, "reading the counters", err);
		return NULL;
	}
	jlongArray a = (*env)->NewLongArray(env, FP_COUNTERS);
	if (a)
		(*env)->SetLongArrayRegion(env, a, 0, FP_COUNTERS, (jlong *)sums);
	return a;
}

JNIEXPORT jlongArray JNICALL Java_io_bdrp_router_fastpath_EbpfNative_forwarded(JNIEnv *env,
									    jclass cls, jlong h,
									    jintArray routers)
{
	struct fastpath *fp = fp_of(h);
	jsize n = (*env)->GetArrayLength(env, routers);
	__u32 *keys = calloc(n > 0 ? n : 1, sizeof(__u32));
	__u64 *sums = calloc(n > 0 ? n : 1, sizeof(__u64));
	if (!keys || !sums) {
		free(keys);
		free(sums);
		throw_io(env, "allocating counters", ENOMEM);
		return NULL;
	}
	(*env)->GetIntArrayRegion(env, routers, 0, n, (jint *)keys);
	for (jsize i = 0; i < n; i++) {
		if (keys[i] >= FP_MAX_ROUTERS) {
			free(keys);
			free(sums);
			throw_io(env, "router number beyond the fast path's counters", EINVAL);
			return NULL;
		}
	}
	int err = sum_percpu(bpf_map__fd(fp->skel->maps.forwarded), fp->ncpus, keys, n, sums);
	jlongArray a = NULL;
	if (err)
		throw_io(env, "reading the forwarded counters", err);
	else if ((a = (*env)->NewLongArray(env, n)))
		(*env)->SetLongArrayRegion(env, a, 0, n, (jlong *)sums);
	free(keys);
	free(sums);
	return a;
}

/*
 * Enters the broadcasts (sources[i], ids[i]) the router took itself in the program's duplicate
 * window, in one batch update (one element at a time where the kernel has no batch update for the
 * map). Returns how many were entered.
 */
JNIEXPORT jint JNICALL Java_io_bdrp_router_fastpath_EbpfNative_markBroadcasts(JNIEnv *env,
									   jclass cls, jlong h,
									   jintArray sources,
									   jlongArray ids, jint n)
{
	struct fastpath *fp = fp_of(h);
	if (n <= 0)
		return 0;
	if (n > (*env)->GetArrayLength(env, sources) || n > (*env)->GetArrayLength(env, ids)) {
		throw_io(env, "marking broadcasts: fewer sources or ids than the count", EINVAL);
		return 0;
	}
	struct bcast_key *keys = calloc(n, sizeof(*keys));
	__u8 *values = malloc(n);
	jint *src = malloc(n * sizeof(jint));
	jlong *id = malloc(n * sizeof(jlong));
	if (!keys || !values || !src || !id) {
		free(keys);
		free(values);
		free(src);
		free(id);
		throw_io(env, "allocating broadcast marks", ENOMEM);
		return 0;
	}
	(*env)->GetIntArrayRegion(env, sources, 0, n, src);
	(*env)->GetLongArrayRegion(env, ids, 0, n, id);
	for (jint i = 0; i < n; i++) {
		keys[i].id = htobe64((__u64)id[i]);
		keys[i].source = (__u32)src[i];
		values[i] = 1;
	}
	int fd = bpf_map__fd(fp->skel->maps.bcast_seen);
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	__u32 count = (__u32)n;
	int err = bpf_map_update_batch(fd, keys, values, &count, &opts);
	jint done = err ? 0 : (jint)count;
	if (err) {
		for (jint i = 0; i < n; i++) {
			err = bpf_map_update_elem(fd, &keys[i], &values[i], BPF_ANY);
			if (err)
				break;
			done++;
		}
	}
	free(keys);
	free(values);
	free(src);
	free(id);
	if (err && done < n)
		throw_io(env, "marking broadcasts in the kernel's duplicate window", err);
	return done;
}

JNIEXPORT jlong JNICALL Java_io_bdrp_router_fastpath_EbpfNative_testRun(JNIEnv *env, jclass cls,
								     jlong h, jbyteArray packet,
								     jint ifindex, jbyteArray out)
{
	struct fastpath *fp = fp_of(h);
	jsize in_len = (*env)->GetArrayLength(env, packet);
	jsize out_cap = (*env)->GetArrayLength(env, out);
	void *in = malloc(in_len > 0 ? in_len : 1);
	void *o = malloc(out_cap > 0 ? out_cap : 1);
	if (!in || !o) {
		free(in);
		free(o);
		throw_io(env, "allocating packet buffers", ENOMEM);
		return 0;
	}
	(*env)->GetByteArrayRegion(env, packet, 0, in_len, (jbyte *)in);
	struct __sk_buff ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.ifindex = ifindex;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = in_len, .data_out = o,
		    .data_size_out = out_cap, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(fp->skel->progs.bdrp_ingress), &opts);
	jlong result = 0;
	if (err) {
		throw_io(env, "running the program on a packet", errno);
	} else {
		(*env)->SetByteArrayRegion(env, out, 0, opts.data_size_out, (jbyte *)o);
		result = ((jlong)(__s32)opts.retval << 32) | (jlong)opts.data_size_out;
	}
	free(in);
	free(o);
	return result;
}

JNIEXPORT void JNICALL Java_io_bdrp_router_fastpath_EbpfNative_close(JNIEnv *env, jclass cls,
								  jlong h)
{
	struct fastpath *fp = fp_of(h);
	if (!fp)
		return;
	bdrp_tc_bpf__destroy(fp->skel);
	free(fp);
}

JNIEXPORT void JNICALL Java_io_bdrp_router_fastpath_EbpfNative_enterNetworkNamespace(
	JNIEnv *env, jclass cls, jstring path)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p)
		return;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	if (fd >= 0 && setns(fd, CLONE_NEWNET))
		err = errno;
	if (fd >= 0)
		close(fd);
	char what[512];
	snprintf(what, sizeof(what), "entering network namespace %s", p);
	(*env)->ReleaseStringUTFChars(env, path, p);
	if (err)
		throw_io(env, what, err);
}
