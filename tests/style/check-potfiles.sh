#!/bin/sh
# Fails when a source file marks text for translation but is missing from po/POTFILES.in, or
# when POTFILES.in names a file that does not exist.
set -eu
cd "$1"
bad=0
marked=$(grep -rlE '(^|[^A-Za-z0-9_])N?_\("' src | sort)
for f in $marked; do
	grep -qxF "$f" po/POTFILES.in || { echo "missing from po/POTFILES.in: $f"; bad=1; }
done
while read -r f; do
	case "$f" in ''|'#'*) continue ;; esac
	[ -f "$f" ] || { echo "po/POTFILES.in names a missing file: $f"; bad=1; }
done < po/POTFILES.in
[ "$bad" = 0 ] && echo "po/POTFILES.in lists all $(echo "$marked" | wc -w) files with translatable text"
exit "$bad"
