#!/usr/bin/env bash
# Builds the kernel fast path: the TC program (clang -target bpf), its libbpf skeleton (bpftool)
# and the JNI library that embeds it (cc, libbpf, libelf, zlib), into OUT/libbdrp_fastpath.so.
# Without the toolchain it builds nothing and writes OUT/UNAVAILABLE with the reason, which the
# router logs when asked for the fast path; the build still passes.
#   build-native.sh SRC_DIR OUT_DIR WORK_DIR JAVA_HOME
set -uo pipefail
src="$1" out="$2" work="$3" jdk="$4"
mkdir -p "$out" "$work"
rm -f "$out/UNAVAILABLE" "$out/libbdrp_fastpath.so"
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
