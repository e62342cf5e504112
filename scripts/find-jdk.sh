# Sourced by ./bdrp and ./run-tests. Finds a JDK whose major version is at least 21
# and exports JAVA_HOME for it. Looks at, in order: $JAVA_HOME, `java` on PATH, then
# every JDK under /usr/lib/jvm (newest first). Fails with a message naming what it saw.

bdrp_java_major() {
  # Prints the major version of the java binary given as $1, or nothing.
  "$1" -XshowSettings:properties -version 2>&1 \
    | awk -F'= ' '/java.specification.version/ {print $2; exit}' \
    | awk -F. '{ if ($1 == "1") print $2; else print $1 }'
}

bdrp_find_jdk() {
  local min=21 candidates=() seen=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    c=$(readlink -f "$(command -v java)")
    candidates+=("${c%/bin/java}")
  fi
  if [ -d /usr/lib/jvm ]; then
    while IFS= read -r c; do candidates+=("$c"); done \
      < <(find /usr/lib/jvm -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort -rV)
  fi
  for c in "${candidates[@]}"; do
    [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    major=$(bdrp_java_major "$c/bin/java")
    seen+=("$c (${major:-unknown})")
    if [ -n "$major" ] && [ "$major" -ge "$min" ]; then
      export JAVA_HOME="$c"
      export PATH="$JAVA_HOME/bin:$PATH"
      # Maven 3.8's own libraries use sun.misc.Unsafe, which JDK 24+ warns about on every run.
      if [ "$major" -ge 24 ]; then
        case "${MAVEN_OPTS:-}" in
          *sun-misc-unsafe-memory-access*) ;;
          *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" ;;
        esac
      fi
      return 0
    fi
  done
  echo "bdrp: no JDK >= $min found. Looked at: ${seen[*]:-nothing}." >&2
  echo "bdrp: install one (e.g. apt-get install openjdk-21-jdk-headless) or set JAVA_HOME." >&2
  return 1
}
