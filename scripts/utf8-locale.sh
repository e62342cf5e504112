# Sourced by ./bdrp. The JVM decodes its command line with the character set of the locale's
# LC_CTYPE (sun.jnu.encoding), whatever file.encoding says: under a locale that is not UTF-8, such
# as LC_ALL=C, a non-ASCII argument (a predicate's "é") reaches main() as U+FFFD.
#
# bdrp_utf8_locale makes the character type UTF-8 for the commands run after it, when it is not
# already and the system has a UTF-8 locale (C.UTF-8 first), and changes nothing else: when LC_ALL
# is set it is replaced by the same value in every other LC_* category, so messages, collation,
# numbers and dates stay as the user chose. Without a UTF-8 locale it leaves the environment alone
# and java refuses an argument it could not decode.

bdrp_utf8_locale() {
  command -v locale >/dev/null 2>&1 || return 0
  case "$(locale charmap 2>/dev/null)" in
    UTF-8 | utf8) return 0 ;;
  esac
  local candidate chosen="" category
  for candidate in C.UTF-8 C.utf8 $(locale -a 2>/dev/null | grep -i -E '\.utf-?8$'); do
    if [ "$(LC_ALL="$candidate" locale charmap 2>/dev/null)" = UTF-8 ]; then
      chosen="$candidate"
      break
    fi
  done
  [ -n "$chosen" ] || return 0
  if [ -n "${LC_ALL:-}" ]; then
    for category in LC_NUMERIC LC_TIME LC_COLLATE LC_MONETARY LC_MESSAGES LC_PAPER LC_NAME \
      LC_ADDRESS LC_TELEPHONE LC_MEASUREMENT LC_IDENTIFICATION; do
      export "$category=$LC_ALL"
    done
    unset LC_ALL
  fi
  export LC_CTYPE="$chosen"
}
