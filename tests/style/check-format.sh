#!/bin/sh
# Fails, listing the files, when any C source or header of the project differs from what
# clang-format makes of it with the repository's .clang-format.
set -eu
top=$1
cd "$top"
files=$(git ls-files -- 'src/*.c' 'src/*.h' 'src/*.h.in' 'tests/*.c' 2>/dev/null ||
	find src tests -name '*.[ch]')
[ -n "$files" ] || { echo "no C files found under $top"; exit 1; }
bad=0
for f in $files; do
	case "$f" in *.h.in) continue ;; esac
	if ! "${CLANG_FORMAT:-clang-format}" --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f (run: clang-format -i $f)"
		bad=1
	fi
done
[ "$bad" = 0 ] && echo "all $(echo "$files" | wc -w) C files formatted"
exit "$bad"
