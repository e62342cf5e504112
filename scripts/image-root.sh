#!/usr/bin/env bash
# The files the bdrp container image holds besides bdrp's own classes and libraries (which Jib
# adds): a Java runtime linked for bdrp with jlink from the JDK that builds it, the C libraries
# that runtime and the sidecar's JNI libraries load (with the dynamic loader), taken from this
# system, and an empty /tmp. The image starts from nothing (no base image, no registry).
# Usage: scripts/image-root.sh OUT_DIR [SIDECAR_NATIVE_DIR]
set -euo pipefail
out="${1:?usage: image-root.sh OUT_DIR [SIDECAR_NATIVE_DIR]}"
native="${2:-}"
java_home="${JAVA_HOME:?JAVA_HOME must name a JDK >= 21}"
for tool in jlink java; do
  [ -x "$java_home/bin/$tool" ] || { echo "image-root: $java_home/bin/$tool not found" >&2; exit 1; }
done
command -v ldd >/dev/null || { echo "image-root: ldd not found (libc-bin)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/opt" "$out/tmp"
# The modules bdrp uses (jdeps --print-module-deps on bdrp.jar; java.net.http and jdk.httpserver
# for bdrp console), jdk.crypto.ec where the JDK still has it apart (TLS with EC keys on JDK 21).
modules=java.base,java.desktop,java.naming,java.net.http,java.sql,jdk.httpserver,jdk.jfr,jdk.management,jdk.unsupported
if "$java_home/bin/java" --list-modules | grep -q '^jdk\.crypto\.ec@'; then
  modules+=,jdk.crypto.ec
fi
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages \
  --output "$out/opt/java"

# The image is headless: without the X11, splash-screen and sound back ends (and their libraries).
rm -f "$out"/opt/java/lib/{libawt_xawt,libsplashscreen,libjawt,libjsound}.so

# Every shared library those binaries load, at the path the loader looks for it; not the RDMA
# backend's (verbs need a device and its provider libraries, which a container gets from its host).
libs="$(mktemp)"
trap 'rm -f "$libs"' EXIT
{
  find "$out/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper \)
  if [ -n "$native" ] && [ -d "$native" ]; then
    find "$native" -type f -name '*.so' ! -name libbdrp_rdma.so
  fi
} | while read -r f; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | grep -v "^$out/" | sort -u > "$libs"
while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done < "$libs"
echo "image-root: Java runtime ($modules) and $(wc -l < "$libs") C libraries in $out" >&2
