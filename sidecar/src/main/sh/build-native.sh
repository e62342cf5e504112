#!/usr/bin/env bash
# Builds the sidecar's native code into OUT (the jar's META-INF/native):
#  - the shared ring (ring.c) and its JNI library libbdrp_ring.so (cc and jni.h), its property
#    test WORK/ring_test, and, with libibverbs' headers, the RDMA backend libbdrp_rdma.so;
#  - the kernel fast path: the TC program (clang -target bpf), its libbpf skeleton (bpftool) and
#    the JNI library that embeds it (cc, libbpf, libelf, zlib), libbdrp_fastpath.so, and
#    WORK/tc_bench, which times builds of the program with BPF_PROG_TEST_RUN (docs/benchmarks.md).
# What cannot be built is left out with the reason in OUT/RING_UNAVAILABLE, OUT/RDMA_UNAVAILABLE or
# OUT/UNAVAILABLE, which the router logs when asked for it; the build still passes.
#   build-native.sh SRC_DIR OUT_DIR WORK_DIR JAVA_HOME [TEST_SRC_DIR]
set -uo pipefail
src="$1" out="$2" work="$3" jdk="$4" test_src="${5:-$1/../../test/c}"
mkdir -p "$out" "$work"
rm -f "$out/UNAVAILABLE" "$out/RING_UNAVAILABLE" "$out/RDMA_UNAVAILABLE" \
  "$out/libbdrp_fastpath.so" "$out/libbdrp_ring.so" "$out/libbdrp_rdma.so" "$work/ring_test" \
  "$work/tc_bench"

ring() {
  if [ "$(uname -s)" != Linux ]; then echo "not Linux"; return; fi
  command -v cc >/dev/null 2>&1 || { echo "cc not found (Debian: apt-get install gcc)"; return; }
  [ -e "$jdk/include/jni.h" ] || { echo "jni.h not found under $jdk/include"; return; }
  cc -O2 -g -Wall -std=gnu11 -fPIC -shared -I"$src" -I"$jdk/include" -I"$jdk/include/linux" \
    "$src/ring.c" "$src/ring_jni.c" -o "$out/libbdrp_ring.so" || { echo "cc failed on ring.c"; return; }
  cc -O2 -g -Wall -std=gnu11 -I"$src" "$src/ring.c" "$test_src/ring_test.c" -o "$work/ring_test" \
    -lpthread || { echo "cc failed on ring_test.c"; return; }
  if [ -e /usr/include/infiniband/verbs.h ]; then
    cc -O2 -g -Wall -std=gnu11 -fPIC -shared -I"$src" -I"$jdk/include" -I"$jdk/include/linux" \
      "$src/ring.c" "$src/rdma.c" -o "$out/libbdrp_rdma.so" -libverbs \
      || printf '%s\n' "cc failed on rdma.c" >"$out/RDMA_UNAVAILABLE"
  else
    printf '%s\n' "the sidecar was built without libibverbs headers (Debian: libibverbs-dev)" \
      >"$out/RDMA_UNAVAILABLE"
  fi
}
why="$(ring)"
if [ -n "$why" ]; then
  echo "sidecar: shared-memory ring not built: $why" >&2
  printf '%s\n' "the sidecar was built without the shared-memory ring: $why" >"$out/RING_UNAVAILABLE"
fi

unavailable() {
  echo "sidecar: kernel fast path not built: $*" >&2
  printf '%s\n' "the sidecar was built without the kernel fast path: $*" >"$out/UNAVAILABLE"
  exit 0
}
if [ "$(uname -s)" != Linux ]; then unavailable "not Linux"; fi
for tool in clang bpftool cc; do
  command -v "$tool" >/dev/null 2>&1 || unavailable "$tool not found (Debian: apt-get install clang bpftool libbpf-dev libelf-dev zlib1g-dev)"
done
multiarch="$(cc -print-multiarch 2>/dev/null || true)"
[ -e /usr/include/bpf/bpf_helpers.h ] || unavailable "libbpf headers not found (Debian: libbpf-dev)"
[ -e /usr/include/libelf.h ] || [ -e /usr/include/elfutils/libelf.h ] || unavailable "libelf headers not found (Debian: libelf-dev)"
[ -e "$jdk/include/jni.h" ] || unavailable "jni.h not found under $jdk/include"
set -e
clang -O2 -g -Wall -target bpf -D__TARGET_ARCH_x86 ${multiarch:+-I/usr/include/$multiarch} \
  -c "$src/bdrp_tc.bpf.c" -o "$work/bdrp_tc.bpf.o"
bpftool gen skeleton "$work/bdrp_tc.bpf.o" name bdrp_tc_bpf >"$work/bdrp_tc.skel.h"
cc -O2 -g -Wall -fPIC -shared -I"$work" -I"$src" -I"$jdk/include" -I"$jdk/include/linux" \
  "$src/fastpath_jni.c" -o "$out/libbdrp_fastpath.so" -lbpf -lelf -lz
cc -O2 -g -Wall -std=gnu11 -I"$src" "$test_src/tc_bench.c" -o "$work/tc_bench" -lbpf -lelf -lz
