#!/bin/sh
# Stands for a suite that a meson option turned off, so that it shows up as skipped (exit 77)
# instead of silently not existing; scripts/test-summary fails CI on it unless that suite ran
# in another build given to it.
#   option-disabled.sh OPTION SUITE
echo "suite '$2' is not built: meson option $1 is off (configure with -D$1=true)"
exit 77
