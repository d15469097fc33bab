#!/usr/bin/env bash
# Prints the --set argument that names every layer scheme of the scheme registry, as
# `nvsvp presets` lists them ("schemes=[deepep,deepep-ll,...]"), so that the tests of every scheme
# cover a new scheme without being edited. With --within-partitions: only the schemes that run
# within a partition (those that need no dynamic multicast objects in the switch).
# usage: every_scheme.sh NVSVP [--within-partitions]
set -euo pipefail
nvsvp=$1
filter=${2:-}
"$nvsvp" presets | awk -v filter="$filter" '
  $1 == "scheme" && !(filter == "--within-partitions" && $3 == "multicast:dynamic") {
    names = names sep $2; sep = ","
  }
  END {
    if (names == "") { print "every_scheme.sh: nvsvp presets listed no scheme" > "/dev/stderr"; exit 1 }
    print "schemes=[" names "]"
  }'
